// Browser-level: the real workbench (code-server in headless Chromium) with the extension
// installed from its VSIX (`npm run package`) into a fresh profile, as a user installs it.
// The user's path end to end: open the Test Inbox view, mail arrives over
// real SMTP, the message shows up in the tree without a refresh, opening it shows the message
// view, its "Copy" button puts the one-time code on the system clipboard.
//
//   npm run test:e2e      (packages first; needs Chromium and the code-server cache, see
//                          docs/architecture.md and scripts/integration/)
import * as assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { PAGE_SIZE } from '../../src/extension/tree/model';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { SAMPLES, seedSamples, sendMail, startDemoServer, type DemoServer } from '../../scripts/demoServer';
import {
  allowClipboard,
  escapeRegExp,
  expandRow,
  endSession,
  keepFailedTest,
  messageView,
  openTestInboxView,
  readClipboard,
  runFromPalette,
  statusBarSmtpPort,
  treeRow,
  E2E_OUTPUT,
  UI_TIMEOUT_MS,
  VSIX,
} from './ui';

/** code-server start, workbench load, extension activation and a server start, on a busy 2-core machine. */
const TEST_TIMEOUT_MS = 240_000;
/** How long one try at the inbox picker waits for it to show, take the text and offer it. */
const PICKER_ATTEMPT_MS = 8_000;

describe('e2e: Test Inbox installed from its VSIX in a real workbench, with its own local server', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let dataDir: string | undefined;

  afterEach(async function () {
    await endSession(this.currentTest, wb);
    wb = undefined;
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });

  it('shows mail sent over SMTP in the open tree, opens it, and "Copy" puts its code on the clipboard', async () => {
    // The extension starts its own local server: free ports, a temp data folder.
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'test-inbox-e2e-'));
    wb = await startWorkbench({
      vsix: VSIX,
      settings: { 'testInbox.local.httpPort': 0, 'testInbox.local.smtpPort': 0, 'testInbox.local.dataFolder': dataDir },
    });
    await allowClipboard(wb);
    const page = wb.page;
    await openTestInboxView(page);
    const smtpPort = await statusBarSmtpPort(page);
    // The empty local server offers its welcome view with the inject action.
    await page.locator('.sidebar .welcome-view-content').filter({ hasText: /No mail yet/ }).waitFor({ timeout: UI_TIMEOUT_MS });

    const inbox = `e2e-${randomInt(1e6, 1e7)}`;
    const code = String(randomInt(100_000, 1_000_000));
    // Digits only in the body: the subject is scanned for codes too.
    const subject = 'Your Acme sign-in code';
    await sendMail({ smtpHost: '127.0.0.1', smtpPort }, {
      from: 'Acme <no-reply@acme.test>',
      to: `${inbox}@inbox.test`,
      subject,
      text: `Hello,\n\nYour verification code is ${code}.\nIt expires in 10 minutes.`,
    });

    // No refresh clicked: the push stream brings the new inbox into the open tree.
    const inboxRow = treeRow(page, new RegExp(`^Inbox ${escapeRegExp(inbox)}@inbox\\.test`));
    await expandRow(inboxRow);
    const messageRow = treeRow(page, new RegExp(`email from Acme, ${escapeRegExp(subject)}`));
    await messageRow.waitFor({ timeout: UI_TIMEOUT_MS });
    await messageRow.click();

    const view = await messageView(page, subject);
    const codeValue = view.locator('.code-box .code-value');
    await codeValue.waitFor({ timeout: UI_TIMEOUT_MS });
    assert.equal(await codeValue.innerText(), code, 'the message view detects the code that was sent');

    // Something else on the clipboard first, so the assertion can only pass through the button.
    await page.evaluate(() => navigator.clipboard.writeText('before the click'));
    const copy = view.getByRole('button', { name: `Copy code ${code}` });
    await copy.click();
    const status = view.locator('#status').filter({ hasText: `Copied code ${code}` });
    await status.waitFor({ timeout: UI_TIMEOUT_MS });
    assert.equal(await readClipboard(page), code);
    // The feedback shows beside the button it answers, not in a far corner of the view.
    const [b, s] = [await copy.boundingBox(), await status.boundingBox()];
    assert.ok(b && s, 'both are on screen');
    const gap = Math.max(0, s.y - (b.y + b.height), b.y - (s.y + s.height)) + Math.max(0, s.x - (b.x + b.width), b.x - (s.x + s.width));
    assert.ok(gap <= 24, `the "Copied" feedback is ${gap} px from its button (${JSON.stringify({ button: b, status: s })})`);
  });

});

