// Open in Browser in a real extension host against the embedded local server: the command asks
// the server for a one-time ticket and hands `vscode.env.openExternal` the web UI's address with
// the ticket in its fragment. The test takes the address openExternal was given (it stands in
// for the browser, which this host has none of to spare) and does what the page does: it spends
// the ticket once for a session. The address carries no API token; a second use, and the ticket
// as an API credential, are refused. Against the hosted service the command says it has no web UI.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TOKENS_FILE } from '../../src/shared/contract';
import { answering, dataDir, setSetting, useLocalServer, waitForState } from './support/state';

type OpenExternal = (target: vscode.Uri) => Thenable<boolean>;

/** Runs `action` with openExternal recording its targets instead of starting a browser. */
async function capturingOpenExternal<T>(action: () => Thenable<T>): Promise<{ result: T; opened: string[] }> {
  const env = vscode.env as unknown as { openExternal: OpenExternal };
  const real = env.openExternal;
  const opened: string[] = [];
  env.openExternal = async (target) => {
    opened.push(String(target));
    return true;
  };
  assert.notEqual(env.openExternal, real, 'openExternal could not be observed');
  try {
    return { result: await action(), opened };
  } finally {
    env.openExternal = real;
  }
}

describe('Open in Browser command', function () {
  this.timeout(90_000);
  let base: string;

  before(async () => {
    base = (await useLocalServer()).connection.baseUrl;
  });

  it('opens the web UI with a one-time sign-in link: no token in it, it signs in once, it is no API credential', async () => {
    const { result, opened } = await capturingOpenExternal(() => vscode.commands.executeCommand<boolean>('testInbox.openInBrowser'));
    assert.equal(result, true);
    assert.equal(opened.length, 1, `openExternal was given ${JSON.stringify(opened.length)} addresses`);
    const url = new URL(opened[0]);
    assert.equal(url.origin, new URL(base).origin);
    assert.equal(url.pathname, '/');
    assert.equal(url.search, '', 'nothing in the query, which servers and proxies log');
    const ticket = /^#ticket=([A-Za-z0-9_.-]+)$/.exec(url.hash)?.[1];
    assert.ok(ticket, `a ticket in the fragment: ${url.hash.slice(0, 12)}…`);
    const { apiToken } = JSON.parse(await fs.readFile(path.join(dataDir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    assert.ok(!opened[0].includes(apiToken) && !opened[0].includes(encodeURIComponent(apiToken)), 'the API token is not in the address');

    // What the page does: load the address without its fragment (the browser never sends it), then spend the ticket.
    const page = await fetch(`${url.origin}${url.pathname}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script nonce="[^"]+" src="ui\/webui\.js"><\/script>/, 'relative to the page, as behind a proxy prefix');
    const spend = (): Promise<Response> => fetch(`${url.origin}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin }, body: JSON.stringify({ ticket }) });
    const first = await spend();
    assert.equal(first.status, 201, await first.clone().text());
    const cookie = /^([^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
    assert.ok(cookie, 'a session cookie');
    const { pageToken } = (await first.json()) as { pageToken: string };
    const domains = await fetch(`${url.origin}/ui/api/v2/domains`, { headers: { cookie, 'x-test-inbox-session': pageToken, origin: url.origin } });
    assert.equal(domains.status, 200, 'the session opens the web UI');

    const again = await spend();
    assert.equal(again.status, 401);
    assert.match(((await again.json()) as { message: string }).message, /used already/);
    assert.equal((await fetch(`${url.origin}/api/v2/domains`, { headers: { authorization: ticket } })).status, 403, 'the ticket is not the API token');

    // A second run gives a new ticket: each link works once.
    const second = await capturingOpenExternal(() => vscode.commands.executeCommand<boolean>('testInbox.openInBrowser'));
    assert.equal(second.opened.length, 1);
    assert.notEqual(second.opened[0], opened[0]);
    const st = await waitForState((s) => s.shown.some((m) => m.where === 'status' && /Opened the web UI/.test(m.text)), 'the status bar confirmation');
    assert.ok(st.shown.every((m) => !m.text.includes(ticket)), 'the ticket is never shown');
  });

  it('in a browser-based editor, the ticket declares the page\'s origin (asExternalUri\'s), which its session accepts, and no other', async function () {
    const external = new URL((await vscode.env.asExternalUri(vscode.Uri.parse(`${new URL(base).origin}/`))).toString(true));
    // Desktop VS Code gives the server's own address back (nothing to declare); code-server gives its /proxy/<port>/ address.
    if (external.origin === new URL(base).origin) this.skip();
    assert.match(external.pathname, /\/proxy\/[0-9]+\/$/, `asExternalUri gave ${external.href}`);
    const { opened } = await capturingOpenExternal(() => vscode.commands.executeCommand<boolean>('testInbox.openInBrowser'));
    const url = new URL(opened[0]);
    const ticket = /^#ticket=([A-Za-z0-9_.-]+)$/.exec(url.hash)?.[1];
    assert.ok(ticket);
    // The page behind the proxy: its requests carry the editor's origin, not the server's.
    const first = await fetch(`${url.origin}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: external.origin }, body: JSON.stringify({ ticket }) });
    assert.equal(first.status, 201, await first.clone().text());
    const cookie = /^([^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1] ?? '';
    const { pageToken } = (await first.json()) as { pageToken: string };
    const from = (origin: string): Promise<Response> => fetch(`${url.origin}/ui/api/v2/domains`, { headers: { cookie, 'x-test-inbox-session': pageToken, origin } });
    assert.equal((await from(external.origin)).status, 200, 'the declared origin');
    assert.equal((await from('http://evil.test')).status, 403, 'a foreign origin');
  });

  it('is in the status bar menu of the local server', async () => {
    // The menu of a ready local server: Stop, Copy SMTP, Copy SMS, Copy API Token, Copy Provider Settings, then Open in Browser.
    const { opened } = await capturingOpenExternal(() => answering(vscode.commands.executeCommand('testInbox.showMenu'), { next: 5 }));
    assert.equal(opened.length, 1, 'the sixth item opened the web UI');
    assert.match(opened[0], new RegExp(`^${base.replace(/[.]/g, '\\.')}/#ticket=[A-Za-z0-9_.-]+$`));
  });

  it('against the hosted service, says there is no web UI and opens nothing', async () => {
    const hosted = http.createServer((req, res) => {
      if ((req.url ?? '').startsWith('/api/v2/domains/private/inboxes/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ domain: 'private', to: 'x', msgs: [] }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', message: 'not found' }));
    });
    await new Promise<void>((resolve) => hosted.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hosted.address() as AddressInfo).port}`;
    try {
      await setSetting('server', url);
      await answering(vscode.commands.executeCommand('testInbox.setApiToken', 'hosted-browser-token-1234'));
      await waitForState((s) => s.connection.kind === 'ready' && s.connection.testInbox === false, 'attached to the hosted stand-in');
      const { result, opened } = await capturingOpenExternal(() => vscode.commands.executeCommand<boolean>('testInbox.openInBrowser'));
      assert.equal(result, false);
      assert.deepEqual(opened, []);
      await waitForState((s) => s.shown.some((m) => m.where === 'warning' && /hosted service has no Test Inbox web UI/.test(m.text)), 'the warning');
    } finally {
      await vscode.commands.executeCommand('testInbox.clearApiToken');
      await useLocalServer();
      await new Promise<void>((resolve) => hosted.close(() => resolve()));
    }
  });
});
