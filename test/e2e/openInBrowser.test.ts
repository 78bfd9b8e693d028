// Browser-level: "Open in Browser" inside code-server (VS Code in the browser), with the
// extension installed from its VSIX. The editor reaches the local server through code-server's
// port proxy, so the web UI opens at http://<code-server>/proxy/<port>/#ticket=…: the page must
// load its script and call its routes under that prefix, and sign in by the one-time ticket.
// It lands signed in, mail sent over SMTP shows, and Copy puts the code on the clipboard.
//
//   node esbuild.mjs && node scripts/package.mjs --vsix-only, then (under flock /tmp/heavy.lock)
//   npx mocha --no-config -r tsx/cjs --extension ts --timeout 240000 test/e2e/openInBrowser.test.ts
import * as assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { sendMail } from '../../scripts/demoServer';
import { allowClipboard, endSession, openTestInboxView, runFromPalette, statusBarSmtpPort, UI_TIMEOUT_MS, VSIX } from './ui';

const TEST_TIMEOUT_MS = 240_000;

describe('e2e: Open in Browser in a browser-based editor (code-server)', function () {
  this.timeout(TEST_TIMEOUT_MS);
  let wb: Workbench | undefined;
  let dataDir: string | undefined;

  afterEach(async function () {
    await endSession(this.currentTest, wb);
    wb = undefined;
    if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  });

  it('opens the web UI under /proxy/<port>/, signed in by the link: mail sent over SMTP shows and Copy works', async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'test-inbox-e2e-browser-'));
    wb = await startWorkbench({
      vsix: VSIX,
      settings: { 'testInbox.local.httpPort': 0, 'testInbox.local.smtpPort': 0, 'testInbox.local.dataFolder': dataDir },
    });
    await allowClipboard(wb);
    const page = wb.page;
    await openTestInboxView(page);
    const smtpPort = await statusBarSmtpPort(page);

    const opened = page.context().waitForEvent('page', { timeout: UI_TIMEOUT_MS });
    await runFromPalette(page, 'Test Inbox: Open in Browser');
    const web: Page = await opened;
    const failed: string[] = [];
    web.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    await web.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: UI_TIMEOUT_MS });
    const at = new URL(web.url());
    assert.equal(at.origin, `http://127.0.0.1:${wb.port}`, 'the page is served by code-server');
    assert.match(at.pathname, /^\/proxy\/[0-9]+\/$/, `through its port proxy: ${at.pathname}`);
    assert.equal(at.hash, '', 'the ticket is out of the address');

    const inbox = `browser-${randomInt(1e6, 1e7)}`;
    const code = String(randomInt(100_000, 1_000_000));
    await sendMail({ smtpHost: '127.0.0.1', smtpPort }, { from: 'Acme <no-reply@acme.test>', to: `${inbox}@inbox.test`, subject: 'Your Acme sign-in code', text: `Your verification code is ${code}.` });
    await web.getByRole('navigation', { name: 'Domains' }).getByRole('button', { name: /inbox\.test/ }).click({ timeout: UI_TIMEOUT_MS });
    const item = web.getByRole('navigation', { name: 'Messages' }).getByRole('button', { name: /Your Acme sign-in code/ });
    await item.click({ timeout: UI_TIMEOUT_MS });
    await web.evaluate(() => navigator.clipboard.writeText('before the click'));
    await web.getByRole('button', { name: `Copy code ${code}` }).click({ timeout: UI_TIMEOUT_MS });
    await web.getByText(`Copied code ${code}`).first().waitFor({ timeout: UI_TIMEOUT_MS });
    assert.equal(await web.evaluate(() => navigator.clipboard.readText()), code);
    assert.deepEqual(failed, [], 'every request of the page succeeded');
  });
});