describe('e2e: Test Inbox from its VSIX, attached to a server already running with the samples', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let demo: DemoServer | undefined;
  let api: InboxApi | undefined;
  /** An inbox with more than a page, there before the window opens. */
  const paged = `paged-${randomInt(1e6, 1e7)}`;

  // One session for the tests below (a workbench start is about 20 s of CPU on this machine).
  before(async () => {
    demo = await startDemoServer();
    await seedSamples(demo);
    api = createClient({ baseUrl: demo.http, apiToken: demo.apiToken });
    for (let i = 0; i < PAGE_SIZE + 2; i++) await api.inject(SAMPLES.domain, paged, { from: 'Pager <pager@acme.test>', subject: `Page item ${i}`, text: String(i) });
    wb = await startWorkbench({ vsix: VSIX, settings: demo.extensionSettings });
    await allowClipboard(wb);
  });

  afterEach(async function () {
    await keepFailedTest(this.currentTest, wb);
  });

  after(async () => {
    await api?.dispose();
    await endSession(undefined, wb, demo);
    wb = undefined;
    demo = undefined;
  });

  /** The session's page; the test fails plainly when the session did not start. */
  const session = (): { wb: Workbench; api: InboxApi; demo: DemoServer } => {
    if (!wb || !api || !demo) throw new Error('the session did not start');
    return { wb, api, demo };
  };

  it('shows the samples: the status bar names the server\'s SMTP port, the SMS opens and its code is copied', async () => {
    const { wb, demo } = session();
    const page = wb.page;
    await openTestInboxView(page);
    assert.equal(await statusBarSmtpPort(page), demo.smtpPort, 'the status bar shows the running server\'s SMTP port');

    // Both sample inboxes are listed; the email inbox holds both sample emails.
    await expandRow(treeRow(page, new RegExp(`^Inbox ${SAMPLES.emailInbox}@${escapeRegExp(SAMPLES.domain)}`)));
    await treeRow(page, new RegExp(escapeRegExp(SAMPLES.reportSubject))).waitFor({ timeout: UI_TIMEOUT_MS });
    await treeRow(page, new RegExp(escapeRegExp(SAMPLES.signupSubject))).waitFor({ timeout: UI_TIMEOUT_MS });

    await expandRow(treeRow(page, new RegExp(`^SMS inbox ${SAMPLES.smsInbox}`)));
    const sms = treeRow(page, /SMS from 15555550100/);
    await sms.waitFor({ timeout: UI_TIMEOUT_MS });
    await sms.click();
    const view = await messageView(page, /Your Acme login code/);
    await page.evaluate(() => navigator.clipboard.writeText('before the click'));
    // The segment count and encoding, by the standard rules: the sample is plain GSM-7, one SMS.
    await view.locator('.bubble-segments').filter({ hasText: /^1 segment · GSM-7$/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    await view.getByRole('button', { name: `Copy code ${SAMPLES.smsCode}` }).click();
    await view.locator('#status').filter({ hasText: `Copied code ${SAMPLES.smsCode}` }).waitFor({ timeout: UI_TIMEOUT_MS });
    assert.equal(await readClipboard(page), SAMPLES.smsCode);
  });

  it('Inject Test Message from the Command Palette lands in the tree; an inbox of more than a page loads older messages', async () => {
    const { wb, api } = session();
    // The paged inbox was there before the window opened: its row loads one page and offers
    // "Load older messages" (mail arriving while a window shows the tree opens its inbox and is
    // added row by row, with nothing to page).
    const page = wb.page;
    await openTestInboxView(page);
    await statusBarSmtpPort(page);

    const inbox = `palette-${randomInt(1e6, 1e7)}`;
    // The inbox picker takes a typed name; then From, Subject and Text keep their defaults. The
    // picker can close as it opens, at any of its steps (a view of the session redrawn takes the
    // focus): the whole command is asked again then. Nothing is injected before the last step's
    // Enter, which no wait follows, so a retry never injects twice.
    const input = page.locator('.quick-input-widget input');
    for (const deadline = Date.now() + 2 * UI_TIMEOUT_MS; ; ) {
      await runFromPalette(page, 'Test Inbox: Inject Test Message');
      try {
        await page.locator('.quick-input-widget').filter({ hasText: 'Inject Test Message' }).waitFor({ timeout: PICKER_ATTEMPT_MS });
        await input.fill(inbox, { timeout: PICKER_ATTEMPT_MS });
        await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: inbox }).first().waitFor({ timeout: PICKER_ATTEMPT_MS });
        await page.keyboard.press('Enter');
        for (const step of ['(1/3)', '(2/3)', '(3/3)']) {
          await page.locator('.quick-input-widget').filter({ hasText: step }).waitFor({ timeout: PICKER_ATTEMPT_MS });
          await page.keyboard.press('Enter');
        }
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
      }
    }

    await expandRow(treeRow(page, new RegExp(`^Inbox ${escapeRegExp(inbox)}@${escapeRegExp(SAMPLES.domain)}`)));
    await treeRow(page, /email from Test Inbox, Test message/).waitFor({ timeout: UI_TIMEOUT_MS });

    // A change redraws only the row it touched (tree/provider.ts): "Load more…" redraws its
    // inbox, and a message arriving meanwhile into that inbox redraws its domain; both show.
    await expandRow(treeRow(page, new RegExp(`^Inbox ${escapeRegExp(paged)}@`)));
    const more = treeRow(page, new RegExp(`^Load older messages of ${escapeRegExp(paged)}$`));
    await more.click({ timeout: UI_TIMEOUT_MS });
    await treeRow(page, /email from Pager, Page item 0,/).waitFor({ timeout: UI_TIMEOUT_MS });
    await more.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    await api.inject(SAMPLES.domain, paged, { from: 'Pager <pager@acme.test>', subject: 'Arrived after paging', text: 'x' });
    await treeRow(page, /email from Pager, Arrived after paging,/).waitFor({ timeout: UI_TIMEOUT_MS });
    await treeRow(page, /email from Test Inbox, Test message/).waitFor({ timeout: UI_TIMEOUT_MS });
  });

  it('shows the packaged README on the extension\'s details page, with no broken images', async () => {
    const page = session().wb.page;
    await runFromPalette(page, 'Extensions: Show Installed Extensions');
    const entry = page.locator('.extensions-viewlet .extension-list-item').filter({ hasText: 'Test Inbox' }).first();
    await entry.waitFor({ timeout: UI_TIMEOUT_MS });
    await entry.click();
    // The details page renders the README in a webview: find the frame that holds it.
    const details = page.locator('.extension-editor');
    await details.locator('.name', { hasText: 'Test Inbox' }).first().waitFor({ timeout: UI_TIMEOUT_MS });
    let readme: Frame | undefined;
    for (const deadline = Date.now() + UI_TIMEOUT_MS; !readme && Date.now() < deadline; ) {
      for (const frame of page.frames()) {
        if ((await frame.locator('h2', { hasText: /^Install$/ }).count().catch(() => 0)) > 0) readme = frame;
      }
      if (!readme) await page.waitForTimeout(250);
    }
    assert.ok(readme, 'the details page shows the README with its Install section');
    await readme.locator('h2', { hasText: /^Commands$/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    // Every image on the page loaded (the packaged README has none that could not).
    const broken = await readme.evaluate(() =>
      Array.from(document.images)
        .filter((img) => !(img.complete && img.naturalWidth > 0))
        .map((img) => img.getAttribute('src') ?? '?'),
    );
    assert.deepEqual(broken, [], 'no broken image on the details page');
    await fsp.mkdir(E2E_OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(E2E_OUTPUT, 'extension-details-page.png') });
  });
});
