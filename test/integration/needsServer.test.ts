// Commands that need the server say so before they ask anything (issue 25, new user 3), in a
// real extension host with the real local server: stopped, and failed to start on a port that
// another program holds. None opens a picker or a prompt (a command that did would wait for an
// answer that never comes, and the test would time out). The notice names the fix as actions
// and is withdrawn by itself once the server runs.
import * as assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
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
];

/** Visible text: without the zero-width breaks of core/inert. */
const visible = (t: string) => t.replace(/\u200b/g, '');

describe('Test Inbox commands that need the server', function () {
  this.timeout(120_000);

  after(async () => {
    await vscode.commands.executeCommand('testInbox.startLocalServer');
    await useLocalServer();
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
