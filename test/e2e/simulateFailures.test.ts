// Browser-level: Simulate Failures… from the Command Palette in code-server, with the extension
// installed from its VSIX (docs/chaos.md, "In the editor"). The "One bad recipient" preset asks
// for the address, the server refuses it over real SMTP with 550, the status bar shows the
// failure-rules mark with its count, and "Clear all failures" takes the mark away.
//
//   node esbuild.mjs && node scripts/package.mjs --vsix-only, then (under flock /tmp/heavy.lock)
//   npx mocha --no-config -r tsx/cjs --extension ts --timeout 240000 test/e2e/simulateFailures.test.ts
import * as assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { sendMail } from '../../scripts/demoServer';
import { endSession, openTestInboxView, runFromPalette, statusBarSmtpPort, UI_TIMEOUT_MS, VSIX } from './ui';

const TEST_TIMEOUT_MS = 240_000;

/** Picks the row of the open quick pick whose text has `text`. */
async function pickRow(page: Page, text: string): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: text }).first();
  await row.waitFor({ timeout: UI_TIMEOUT_MS });
  await row.click();
}

describe('e2e: Simulate Failures… and its status-bar mark', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let dataDir: string | undefined;

  afterEach(async function () {
    await endSession(this.currentTest, wb);
    wb = undefined;
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });

  it('adds "One bad recipient" from the palette: SMTP refuses that address with 550, the status bar says "1 failure rule", and Clear all failures removes the mark', async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'test-inbox-e2e-chaos-'));
    wb = await startWorkbench({
      vsix: VSIX,
      settings: { 'testInbox.local.httpPort': 0, 'testInbox.local.smtpPort': 0, 'testInbox.local.dataFolder': dataDir },
    });
    const page = wb.page;
    await openTestInboxView(page);
    const smtpPort = await statusBarSmtpPort(page);
    const mark = page.locator('.statusbar-item').filter({ hasText: /failure rules?/ });
    assert.equal(await mark.count(), 0, 'no mark without rules');

    const bad = `ann-${randomInt(1e6, 1e7)}@inbox.test`;
    await runFromPalette(page, 'Test Inbox: Simulate Failures');
    await pickRow(page, 'One bad recipient');
    await page.locator('.quick-input-widget').filter({ hasText: 'refuses with 550' }).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator('.quick-input-widget input').fill(bad);
    await page.keyboard.press('Enter');

    await mark.filter({ hasText: '1 failure rule' }).first().waitFor({ timeout: UI_TIMEOUT_MS });
    assert.equal((await mark.first().innerText()).trim(), '1 failure rule');

    // The fault applies: nodemailer hears 550 for that address.
    await assert.rejects(sendMail({ smtpHost: '127.0.0.1', smtpPort }, { from: 'Acme <no-reply@acme.test>', to: bad, subject: 'Hi', text: 'Hi.' }), (e: { responseCode?: number }) => e.responseCode === 550);

    await runFromPalette(page, 'Test Inbox: Simulate Failures');
    await pickRow(page, 'Clear all failures');
    await mark.first().waitFor({ state: 'hidden', timeout: UI_TIMEOUT_MS });
    await sendMail({ smtpHost: '127.0.0.1', smtpPort }, { from: 'Acme <no-reply@acme.test>', to: bad, subject: 'Hi again', text: 'Hi.' });
  });
});
