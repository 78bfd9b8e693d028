// Driving the Test Inbox UI in a real workbench (code-server in headless Chromium, see
// scripts/integration/workbench.ts): the activity bar entry, tree rows by their accessible
// labels, the message view's nested webview frames, the clipboard. Shared by the e2e tests,
// scripts/screenshots.ts and bench/arrival.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import type { Workbench } from '../../scripts/integration/workbench';

/** The workbench, the extension host and a first connection on a loaded 2-core machine. */
export const UI_TIMEOUT_MS = 60_000;
/** Where failed runs keep a screenshot and the session's logs (gitignored). */
export const E2E_OUTPUT = path.resolve(__dirname, '..', '..', '.test-output', 'e2e');

const REPO = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };
/** The extension as users install it, written by `npm run package` (scripts/package.mjs). */
export const VSIX = path.join(REPO, `${manifest.name}-${manifest.version}.vsix`);

/** How long one palette attempt waits for the command's row (commands register as the host starts). */
const PALETTE_ATTEMPT_MS = 8_000;

/** Runs a command from the Command Palette by its title, as a person does (F1, type, pick). */
export async function runFromPalette(page: Page, title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
  for (const deadline = Date.now() + UI_TIMEOUT_MS; ; ) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    try {
      await input.waitFor({ timeout: PALETTE_ATTEMPT_MS });
      await input.fill(`>${title}`, { timeout: PALETTE_ATTEMPT_MS });
      await row.waitFor({ timeout: PALETTE_ATTEMPT_MS });
      await row.click();
      return;
    } catch (err) {
      // Early in a session the command may not be registered yet, or the palette closed as it
      // opened (the first rows of a view just shown take the focus once): close and ask again.
      if (Date.now() > deadline) throw err;
    }
  }
}

/** Escapes text for use inside a RegExp. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Opens the Test Inbox view container and waits until its tree (or welcome view) is shown; no-op when it is shown already. */
export async function openTestInboxView(page: Page): Promise<void> {
  const title = page.locator('.sidebar .title-label').filter({ hasText: /Test Inbox/i });
  // A click on the entry of the container that is shown hides the side bar.
  if (await title.isVisible()) return;
  // The whole activity bar entry: its unread badge ("Test Inbox - 3 unread messages") sits over a corner of the icon.
  await page.locator('.activitybar .action-item').filter({ has: page.locator('[aria-label^="Test Inbox"]') }).first().click({ timeout: UI_TIMEOUT_MS });
  await title.waitFor({ timeout: UI_TIMEOUT_MS });
}

/** A row of the Test Inbox tree by its accessible label (src/extension/tree/present.ts accessibilityLabel). */
export function treeRow(page: Page, label: RegExp): Locator {
  return page.locator('.sidebar').getByRole('treeitem', { name: label });
}

/** How long a click on a row gets to expand it before it is clicked again. */
const EXPAND_CLICK_WAIT_MS = 5_000;

/**
 * Expands a collapsed tree row (an inbox) by clicking it; no-op when already expanded. A row the
 * tree redraws while it is clicked (mail arriving) can lose the click, so a click that did not
 * expand it is repeated until UI_TIMEOUT_MS; a row that never expands still fails.
 */
export async function expandRow(row: Locator): Promise<void> {
  await row.waitFor({ timeout: UI_TIMEOUT_MS });
  const expanded = row.and(row.page().locator('[aria-expanded="true"]'));
  const deadline = Date.now() + UI_TIMEOUT_MS;
  for (;;) {
    if ((await row.getAttribute('aria-expanded')) === 'true') return;
    await row.click();
    const wait = Math.min(EXPAND_CLICK_WAIT_MS, deadline - Date.now());
    if (wait <= 0) break;
    if (await expanded.waitFor({ timeout: wait }).then(() => true, () => false)) return;
  }
  await expanded.waitFor({ timeout: 1 });
}

/** The SMTP port the status bar shows ("Test Inbox: SMTP <port>") once the local server is ready. */
export async function statusBarSmtpPort(page: Page): Promise<number> {
  const item = page.locator('.statusbar-item').filter({ hasText: /Test Inbox: SMTP \d+/ }).first();
  await item.waitFor({ timeout: UI_TIMEOUT_MS });
  const m = /SMTP (\d+)/.exec(await item.innerText());
  if (!m) throw new Error(`unexpected status bar text: ${await item.innerText()}`);
  return Number(m[1]);
}

/**
 * The document inside the message view: a webview is an outer iframe (class `webview`) whose
 * content lives in its inner `#active-frame`. With several webviews, the one holding `title`.
 */
export async function messageView(page: Page, subject: string | RegExp): Promise<FrameLocator> {
  const outer = page.locator('iframe.webview');
  const deadline = Date.now() + UI_TIMEOUT_MS;
  for (;;) {
    const count = await outer.count();
    for (let i = count - 1; i >= 0; i--) {
      const frame = page.frameLocator('iframe.webview').nth(i).frameLocator('#active-frame');
      const found = await frame.locator('h1.subject', { hasText: subject }).count().catch(() => 0);
      if (found > 0) return frame;
    }
    if (Date.now() > deadline) throw new Error(`no message view shows ${String(subject)} within ${UI_TIMEOUT_MS / 1000} s`);
    await page.waitForTimeout(200);
  }
}

/** Lets the page use the async clipboard API (code-server serves the workbench from this origin). */
export async function allowClipboard(wb: Workbench): Promise<void> {
  await wb.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${wb.port}` });
}

/** The clipboard's text as the workbench page reads it. */
export async function readClipboard(page: Page): Promise<string> {
  await page.bringToFront();
  return page.evaluate(() => navigator.clipboard.readText());
}

/** Ends a test's workbench and server; a failed test first keeps a screenshot and the session's logs. */
export async function endSession(test: Mocha.Test | undefined, wb: Workbench | undefined, server?: { stop(): Promise<void> }): Promise<void> {
  let kept: string | undefined;
  if (test?.state === 'failed') kept = await keepFailure(wb, test.title);
  await wb?.stop(kept ? { keepLogsIn: kept } : undefined);
  await server?.stop();
  if (kept) process.stderr.write(`e2e: screenshot and logs of the failure kept in ${kept}\n`);
}

/**
 * For a session that several tests share (its `afterEach`): keeps a screenshot of a failed
 * test and says where; the session's logs are kept when it ends (endSession).
 */
export async function keepFailedTest(test: Mocha.Test | undefined, wb: Workbench | undefined): Promise<void> {
  if (test?.state === 'failed') process.stderr.write(`e2e: screenshot of the failure kept in ${await keepFailure(wb, test.title)}\n`);
}

/** Keeps a screenshot and the session's logs of a failed test under .test-output/e2e/<time>-<name>/. */
export async function keepFailure(wb: Workbench | undefined, name: string): Promise<string> {
  const dir = path.join(E2E_OUTPUT, `${new Date().toISOString().replace(/[:.]/g, '-')}-${name.replace(/[^\w-]+/g, '_').slice(0, 60)}`);
  fs.mkdirSync(dir, { recursive: true });
  if (wb) await wb.page.screenshot({ path: path.join(dir, 'failure.png') }).catch(() => {});
  return dir;
}
