// Commands that need the server say so before they ask anything, in a
// real extension host with the real local server: stopped, and failed to start on a port that
// another program holds. None opens a picker or a prompt (a command that did would wait for an
// answer that never comes, and the test would time out). The notice names the fix as actions
// and is withdrawn by itself once the server runs.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TOKENS_FILE } from '../../src/shared/contract';
import { debugState, setSetting, useLocalServer, waitForState, type DebugState } from './support/state';

type WithNotice = DebugState & { serverNotice: { text: string; actions: string[] } | null };
const state = async (): Promise<WithNotice> => (await debugState()) as WithNotice;

/** Commands a user runs from the palette (no argument) that cannot work without the server. */
const NEEDS_SERVER: Array<[string, string]> = [
  ['testInbox.copyCode', 'Copy One-Time Code'],
  ['testInbox.waitForCode', 'Wait for Next Code'],
  ['testInbox.injectMessage', 'Inject Test Message'],
  ['testInbox.copyVerificationLink', 'Copy Verification Link'],
  ['testInbox.openMessage', 'Open Message'],
  ['testInbox.deleteMessage', 'Delete Message'],
  ['testInbox.clearInbox', 'Clear Inbox'],
  ['testInbox.copyWebhookUrl', 'Copy Webhook URL'],
  ['testInbox.copyApiToken', 'Copy API Token'],
  ['testInbox.openInBrowser', 'Open in Browser'],
];

/** Visible text: without the zero-width breaks of core/inert. */
const visible = (t: string) => t.replace(/\u200b/g, '');

describe('Test Inbox commands that need the server', function () {
  this.timeout(120_000);

  after(async () => {
    await vscode.commands.executeCommand('testInbox.startLocalServer');
    await useLocalServer();
  });

  it('Copy API Token copies the local server\'s token from its data folder, which opens its API, and shows it nowhere', async () => {
    const st = await useLocalServer();
    const dataDir = (st.connection as { dataDir?: string }).dataDir!;
    const file = JSON.parse(await fs.readFile(path.join(dataDir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    await vscode.env.clipboard.writeText('before');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyApiToken'), true);
    assert.equal(await vscode.env.clipboard.readText(), file.apiToken);
    const r = await fetch(`${st.connection.baseUrl}/api/v2/domains`, { headers: { authorization: file.apiToken } });
    assert.equal(r.status, 200);
    const after = await state();
    assert.ok(after.shown.some((m) => m.where === 'status' && visible(m.text).startsWith(`$(check) Copied the API token of ${st.connection.baseUrl}`)), JSON.stringify(after.shown.slice(-2)));
    assert.ok(!JSON.stringify(after).includes(file.apiToken), 'the token is in no text shown and no state kept');
  });

  it('the unreachable view says its URL and the real reason: a port fetch refuses is not "nothing answers"', async () => {
    // Port 6000 (X11) is on fetch's list of refused ports: nothing is even tried there.
    await setSetting('server', 'http://127.0.0.1:6000');
    const st = (await waitForState((s) => s.viewState === 'unreachable', 'the unreachable view')) as WithNotice & { viewMessage?: string };
    assert.ok(st.viewMessage?.startsWith('http://127.0.0.1:6000 cannot be reached: fetch refuses this port'), st.viewMessage);
    await useLocalServer();
    assert.equal(((await state()) as WithNotice & { viewMessage?: string }).viewMessage, undefined, 'no message once connected');
  });

  it('say the local server is stopped before asking anything, offer Start Local Server, and the notice goes once it runs', async () => {
    await useLocalServer();
    await vscode.commands.executeCommand('testInbox.stopLocalServer');
    await waitForState((s) => s.connection.kind === 'stopped', 'the stopped server');
    for (const [command, title] of NEEDS_SERVER) {
      // Resolves at once: no picker and no prompt is waiting for an answer.
      assert.equal(await vscode.commands.executeCommand(command), undefined, command);
      const st = await state();
      assert.ok(st.serverNotice, `${command} showed a notice: ${JSON.stringify(st.shown.slice(-2))}`);
      assert.ok(visible(st.serverNotice.text).startsWith(`${title} failed. The local server is stopped`), st.serverNotice.text);
      assert.deepEqual(st.serverNotice.actions, ['Start Local Server', 'Show Log']);
    }
    await vscode.commands.executeCommand('testInbox.startLocalServer');
    const st = await waitForState((s) => s.connection.kind === 'ready', 'the started server');
    assert.equal((st as WithNotice).serverNotice, null, 'the notice was withdrawn once the server runs');
  });

  it('say why the server failed to start (a port another program holds) before asking anything; "Start Local Server failed" is withdrawn once it starts', async () => {
    const other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>someone else</h1>'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as AddressInfo).port;
    try {
      await setSetting('local.httpPort', port);
      await waitForState((s) => s.connection.kind === 'failed', 'the failed start');
      for (const [command, title] of NEEDS_SERVER.slice(0, 3)) {
        assert.equal(await vscode.commands.executeCommand(command), undefined, command);
        const st = await state();
        assert.ok(st.serverNotice, `${command} showed a notice`);
        assert.ok(visible(st.serverNotice.text).startsWith(`${title} failed. Port ${port} (HTTP) is used by another program`), st.serverNotice.text);
        assert.ok(st.serverNotice.actions.includes('Change Port'), JSON.stringify(st.serverNotice.actions));
      }
      assert.equal(await vscode.commands.executeCommand('testInbox.startLocalServer'), undefined);
      const failed = await state();
      assert.ok(failed.serverNotice && visible(failed.serverNotice.text).startsWith('Start Local Server failed.'), JSON.stringify(failed.serverNotice));
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
    }
    // The port is free now: Start Local Server starts it, and the failure's notice is gone.
    await vscode.commands.executeCommand('testInbox.startLocalServer');
    const st = await waitForState((s) => s.connection.kind === 'ready', 'the server started on the freed port');
    assert.equal((st as WithNotice).serverNotice, null, '"Start Local Server failed" was withdrawn');
    await setSetting('local.httpPort', 0);
  });
});
