// README screenshots from the real workbench (code-server in headless Chromium, see
// scripts/integration/workbench.ts): a local server seeded with the `npm start` samples,
// the Test Inbox tree and a message view, in the default light and dark themes, and an SMS.
//
//   npm run screenshots            writes media/screenshots/*.png (builds first)
//   npm run screenshots -- DIR     writes them into DIR instead
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { REPO_ROOT, SAMPLES, seedSamples, startDemoServer, type DemoServer } from './demoServer';
import { startWorkbench } from './integration/workbench';
import { escapeRegExp, expandRow, keepFailure, messageView, openTestInboxView, treeRow, UI_TIMEOUT_MS } from '../test/e2e/ui';

/** Wide enough for a readable tree beside the message view, small enough for a README. */
const VIEWPORT = { width: 1400, height: 900 };
/** Side bar width in the shots: the message rows' subjects and senders fit. */
const SIDEBAR_WIDTH = 400;
/** VS Code's default themes. */
const THEMES = { light: 'Default Light Modern', dark: 'Default Dark Modern' } as const;
const DEFAULT_OUT_DIR = path.join(REPO_ROOT, 'media', 'screenshots');

interface Shot {
  file: string;
  theme: keyof typeof THEMES;
  /** Opens what the shot shows. */
  show(page: Page): Promise<void>;
}

async function showEmail(page: Page): Promise<void> {
  await expandRow(treeRow(page, new RegExp(`^SMS inbox ${SAMPLES.smsInbox}`)));
  await expandRow(treeRow(page, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
  await treeRow(page, new RegExp(escapeRegExp(SAMPLES.reportSubject))).waitFor({ timeout: UI_TIMEOUT_MS });
  await treeRow(page, new RegExp(escapeRegExp(SAMPLES.signupSubject))).click({ timeout: UI_TIMEOUT_MS });
  const view = await messageView(page, SAMPLES.signupSubject);
  await view.locator('.code-box .code-value').waitFor({ timeout: UI_TIMEOUT_MS });
}

async function showSms(page: Page): Promise<void> {
  await expandRow(treeRow(page, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
  await expandRow(treeRow(page, new RegExp(`^SMS inbox ${SAMPLES.smsInbox}`)));
  await treeRow(page, /SMS from 15555550100/).click({ timeout: UI_TIMEOUT_MS });
  const view = await messageView(page, /SMS|15555550100/);
  await view.locator('.code-box .code-value').waitFor({ timeout: UI_TIMEOUT_MS });
}

const SHOTS: Shot[] = [
  { file: 'tree-email-light.png', theme: 'light', show: showEmail },
  { file: 'tree-email-dark.png', theme: 'dark', show: showEmail },
  { file: 'sms-dark.png', theme: 'dark', show: showSms },
];

/** Drags the sash at the side bar's right edge so the tree gets SIDEBAR_WIDTH pixels. */
async function widenSidebar(page: Page): Promise<void> {
  const sidebar = await page.locator('.part.sidebar').boundingBox();
  if (!sidebar) return;
  const edge = sidebar.x + sidebar.width;
  const sashes = await page.locator('.monaco-sash.vertical').evaluateAll((els) =>
    els.map((e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2, height: r.height };
    }),
  );
  const sash = sashes.filter((s) => s.height > 100 && Math.abs(s.x - edge) < 8)[0];
  if (!sash) throw new Error(`no sash at the side bar's edge (x ${edge})`);
  await page.mouse.move(sash.x, sash.y);
  await page.mouse.down();
  await page.mouse.move(sash.x + (sidebar.x + SIDEBAR_WIDTH - edge), sash.y, { steps: 8 });
  await page.mouse.up();
}

async function takeShot(demo: DemoServer, shot: Shot, outDir: string): Promise<string> {
  const wb = await startWorkbench({
    viewport: VIEWPORT,
    settings: { ...demo.extensionSettings, 'workbench.colorTheme': THEMES[shot.theme], 'window.commandCenter': false },
  });
  let failed = true;
  try {
    const page = wb.page;
    await openTestInboxView(page);
    await widenSidebar(page);
    await shot.show(page);
    // Move the pointer off the tree (no hover highlight) and let fonts and icons settle.
    await page.mouse.move(VIEWPORT.width - 5, VIEWPORT.height / 2);
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    const file = path.join(outDir, shot.file);
    await page.screenshot({ path: file });
    failed = false;
    return file;
  } finally {
    const kept = failed ? await keepFailure(wb, `screenshot-${shot.file}`) : undefined;
    await wb.stop(kept ? { keepLogsIn: kept } : undefined);
    if (kept) process.stderr.write(`[screenshots] logs of the failure kept in ${kept}\n`);
  }
}

async function main(): Promise<void> {
  const outDir = path.resolve(process.argv[2] ?? DEFAULT_OUT_DIR);
  fs.mkdirSync(outDir, { recursive: true });
  const demo = await startDemoServer();
  try {
    await seedSamples(demo);
    for (const shot of SHOTS) {
      const file = await takeShot(demo, shot, outDir);
      process.stdout.write(`[screenshots] wrote ${path.relative(process.cwd(), file)}\n`);
    }
  } finally {
    await demo.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[screenshots] FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
