// Browser-level accessibility audit: the extension installed from its VSIX in the real
// workbench, in four themes, switched live in one session. In each, axe-core (injected from this test through Playwright,
// never shipped) runs inside the message view's frame for an HTML email with its HTML, Links,
// Attachments and Headers tabs, and for an SMS; any serious or critical violation fails. The
// email's own document (the sender's HTML in a sandboxed frame without scripts) is left out.
// The same sessions check the code box's contrast, the live regions, reduced motion, names,
// the tree's spoken labels and menus, the HTML sheet in High Contrast, the theme-colours
// setting, and the first focus of the Inboxes view. One screenshot per theme is kept in
// .test-output/e2e/.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { SAMPLES, seedSamples, sendMail, startDemoServer, type DemoServer } from '../../scripts/demoServer';
import { escapeRegExp, expandRow, endSession, keepFailedTest, openTestInboxView, runFromPalette, treeRow, E2E_OUTPUT, UI_TIMEOUT_MS, VSIX } from './ui';

/** One theme on a busy 2-core machine: the session's start (in the first), the switch, four views audited. */
const TEST_TIMEOUT_MS = 300_000;
/** WCAG AA for normal text: what the code and its label must reach on their surface. */
const MIN_TEXT_CONTRAST = 4.5;
/** axe-core impacts that fail the audit. */
const FAILING_IMPACTS = new Set(['serious', 'critical']);

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Page-side helpers, plain JavaScript (evaluated code must not carry a TypeScript helper). */
const CONTRAST_SCRIPT = String.raw`
(() => {
  const parse = (c) => { const m = /rgba?\(([^)]+)\)/.exec(c); if (!m) return [0, 0, 0, 0]; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, under) => { const a = top[3]; return [top[0] * a + under[0] * (1 - a), top[1] * a + under[1] * (1 - a), top[2] * a + under[2] * (1 - a), 1]; };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
    let c = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c);
    return c;
  };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  window.__contrast = (selector) => {
    const el = document.querySelector(selector);
    if (!el) return -1;
    const bg = background(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const a = lum(fg), b = lum(bg);
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  };
})();
`;

/** The view's document showing `title` in its heading (the inner frame of a webview). */
async function viewFrame(page: Page, title: string | RegExp): Promise<Frame> {
  for (const deadline = Date.now() + UI_TIMEOUT_MS; ; ) {
    for (const f of page.frames()) {
      const n = await f.locator('h1.subject', { hasText: title }).count().catch(() => 0);
      if (n > 0) return f;
    }
    if (Date.now() > deadline) throw new Error(`no message view shows ${String(title)}`);
    await page.waitForTimeout(200);
  }
}

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core in the view's document, the email's sandboxed frame left out; returns serious and critical violations. */
async function audit(frame: Frame, where: string): Promise<string[]> {
  if (!(await frame.evaluate('typeof window.axe === "object"'))) await frame.evaluate(AXE_SOURCE);
  const violations = (await frame.evaluate(`axe.run({ exclude: [['iframe.html-frame']] }, { iframes: false, resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary) })))`)) as Violation[];
  return violations.filter((v) => FAILING_IMPACTS.has(v.impact ?? '')).map((v) => `${where}: ${v.id} (${v.impact}) ${v.help}\n    ${v.nodes.join('\n    ')}`);
}

async function selectTab(frame: Frame, name: RegExp): Promise<void> {
  const tab = frame.getByRole('tab', { name });
  await tab.click();
  await frame.locator('[role=tab][aria-selected=true]', { hasText: name }).waitFor({ timeout: UI_TIMEOUT_MS });
}

/** The live regions of the view: only the status line may be one. */
async function liveRegions(frame: Frame): Promise<string[]> {
  return (await frame.evaluate(
    `[...document.querySelectorAll('[aria-live], [role=status], [role=alert], [role=log], [role=marquee], [role=timer], output')].map((e) => e.id || e.className || e.localName)`,
  )) as string[];
}

/** The themes in the order the session shows them; `body` is the class VS Code puts on a webview's body in it. */
const THEMES = [
  { name: 'Default Light Modern', hc: false, themeSetting: false, body: 'body.vscode-light' },
  { name: 'Default Dark Modern', hc: false, themeSetting: false, body: 'body.vscode-dark' },
  { name: 'Default High Contrast', hc: true, themeSetting: true, body: 'body.vscode-high-contrast:not(.vscode-high-contrast-light)' },
  { name: 'Default High Contrast Light', hc: true, themeSetting: false, body: 'body.vscode-high-contrast-light' },
] as const;

const REPORT_LINK = 'https://acme.test/reports/11';
const BACKGROUND_SUBJECT = 'A newsletter with its own background';

