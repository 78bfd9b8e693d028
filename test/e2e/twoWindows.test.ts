// Browser-level: two windows of one code-server on one inbox server agree on what is unread.
// The second window is another browser profile (its own storage: VS Code's globalState of a
// browser workbench lives there), so the two share nothing but the code-server and the inbox
// server; each window has its own extension host. A message opened in one is read in the other
// too (its tree and the activity bar's badge), without a click there: the read marks live in
// the local server's data folder (src/extension/tree/sharedMemento.ts).
import * as assert from 'node:assert/strict';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { SAMPLES, seedSamples, startDemoServer, type DemoServer } from '../../scripts/demoServer';
import { endSession, escapeRegExp, expandRow, keepFailure, messageView, openTestInboxView, treeRow, UI_TIMEOUT_MS, VSIX } from './ui';
import type { Page } from 'playwright-core';

/** code-server start, two workbench loads and two extension hosts, on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 240_000;

/** The activity bar's badge as another view shows it ("Test Inbox - 3 unread messages"). */
async function badge(page: Page, unread: number): Promise<void> {
  await page.locator('.activitybar [aria-label^="Explorer"]').first().click();
  await page.locator(`.activitybar .badge[aria-label="Test Inbox - ${unread} unread message${unread === 1 ? '' : 's'}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
}

describe('e2e: two windows on one server', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let demo: DemoServer | undefined;
  let second: Page | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && second) {
      const dir = await keepFailure(undefined, `${this.currentTest.title}-second-window`);
      await second.screenshot({ path: `${dir}/second-window.png` }).catch(() => {});
    }
    await endSession(this.currentTest, wb, demo);
    wb = undefined;
    demo = undefined;
    second = undefined;
  });

  it('a message opened in one window is read in another (another browser profile): the same unread count in its tree and badge', async () => {
    demo = await startDemoServer();
    await seedSamples(demo);
    wb = await startWorkbench({ vsix: VSIX, settings: demo.extensionSettings });
    const first = wb.page;
    await openTestInboxView(first);
    await treeRow(first, /^Domain inbox\.test, 2 inboxes, 3 unread/).waitFor({ timeout: UI_TIMEOUT_MS });

    // A second window in another browser profile on the same code-server: another extension host.
    second = await (await wb.browser.newContext({ viewport: first.viewportSize() ?? undefined })).newPage();
    await second.goto(wb.url);
    await openTestInboxView(second);
    await treeRow(second, /^Domain inbox\.test, 2 inboxes, 3 unread/).waitFor({ timeout: UI_TIMEOUT_MS });
    await badge(second, 3);

    // Open one message in the first window.
    await first.bringToFront();
    await expandRow(treeRow(first, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
    await treeRow(first, new RegExp(`^Unread email from .*${escapeRegExp(SAMPLES.signupSubject)}`)).click();
    await first.locator('.editor .tabs-container .tab').filter({ hasText: SAMPLES.signupSubject }).waitFor({ timeout: UI_TIMEOUT_MS });
    await treeRow(first, /^Domain inbox\.test, 2 inboxes, 2 unread/).waitFor({ timeout: UI_TIMEOUT_MS });
    await badge(first, 2);

    // The second window follows by itself: its badge and its tree say 2 as well.
    await second.bringToFront();
    await badge(second, 2);
    await openTestInboxView(second);
    await treeRow(second, /^Domain inbox\.test, 2 inboxes, 2 unread/).waitFor({ timeout: UI_TIMEOUT_MS });
    await expandRow(treeRow(second, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
    await treeRow(second, new RegExp(`^email from .*${escapeRegExp(SAMPLES.signupSubject)}`)).waitFor({ timeout: UI_TIMEOUT_MS });
    assert.equal(await treeRow(second, new RegExp(`^Unread email from .*${escapeRegExp(SAMPLES.signupSubject)}`)).count(), 0, 'the opened message is not unread in the second window');

    // The message view renders in either window (each window's webviews are its own).
    await treeRow(second, new RegExp(`^email from .*${escapeRegExp(SAMPLES.signupSubject)}`)).click();
    await messageView(second, SAMPLES.signupSubject);
  });
});
