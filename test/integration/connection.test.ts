// Connecting to the local server in a real extension host: a port held by another program
// gives an error node whose action opens the port settings; a Test Inbox server already on
// the port (another window, a terminal) is attached to with the tokens in its data folder once
// it proves it serves that folder; an impostor on the port gets no token.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN, TOKENS_FILE } from '../../src/shared/contract';
import { startInboxServer } from '../../src/server/server';
import { debugState, findNode, messageLabels, setSetting, useLocalServer, waitForState } from './support/state';

describe('Test Inbox connection to the local server', function () {
  this.timeout(60_000);

  after(async () => {
    await useLocalServer();
  });

  it('names a port held by another program and offers to change it', async () => {
    const other = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>someone else</h1>'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as AddressInfo).port;
    try {
      await setSetting('local.httpPort', port);
      const st = await waitForState((s) => findNode(s.tree, (n) => n.contextValue === 'testInbox.error') !== undefined, 'the port-taken error node');
      const err = findNode(st.tree, (n) => n.contextValue === 'testInbox.error')!;
      assert.match(err.label, new RegExp(`Port ${port} \\(HTTP\\) is used by another program`));
      // On the port setting, on the tab where it can be edited (Remote in a remote window such as code-server's).
      assert.equal(err.command?.command, vscode.env.remoteName ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings');
      assert.deepEqual(err.command?.args, ['testInbox.local.httpPort']);
      assert.equal(st.connection.kind, 'failed');
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
      await setSetting('local.httpPort', 0);
    }
  });

  it('sends no token to an impostor that answers like Test Inbox on the port, and says why it does not attach', async () => {
    const headers: http.IncomingHttpHeaders[] = [];
    const urls: string[] = [];
    const fake = http.createServer((req, res) => {
      headers.push(req.headers);
      urls.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.startsWith('/healthz') ? '{"service":"test-inbox","version":"1","status":"ok"}' : '{"domains":[{"name":"evil.test","inboxes":1,"messages":1}]}');
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const port = (fake.address() as AddressInfo).port;
    try {
      await setSetting('local.httpPort', port);
      const st = await waitForState((s) => findNode(s.tree, (n) => n.contextValue === 'testInbox.error') !== undefined, 'the not-proven error node');
      const err = findNode(st.tree, (n) => n.contextValue === 'testInbox.error')!;
      assert.match(err.label, /answers like a Test Inbox server/);
      assert.match(err.tooltip ?? err.label, /no token was sent/);
      assert.equal(err.command?.command, vscode.env.remoteName ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings', 'the first action changes the port');
      assert.equal(st.connection.kind, 'failed');
      assert.ok(urls.length > 0, 'the impostor was asked');
      assert.ok(headers.every((h) => h.authorization === undefined), 'no request carried a token');
      assert.ok(urls.every((u) => u.startsWith('/healthz')), 'nothing but the health check reached it');
      assert.ok(!findNode(st.tree, (n) => n.label === 'evil.test'), 'its mail is not shown');
    } finally {
      await new Promise<void>((r) => fake.close(() => r()));
      await setSetting('local.httpPort', 0);
    }
  });

  it('attaches to a Test Inbox server already running on the port, with the tokens of its data folder', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-attach-'));
    const tokens = { apiToken: 'it-attach-api-4e7d1c9b2a', webhookToken: 'it-attach-wh-8f3a6b0c5d' };
    await fs.writeFile(path.join(dir, TOKENS_FILE), JSON.stringify(tokens));
    const running = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, ...tokens, defaultDomain: DEFAULT_DOMAIN });
    try {
      const inject = await fetch(`${running.httpUrl}/api/v2/domains/${DEFAULT_DOMAIN}/inboxes/attached`, {
        method: 'POST',
        headers: { authorization: tokens.apiToken, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'a@b.test', subject: 'Sent before attaching', text: 'x' }),
      });
      assert.equal(inject.status, 200);
      await setSetting('local.dataFolder', dir);
      await setSetting('local.httpPort', running.httpPort);
      const st = await waitForState((s) => s.connection.mode === 'attached' && messageLabels(s.tree, DEFAULT_DOMAIN, 'attached').length > 0, 'the attached server and its mail');
      assert.equal(st.connection.baseUrl, running.httpUrl);
      assert.equal(st.localPid, undefined, 'no process of our own');
      assert.deepEqual(messageLabels(st.tree, DEFAULT_DOMAIN, 'attached'), ['Sent before attaching']);
      // Attaching to a server that proved it serves this data folder is the normal case (another
      // window, a terminal, npm start): no notification; the log and the status bar's tooltip say it.
      assert.deepEqual(st.shown.filter((m) => /did not start|attached/i.test(m.text)), [], 'no notification for a normal attach');
      assert.match((st as typeof st & { statusBar: { tooltip: string } }).statusBar.tooltip, /started elsewhere/);
      // Stopping only detaches: the server belongs to someone else, and the state shown says so.
      assert.equal(await vscode.commands.executeCommand('testInbox.stopLocalServer'), 'detached');
      const health = await fetch(`${running.httpUrl}/healthz`);
      assert.equal(health.status, 200);
      const detached = (await waitForState((s) => s.viewState === 'detached', 'the detached view')) as typeof st & { statusBar: { text: string; tooltip: string } };
      assert.equal(detached.connection.kind, 'detached');
      assert.match(detached.statusBar.text, /detached/);
      assert.ok(detached.statusBar.tooltip.includes(`process ${process.pid}`), detached.statusBar.tooltip);
      assert.ok(detached.shown.some((m) => m.where === 'info' && m.text.startsWith('Detached; the server at') && m.text.includes(`belongs to process ${process.pid}`)), JSON.stringify(detached.shown));
      await vscode.commands.executeCommand('testInbox.startLocalServer');
    } finally {
      await setSetting('local.httpPort', 0);
      await running.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('Copy Webhook URL on a local server started with a webhook token of its own says so, and does not send the user to Set Webhook Token', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-ownwh-'));
    const apiToken = 'it-ownwh-api-5c2e9a7d1b';
    await fs.writeFile(path.join(dir, TOKENS_FILE), JSON.stringify({ apiToken, webhookToken: 'it-ownwh-file-3b8d0f6a2c' }));
    // Someone ran `serve --webhook-token …` on that folder: the folder's file does not name it.
    const running = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken, webhookToken: 'it-ownwh-flag-9e1c4a7b3d', defaultDomain: DEFAULT_DOMAIN });
    try {
      await setSetting('local.dataFolder', dir);
      await setSetting('local.httpPort', running.httpPort);
      await waitForState((s) => s.connection.kind === 'ready' && s.connection.mode === 'attached' && s.connection.baseUrl === running.httpUrl, 'the attached server');
      assert.equal(await vscode.commands.executeCommand('testInbox.copyWebhookUrl', { form: 'privateQuery' }), undefined, 'nothing copied');
      const st = await debugState();
      const shown = st.shown.filter((m) => m.where === 'warning').pop();
      assert.ok(shown, JSON.stringify(st.shown));
      // As read: without the zero-width breaks that keep a URL in a notification from becoming a link (core/inert).
      const told = { text: shown.text.replace(/\u200b/g, '') };
      assert.ok(told.text.startsWith(`The local server at ${running.httpUrl} (pid ${process.pid}) was started with a webhook token that is not in ${TOKENS_FILE} of its data folder ${dir}`), told.text);
      assert.match(told.text, /Start that server without --webhook-token/);
      assert.doesNotMatch(told.text, /Set the webhook token/);
      assert.ok(!JSON.stringify(st).includes('it-ownwh-flag-9e1c4a7b3d'), 'the server\'s own token is nowhere');
    } finally {
      await useLocalServer();
      await running.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