describe('e2e: accessibility of the views in four themes (axe-core)', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let demo: DemoServer | undefined;

  // One session for the four themes: it opens in the first and switches to each next one live,
  // as a person does in settings.json (a workbench start is about 20 s of CPU on this machine).
  before(async () => {
    demo = await startDemoServer();
    await seedSamples(demo);
    await sendMail(demo, {
      from: 'Acme Newsletter <news@acme.test>',
      to: `${SAMPLES.emailInbox}@${SAMPLES.domain}`,
      subject: BACKGROUND_SUBJECT,
      text: 'News.',
      html: '<table bgcolor="#f0f0f0" width="100%"><tr><td><p>News.</p></td></tr></table>',
    });
    wb = await startWorkbench({ vsix: VSIX, settings: { ...demo.extensionSettings, 'workbench.colorTheme': THEMES[0].name, 'testInbox.themeSimpleMail': THEMES[0].themeSetting } });
  });

  afterEach(async function () {
    await keepFailedTest(this.currentTest, wb);
  });

  after(async () => {
    await endSession(undefined, wb, demo);
    wb = undefined;
    demo = undefined;
  });

  for (const theme of THEMES) {
    it(`${theme.name}: no serious or critical axe violation; contrast, live regions, motion, names, tree labels`, async () => {
      if (!wb) throw new Error('the session did not start');
      const page = wb.page;
      const failures: string[] = [];
      wb.updateSettings({ 'workbench.colorTheme': theme.name, 'testInbox.themeSimpleMail': theme.themeSetting });

      if (theme === THEMES[0]) {
        // First focus: the view focused from the palette before the extension has activated.
        await runFromPalette(page, 'Test Inbox: Focus on Inboxes View');
        const focused = page.locator('.sidebar [role=treeitem].focused');
        await focused.waitFor({ timeout: UI_TIMEOUT_MS });
        assert.ok(await page.evaluate(`!!document.activeElement && !!document.activeElement.closest('.sidebar .monaco-list')`), 'the keyboard is in the Inboxes tree');
        const first = await focused.getAttribute('aria-label');
        await page.keyboard.press('ArrowDown');
        await page.waitForFunction(`(document.querySelector('.sidebar [role=treeitem].focused') || {}).ariaLabel !== ${JSON.stringify(first)}`, undefined, { timeout: UI_TIMEOUT_MS });
      } else {
        await openTestInboxView(page);
      }

      // The tree as heard: a domain counts its inboxes, a row with a code says it; the menus follow.
      await treeRow(page, new RegExp(`^Domain ${escapeRegExp(SAMPLES.domain)}, \\d+ inbox(es)?`)).waitFor({ timeout: UI_TIMEOUT_MS });
      await expandRow(treeRow(page, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
      const signupRow = treeRow(page, new RegExp(`${escapeRegExp(SAMPLES.signupSubject)}, .*, has code ${SAMPLES.signupCode}$`));
      await signupRow.waitFor({ timeout: UI_TIMEOUT_MS });
      const reportRow = treeRow(page, new RegExp(escapeRegExp(SAMPLES.reportSubject)));
      assert.doesNotMatch((await reportRow.getAttribute('aria-label')) ?? '', /has code/, 'a row without a code does not claim one');
      const menu = page.locator('.context-view .monaco-menu');
      // A right-click while the tree still redraws after the expansion can open a menu the redraw closes: open it again then.
      for (let attempt = 1; ; attempt++) {
        await reportRow.click({ button: 'right' });
        try {
          await menu.getByRole('menuitem', { name: /Copy Message Id/i }).waitFor({ timeout: attempt < 3 ? 5_000 : UI_TIMEOUT_MS });
          break;
        } catch (e) {
          if (attempt >= 3) throw e;
          await page.keyboard.press('Escape');
        }
      }
      assert.equal(await menu.getByRole('menuitem', { name: /Copy One-Time Code/ }).count(), 0, 'no Copy One-Time Code on a row without a code');
      await page.keyboard.press('Escape');
      await signupRow.click({ button: 'right' });
      await menu.getByRole('menuitem', { name: /Copy One-Time Code/ }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.keyboard.press('Escape');

      // The email with a code: the code box is readable, the status line says what loaded.
      await signupRow.click();
      const signup = await viewFrame(page, SAMPLES.signupSubject);
      // The view shows the theme (the switch reaches the workbench, then its webviews).
      await signup.locator(theme.body).waitFor({ timeout: UI_TIMEOUT_MS });
      await signup.locator('#status', { hasText: `Loaded: ${SAMPLES.signupSubject}. It has a verification link.` }).waitFor({ timeout: UI_TIMEOUT_MS });
      // The verification link is marked in words a screen reader hears, with named buttons.
      await signup.getByRole('region', { name: 'Verification link' }).getByRole('button', { name: 'Copy link: verification link' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await signup.getByRole('button', { name: `Open verification link ${SAMPLES.signupLink}` }).waitFor({ timeout: UI_TIMEOUT_MS });
      await signup.evaluate(CONTRAST_SCRIPT);
      for (const part of ['.code-box .code-value', '.code-box .code-label', '.verify-box .code-label', '.verify-box .verify-value']) {
        const ratio = (await signup.evaluate(`window.__contrast(${JSON.stringify(part)})`)) as number;
        assert.ok(ratio >= MIN_TEXT_CONTRAST, `${theme.name}: ${part} contrast ${ratio.toFixed(2)}:1 is below ${MIN_TEXT_CONTRAST}:1`);
      }
      assert.deepEqual(await liveRegions(signup), ['status'], 'only the status line is a live region');
      failures.push(...(await audit(signup, `${theme.name}, email with a code`)));
      // The setting reaches the extension, which draws the open view again: wait for that, then check.
      await signup.locator(`iframe.html-frame${theme.themeSetting ? '.themed' : ':not(.themed)'}`).waitFor({ timeout: UI_TIMEOUT_MS });
      const sheet = signup.locator('iframe.html-frame');
      assert.equal(await sheet.evaluate((e) => e.classList.contains('themed')), theme.themeSetting, 'simple mail follows the theme only with the setting');
      if (theme.themeSetting) assert.match((await sheet.getAttribute('srcdoc')) ?? '', /color-scheme:dark/, 'the themed sheet is dark in High Contrast (dark)');
      // The theme's screenshot: the code box and the email's sheet.
      fs.mkdirSync(E2E_OUTPUT, { recursive: true });
      await page.screenshot({ path: path.join(E2E_OUTPUT, `axe-${theme.name.replace(/\W+/g, '-')}.png`) });
      if (theme.hc) {
        const border = (await sheet.evaluate(`(() => { const s = getComputedStyle(document.querySelector('iframe.html-frame')); return [s.borderTopWidth, s.borderTopColor]; })()`)) as [string, string];
        assert.equal(border[0], '2px', 'the HTML sheet has a visible border in High Contrast');
        assert.doesNotMatch(border[1], /rgba\(0, 0, 0, 0\)|transparent/, 'the border has a colour');
      }

      if (theme === THEMES[0]) {
        // The audit can fail: a nameless button put into the view is reported.
        await signup.evaluate(`document.body.append(Object.assign(document.createElement('button'), { id: 'axe-control' }))`);
        assert.match((await audit(signup, 'control')).join('\n'), /button-name \(critical\)/, 'axe-core reports a button without a name');
        await signup.evaluate(`document.getElementById('axe-control').remove()`);
      }

      // A mail with its own background keeps its white sheet, even with the setting.
      await treeRow(page, new RegExp(escapeRegExp(BACKGROUND_SUBJECT))).click();
      const newsletter = await viewFrame(page, BACKGROUND_SUBJECT);
      assert.equal(await newsletter.locator('iframe.html-frame').evaluate((e) => e.classList.contains('themed')), false, 'a mail with its own background keeps its sheet');

      // The loading state, as the host posts it: no second live region, and the spinner
      // stands still under prefers-reduced-motion: reduce.
      // It carries the view's own origin and a window as its source, as the host's messages do:
      // the view takes messages from nowhere else.
      await newsletter.evaluate(`window.dispatchEvent(new MessageEvent('message', { data: { type: 'loading', id: 'other-1763776000-9' }, origin: self.origin, source: window }))`);
      const spinner = newsletter.locator('.state-box .codicon-modifier-spin');
      await spinner.waitFor({ timeout: UI_TIMEOUT_MS });
      assert.deepEqual(await liveRegions(newsletter), ['status'], 'the loading box is no live region');
      const animation = (): Promise<string> => spinner.evaluate((e) => getComputedStyle(e).animationName);
      await page.emulateMedia({ reducedMotion: 'no-preference' });
      assert.notEqual(await animation(), 'none', 'the spinner spins normally');
      await page.emulateMedia({ reducedMotion: 'reduce' });
      assert.equal(await animation(), 'none', 'the spinner stands still under prefers-reduced-motion: reduce');
      await page.emulateMedia({ reducedMotion: 'no-preference' });

      // The HTML email with a link and an attachment: each tab audited.
      await reportRow.click();
      const report = await viewFrame(page, SAMPLES.reportSubject);
      // The view remembers a message's tab: the first one again, as an earlier theme left Headers.
      await selectTab(report, /^HTML/);
      failures.push(...(await audit(report, `${theme.name}, HTML email`)));
      await selectTab(report, /^Links/);
      await report.getByRole('button', { name: `Open link 'View online' (${REPORT_LINK})` }).waitFor({ timeout: UI_TIMEOUT_MS });
      failures.push(...(await audit(report, `${theme.name}, Links tab`)));
      await selectTab(report, /^Attachments/);
      failures.push(...(await audit(report, `${theme.name}, Attachments tab`)));
      await selectTab(report, /^Headers/);
      failures.push(...(await audit(report, `${theme.name}, Headers tab`)));

      // The SMS: its heading and its editor tab name the sender and the first words of the text.
      await expandRow(treeRow(page, new RegExp(`^SMS inbox ${SAMPLES.smsInbox}`)));
      await treeRow(page, /SMS from 15555550100, Your Acme login code/).click();
      const sms = await viewFrame(page, 'Your Acme login code');
      await page.locator('.tabs-container .tab', { hasText: 'Your Acme login code' }).waitFor({ timeout: UI_TIMEOUT_MS });
      assert.deepEqual(await liveRegions(sms), ['status'], 'the SMS view has no live region but the status line');
      failures.push(...(await audit(sms, `${theme.name}, SMS`)));

      assert.deepEqual(failures, [], `axe-core found serious or critical violations:\n${failures.join('\n')}`);
    });
  }
});
