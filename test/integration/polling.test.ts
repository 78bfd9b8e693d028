// A server without a push stream (like the hosted API) in a real extension host: the tree
// polls while the view is visible. The server is the real inbox server behind a proxy that
// answers 404 on the stream routes and on /healthz.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { answering, findNode, setSetting, useLocalServer, waitForState } from './support/state';

const API_TOKEN = 'it-polling-api-3a9d7e1c5b';

describe('Test Inbox polling for servers without a stream', function () {
  this.timeout(60_000);
  let dir: string;
  let server: InboxServer;
  let proxy: http.Server;
  let proxyUrl: string;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-poll-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'it-polling-wh-6f2b8c0d4e', defaultDomain: 'poll.test' });
    const target = new URL(server.httpUrl);
    proxy = http.createServer((req, res) => {
      // Like the hosted API: no /healthz of ours (so the extension polls `private`), and no stream.
      if (/\/stream(\/|$|\?)/.test(req.url ?? '') || /^\/healthz(\?|$)/.test(req.url ?? '')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"error","message":"no such route"}');
        return;
      }
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (r) => {
        if (!/^application\/json/.test(r.headers['content-type'] ?? '')) {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
          return;
        }
        // Like the hosted API, listings carry no `code` (a local-server extra).
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { msgs?: Array<Record<string, unknown>> };
          for (const m of body.msgs ?? []) delete m.code;
          const headers = { ...r.headers };
          delete headers['content-length'];
          res.writeHead(r.statusCode ?? 502, headers).end(JSON.stringify(body));
        });
      });
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await setSetting('pollIntervalSeconds', 2);
    await setSetting('server', proxyUrl);
    // Tokens are keyed by server URL: store it only once the extension has seen the new setting.
    await waitForState((s) => s.tokenKey === proxyUrl, 'the new server setting');
    await answering(vscode.commands.executeCommand('testInbox.setApiToken', API_TOKEN));
  });

  after(async () => {
    await vscode.commands.executeCommand('testInbox.clearApiToken');
    await setSetting('pollIntervalSeconds', undefined);
    await useLocalServer();
    proxy.closeAllConnections();
    await new Promise<void>((r) => proxy.close(() => r()));
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('finds new mail by polling while the view is visible', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.testInbox');
    await waitForState((s) => s.connection.kind === 'ready' && s.connection.baseUrl === proxyUrl && s.live.private === 'polling', 'polling of the private domain');
    const res = await fetch(`${server.httpUrl}/api/v2/domains/private/inboxes/polled`, {
      method: 'POST',
      headers: { authorization: API_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'svc@poll.test', subject: 'Found by polling', text: 'x' }),
    });
    assert.equal(res.status, 200);
    const st = await waitForState((s) => findNode(s.tree, (n) => n.label === 'Found by polling') !== undefined, 'the polled message', 20_000);
    assert.equal(st.live.private, 'polling');
    assert.ok(st.badge >= 1, 'the badge counts the new mail');
  });

  it('offers Copy One-Time Code on a row once its message was opened (listings carry no code)', async () => {
    const res = await fetch(`${server.httpUrl}/api/v2/domains/private/inboxes/coded`, {
      method: 'POST',
      headers: { authorization: API_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'svc@poll.test', subject: 'Sign in', text: 'Your verification code is 604418.' }),
    });
    assert.equal(res.status, 200);
    const { id } = (await res.json()) as { id: string };
    let st = await waitForState((s) => findNode(s.tree, (n) => n.label === 'Sign in') !== undefined, 'the polled message', 20_000);
    const before = findNode(st.tree, (n) => n.label === 'Sign in')!;
    assert.equal(before.contextValue, 'testInbox.message', 'no code is known before the message was fetched');
    await vscode.commands.executeCommand('testInbox.openMessage', { domain: 'private', inbox: 'coded', id });
    st = await waitForState((s) => findNode(s.tree, (n) => n.label === 'Sign in')?.contextValue === 'testInbox.message.code', 'the row with its learned code', 20_000);
    assert.match(findNode(st.tree, (n) => n.label === 'Sign in')!.accessibilityLabel ?? '', /, has code 604418$/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
