import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';

describe('API client transport', () => {
  let server: http.Server | undefined;
  let client: InboxApi | undefined;

  afterEach(async () => {
    await client?.dispose();
    client = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((r) => server!.close(() => r()));
      server = undefined;
    }
  });

  async function serve(handler: http.RequestListener): Promise<{ base: string; connections: () => number }> {
    let connections = 0;
    server = http.createServer(handler);
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
  }

  it('reuses keep-alive connections instead of opening one per call', async () => {
    const { base, connections } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"domains":[]}');
    });
    client = createClient({ baseUrl: base, apiToken: 't0ken-abc' });
    for (let i = 0; i < 20; i++) await client.listDomains();
    // fetch's pool may open a second socket while the first is still being released; never one per call.
    assert.ok(connections() <= 2, `${connections()} connections for 20 calls`);
  });

  it('gives a long poll its wait on top of a short default timeout', async () => {
    const { base } = await serve((req, res) => {
      const wait = new URL(req.url ?? '/', 'http://x').searchParams.get('wait');
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"domain":"private","to":"joe","msgs":[]}');
      }, wait ? 600 : 0);
    });
    client = createClient({ baseUrl: base, timeoutMs: 200 });
    const listing = await client.listInbox('private', 'joe', { wait: 1 });
    assert.equal(listing.to, 'joe');
  });

  it('keeps a path prefix of the base URL and sends the user agent', async () => {
    const seen: Array<{ url?: string; ua?: string }> = [];
    const { base } = await serve((req, res) => {
      seen.push({ url: req.url, ua: req.headers['user-agent'] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"service":"test-inbox","version":"1","status":"ok"}');
    });
    client = createClient({ baseUrl: `${base}/mail/`, userAgent: 'test-inbox-vscode/9' });
    assert.equal(client.baseUrl, `${base}/mail`);
    await client.health();
    assert.deepEqual(seen, [{ url: '/mail/healthz', ua: 'test-inbox-vscode/9' }]);
  });

  it('returns attachment bytes exactly, with the type and file name the server gives', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    const { base } = await serve((req, res) => {
      assert.equal(req.url, '/api/v2/domains/private/inboxes/joe/messages/joe-1-2/attachments/3');
      res.writeHead(200, { 'content-type': 'image/x-test', 'content-disposition': `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.bin` });
      res.end(bytes);
    });
    client = createClient({ baseUrl: base });
    const att = await client.downloadAttachment('private', 'joe', 'joe-1-2', 3);
    assert.deepEqual(Buffer.from(att.bytes), bytes);
    assert.equal(att.contentType, 'image/x-test');
    assert.equal(att.filename, 'résumé.bin');
  });

  it('names an attachment by its index when the server gives no file name', async () => {
    const { base } = await serve((_req, res) => res.end('x'));
    client = createClient({ baseUrl: base });
    const att = await client.downloadAttachment('private', 'joe', 'joe-1-2', 0);
    assert.equal(att.filename, 'attachment-0');
    assert.equal(att.contentType, 'application/octet-stream');
  });

  it('reads a gzip-compressed answer and checks its decoded size', async () => {
    const body = JSON.stringify({ domains: [{ name: 'inbox.test', messages: 2, inboxes: 1 }] });
    let acceptEncoding: string | undefined;
    const { base } = await serve((req, res) => {
      acceptEncoding = req.headers['accept-encoding'];
      const zipped = gzipSync(body);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': zipped.length });
      res.end(zipped);
    });
    client = createClient({ baseUrl: base });
    const domains = await client.listDomains();
    assert.match(acceptEncoding ?? '', /gzip/);
    assert.deepEqual(domains.domains.map((d) => d.name), ['inbox.test']);
  });

  it('closes the push stream connection when the subscription is disposed', async () => {
    let streamClosed = false;
    let opened = false;
    const { base } = await serve((req, res) => {
      // The stream asks for an unencoded body, so each event is handed over as it arrives.
      assert.equal(req.headers['accept-encoding'], 'identity');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': ping\n\n');
      opened = true;
      res.on('close', () => (streamClosed = true));
    });
    client = createClient({ baseUrl: base });
    const sub = client.subscribe('inbox.test', 'joe', { onEvent: () => undefined });
    await waitFor(() => opened && sub.state === 'open', 'stream open');
    sub.dispose();
    await waitFor(() => streamClosed, 'the server to see the stream connection close');
  });
});

async function waitFor(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
