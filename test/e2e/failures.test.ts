// Browser-level: what a user sees when something is off, in the real workbench with the
// extension installed from its VSIX. A server URL on a real closed port shows the "cannot be
// reached" welcome view and a warning status bar item; a real server started on that port
// brings the view back by itself. The samples start unread (the badge counts them), and
// opened messages share one preview tab until one is kept.
import * as assert from 'node:assert/strict';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { SAMPLES, seedSamples, startDemoServer, type DemoServer } from '../../scripts/demoServer';
import { closedPort } from '../support/ports';
import { endSession, escapeRegExp, expandRow, messageView, openTestInboxView, treeRow, UI_TIMEOUT_MS, VSIX } from './ui';

/** code-server start, workbench load, extension activation and a recovery check (≤ 15 s apart), on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 240_000;

describe('e2e: failure states and message panels in a real workbench', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let demo: DemoServer | undefined;

  afterEach(async function () {
    await endSession(this.currentTest, wb, demo);
    wb = undefined;
    demo = undefined;
  });

  it('shows where and why the server cannot be reached with its fixes as rows, a warning status bar item, and recovers when a server starts on the port', async () => {
    const port = await closedPort();
    wb = await startWorkbench({ vsix: VSIX, settings: { 'testInbox.server': `http://127.0.0.1:${port}` } });
    const page = wb.page;
    await openTestInboxView(page);
    // The view's message: the URL and the real reason, in full (a message hides any welcome view,
    // so the fixes are rows under it).
    const message = page.locator('.sidebar .tree-explorer-viewlet-tree-view .message');
    await message.filter({ hasText: `http://127.0.0.1:${port} cannot be reached: nothing is listening there` }).waitFor({ timeout: UI_TIMEOUT_MS });
    assert.doesNotMatch(await message.innerText(), /needs an API token/, 'a missing token does not hide that nothing listens');
    for (const action of ['Retry', 'Show Log', 'Switch Server']) await treeRow(page, new RegExp(`^${action}$`)).waitFor({ timeout: UI_TIMEOUT_MS });
    const item = page.locator('.statusbar-item').filter({ hasText: /Test Inbox: unreachable/ }).first();
    await item.waitFor({ timeout: UI_TIMEOUT_MS });
    assert.match(await item.getAttribute('class') ?? '', /warning-kind/, 'the warning colour');
    assert.match(await item.locator('[aria-label]').first().getAttribute('aria-label') ?? '', /cannot be reached: nothing is listening there/);
    // A fix row runs its command: Show Log opens the output channel.
    await treeRow(page, /^Show Log$/).click();
    await page.locator('.panel').filter({ hasText: /Test Inbox/ }).first().waitFor({ timeout: UI_TIMEOUT_MS });

    // A server comes up on that port: the view follows without a click (it answers now, and
    // this window has no token for it, so that is what it says next).
    demo = await startDemoServer({ httpPort: port });
    await message.filter({ hasText: /needs an API token/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    await treeRow(page, /^Set API Token$/).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator('.statusbar-item').filter({ hasText: /Test Inbox: no token/ }).first().waitFor({ timeout: UI_TIMEOUT_MS });
  });

  it('counts the unread samples in the badge and shows opened messages in one preview tab until Keep Open', async () => {
    demo = await startDemoServer();
    await seedSamples(demo);
    wb = await startWorkbench({ vsix: VSIX, settings: demo.extensionSettings });
    const page = wb.page;
    await openTestInboxView(page);
    await treeRow(page, /^Domain inbox\.test, 2 inboxes, 3 unread/).waitFor({ timeout: UI_TIMEOUT_MS });
    // The activity bar's badge, seen from another view (the first run of `npm start` seeds the same samples).
    await page.locator('.activitybar [aria-label^="Explorer"]').first().click();
    await page.locator('.activitybar .badge[aria-label="Test Inbox - 3 unread messages"]').waitFor({ timeout: UI_TIMEOUT_MS });
    await openTestInboxView(page);

    await expandRow(treeRow(page, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
    const report = treeRow(page, new RegExp(`^Unread email from .*${escapeRegExp(SAMPLES.reportSubject)}`));
    const signup = treeRow(page, new RegExp(`^Unread email from .*${escapeRegExp(SAMPLES.signupSubject)}`));
    await report.waitFor({ timeout: UI_TIMEOUT_MS });
    await signup.waitFor({ timeout: UI_TIMEOUT_MS });
    const tabs = page.locator('.editor .tabs-container .tab');

    await report.click();
    await messageView(page, SAMPLES.reportSubject);
    await signup.click();
    await messageView(page, SAMPLES.signupSubject);
    assert.equal(await tabs.count(), 1, 'the second message replaced the first in its tab');
    await treeRow(page, new RegExp(`^email from .*${escapeRegExp(SAMPLES.signupSubject)}`)).waitFor({ timeout: UI_TIMEOUT_MS });

    // Keep Open in the panel's title: the next message gets a tab of its own.
    const keepOpen = page.locator('.editor-group-container').getByRole('button', { name: 'Keep Open' });
    await keepOpen.click();
    // Kept, the panel's title has no Keep Open (package.json `when`): wait for it, or a loaded
    // machine's next click can reach the panel before it is kept.
    await keepOpen.waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
    await treeRow(page, new RegExp(`^email from .*${escapeRegExp(SAMPLES.reportSubject)}`)).click();
    await messageView(page, SAMPLES.reportSubject);
    await page.waitForFunction((n) => document.querySelectorAll('.editor .tabs-container .tab').length === n, 2, { timeout: UI_TIMEOUT_MS });
  });
});
