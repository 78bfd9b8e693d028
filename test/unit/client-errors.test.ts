import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { createClient } from '../../src/api/client';
import { ApiError, parseRetryAfter, type ApiErrorCode } from '../../src/api/errors';
import type { InboxApi } from '../../src/api/types';
import { isTokenComplaint } from '../../src/api/errors';

const TOKEN = 'sekret-api-token-0123456789';
const ID = 'joe-1763776000-1';

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string, hitNo: number) => void;

/** A real HTTP server on port 0 that answers with `handler` and records every request. */
async function startServer(handler: Handler): Promise<{ base: string; hits: Hit[]; close: () => Promise<void> }> {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body, hits.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const listing = (msgs: unknown[]) => ({ domain: 'inbox.test', to: 'joe', msgs });
const aSummary = (over: Record<string, unknown> = {}) => ({
  subject: 'Hello',
  domain: 'inbox.test',
  from: 'Acme <no-reply@acme.test>',
  id: ID,
  to: 'joe',
  time: 1763776000000,
  seconds_ago: 5,
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(ApiError.is(e), `expected an ApiError, got ${inspect(e)}`);
    return e;
  }
  assert.fail('expected the call to fail');
}

function assertNoToken(err: ApiError): void {
  assert.ok(!err.message.includes(TOKEN), `token in message: ${err.message}`);
  assert.ok(!(err.stack ?? '').includes(TOKEN), 'token in stack');
  assert.ok(!inspect(err, { depth: 5, showHidden: true }).includes(TOKEN), 'token in inspected error');
  assert.ok(!JSON.stringify(err).includes(TOKEN), 'token in JSON of error');
}

describe('API client errors', () => {
  let srv: Awaited<ReturnType<typeof startServer>> | undefined;
  let client: InboxApi | undefined;
  const logs: string[] = [];

  function clientFor(base: string, over: Partial<Parameters<typeof createClient>[0]> = {}): InboxApi {
    client = createClient({ baseUrl: base, apiToken: TOKEN, log: (_l, m) => logs.push(m), ...over });
    return client;
  }

  afterEach(async () => {
    await client?.dispose();
    await srv?.close();
    client = undefined;
    srv = undefined;
    for (const line of logs) assert.ok(!line.includes(TOKEN), `token in log line: ${line}`);
    logs.length = 0;
  });

  it('sends the API token as the raw Authorization header and never in the URL', async () => {
    srv = await startServer((_req, res) => json(res, 200, listing([aSummary()])));
    const api = clientFor(srv.base);
    const result = await api.listInbox('private', 'joe', { limit: 10, sort: 'ascending' });
    assert.equal(result.msgs.length, 1);
    assert.equal(srv.hits[0].headers.authorization, TOKEN);
    assert.equal(srv.hits[0].url, '/api/v2/domains/private/inboxes/joe?limit=10&sort=ascending');
    assert.ok(!srv.hits[0].url.includes(TOKEN));
  });

  it('maps 401 to unauthorized with an actionable message', async () => {
    srv = await startServer((_req, res) => json(res, 401, { status: 'error', message: 'API token required' }));
    const err = await rejection(clientFor(srv.base).listDomains());
    assert.equal(err.code, 'unauthorized');
    assert.equal(err.status, 401);
    assert.equal(err.field, 'apiToken');
    assert.match(err.message, /rejected the API token\. Set a valid token\./);
    assert.match(err.message, /API token required/);
    assertNoToken(err);
  });

  it('asks for a token when none is set and the server answers 401', async () => {
    srv = await startServer((_req, res) => json(res, 401, { status: 'error', message: 'no token' }));
    const err = await rejection(clientFor(srv.base, { apiToken: undefined }).listDomains());
    assert.equal(err.code, 'unauthorized');
    assert.match(err.message, /requires an API token\. Set the API token\./);
    assert.equal(srv.hits[0].headers.authorization, undefined);
  });

  it('maps 403 to unauthorized', async () => {
    srv = await startServer((_req, res) => json(res, 403, { status: 'error', message: 'wrong token' }));
    assert.equal((await rejection(clientFor(srv.base).listDomains())).code, 'unauthorized');
  });

  it("maps the hosted service's 400 'invalid token' to unauthorized", async () => {
    srv = await startServer((_req, res) => json(res, 400, { status: 'error', message: 'Invalid API Token' }));
    const err = await rejection(clientFor(srv.base).listInbox('private', 'joe'));
    assert.equal(err.code, 'unauthorized');
    assert.equal(err.status, 400);
    assert.equal(err.serverMessage, 'Invalid API Token');
  });

  it('tells complaints about the token from other 400 messages', () => {
    for (const m of ['Invalid API Token', 'invalid token', 'API key missing', 'token is not valid', 'Unauthorized', 'Bad token supplied', 'the token you sent is expired']) {
      assert.ok(isTokenComplaint(m), m);
    }
    for (const m of [
      'request body is not valid JSON: Unexpected token } in JSON at position 5',
      'field "subject" must be a string, not number',
      'bad inbox "a/b": inbox name must not be a path',
      'limit must be a whole number from 1 to 500',
      'no inbox: name it in the path or in the "to" field',
    ]) {
      assert.ok(!isTokenComplaint(m), m);
    }
  });

  it('maps any other 400 to badRequest and quotes the server message', async () => {
    srv = await startServer((_req, res) => json(res, 400, { status: 'error', message: 'subject must be a string' }));
    const err = await rejection(clientFor(srv.base).inject('private', 'joe', { subject: 'x' }));
    assert.equal(err.code, 'bad_request');
    assert.match(err.message, /subject must be a string/);
  });

  it('does not follow a redirect (the token would go along) and says where it points', async () => {
    srv = await startServer((_req, res) => {
      res.writeHead(301, { location: 'https://api.example.test/api/v2/domains' });
      res.end();
    });
    const err = await rejection(clientFor(srv.base).listDomains());
    assert.equal(err.code, 'bad_request');
    assert.equal(err.status, 301);
    assert.match(err.message, /redirects to https:\/\/api\.example\.test/);
    assert.equal(srv.hits.length, 1);
  });

  it('never shows the token even when the server echoes it back', async () => {
    srv = await startServer((_req, res) => json(res, 400, { status: 'error', message: `token ${TOKEN} is not valid` }));
    const err = await rejection(clientFor(srv.base).listDomains());
    assert.equal(err.code, 'unauthorized');
    assert.match(err.message, /\[redacted\]/);
    assertNoToken(err);
  });

  it('maps 404 to notFound naming what was asked for', async () => {
    srv = await startServer((_req, res) => json(res, 404, { status: 'error', message: 'no such message' }));
    const err = await rejection(clientFor(srv.base).getMessage('private', 'joe', ID));
    assert.equal(err.code, 'not_found');
    assert.match(err.message, new RegExp(`message ${ID}`));
    assert.match(err.message, /no such message/);
    assert.equal(srv.hits.length, 1, '404 is not retried');
  });

  it('retries a GET after 429, honouring Retry-After, and succeeds', async () => {
    srv = await startServer((_req, res, _b, n) => (n === 1 ? json(res, 429, { message: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { domains: [] })));
    const result = await clientFor(srv.base).listDomains();
    assert.deepEqual(result, { domains: [] });
    assert.equal(srv.hits.length, 2);
  });

  it('reports rateLimited with retryAfterMs when retries are used up', async () => {
    srv = await startServer((_req, res) => json(res, 429, { message: 'slow down' }, { 'retry-after': '1' }));
    const err = await rejection(clientFor(srv.base, { retries: 0 }).listDomains());
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.retryAfterMs, 1000);
    assert.match(err.message, /wait 1 s/);
    assert.equal(srv.hits.length, 1);
  });

  it('does not wait for a Retry-After beyond the cap', async () => {
    srv = await startServer((_req, res) => json(res, 429, {}, { 'retry-after': '120' }));
    const err = await rejection(clientFor(srv.base).listDomains());
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.retryAfterMs, 120_000);
    assert.equal(srv.hits.length, 1);
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('3', now), 3000);
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
  });

  it('retries a GET on 500 and reports server once retries are used up', async () => {
    srv = await startServer((_req, res) => json(res, 500, { status: 'error', message: 'disk on fire' }));
    const err = await rejection(clientFor(srv.base, { retries: 2 }).listInbox('private', 'joe'));
    assert.equal(err.code, 'server');
    assert.equal(err.status, 500);
    assert.match(err.message, /disk on fire/);
    assert.equal(srv.hits.length, 3);
  });

  it('recovers when a retried GET succeeds after a 503', async () => {
    srv = await startServer((_req, res, _b, n) => (n === 1 ? json(res, 503, {}) : json(res, 200, listing([]))));
    const result = await clientFor(srv.base).listInbox('private', 'joe');
    assert.equal(result.to, 'joe');
    assert.equal(srv.hits.length, 2);
  });

  it('never retries a POST or a DELETE', async () => {
    srv = await startServer((_req, res) => json(res, 500, { status: 'error', message: 'boom' }));
    const api = clientFor(srv.base, { retries: 3 });
    assert.equal((await rejection(api.inject('private', 'joe', { subject: 'hi', text: 'x' }))).code, 'server');
    assert.equal(srv.hits.length, 1);
    assert.equal((await rejection(api.deleteMessage('private', 'joe', ID))).code, 'server');
    assert.equal(srv.hits.length, 2);
    assert.equal((await rejection(api.clearInbox('private', 'joe'))).code, 'server');
    assert.equal(srv.hits.length, 3);
    assert.deepEqual(
      srv.hits.map((h) => h.method),
      ['POST', 'DELETE', 'DELETE'],
    );
  });

  it('times out a slow server with code timeout', async () => {
    srv = await startServer((_req, res) => {
      const t = setTimeout(() => json(res, 200, { domains: [] }), 10_000);
      res.on('close', () => clearTimeout(t));
    });
    const err = await rejection(clientFor(srv.base, { timeoutMs: 300 }).listDomains());
    assert.equal(err.code, 'timeout');
    assert.match(err.message, /did not answer/);
  });

  it('lets one call override the default timeout', async () => {
    srv = await startServer((_req, res) => {
      const t = setTimeout(() => json(res, 200, { domains: [] }), 10_000);
      res.on('close', () => clearTimeout(t));
    });
    const err = await rejection(clientFor(srv.base).listDomains({ timeoutMs: 200 }));
    assert.equal(err.code, 'timeout');
  });

  it('maps a connection reset to network, retrying GET but not POST', async () => {
    srv = await startServer((req) => req.socket.destroy());
    const api = clientFor(srv.base, { retries: 2 });
    const err = await rejection(api.listDomains());
    assert.equal(err.code, 'network');
    assert.match(err.message, /Could not reach the server/);
    assertNoToken(err);
    assert.equal(srv.hits.length, 3);
    const postErr = await rejection(api.inject('private', 'joe', { text: 'x' }));
    assert.equal(postErr.code, 'network');
    assert.equal(srv.hits.length, 4);
  });

  it('maps a refused connection to network with a hint', async () => {
    srv = await startServer((_req, res) => json(res, 200, {}));
    const base = srv.base;
    await srv.close();
    srv = undefined;
    const err = await rejection(clientFor(base, { retries: 0 }).listDomains());
    assert.equal(err.code, 'network');
    assert.match(err.message, /nothing is listening/);
    assert.equal(err.cause?.code, 'ECONNREFUSED');
    // The cause is the system error fetch wraps, not its generic "fetch failed".
    assert.match(err.cause?.message ?? '', /ECONNREFUSED/);
  });

  it('maps a body cut short by the server to network and retries the GET', async () => {
    srv = await startServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"domains":[');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const err = await rejection(clientFor(srv.base, { retries: 1 }).listDomains());
    assert.equal(err.code, 'network');
    assert.match(err.message, /closed unexpectedly|reset/);
    assert.equal(srv.hits.length, 2);
  });

  it('says why fetch refuses a port reserved for another protocol, without connecting', async () => {
    // 10080 is one of the Fetch standard's "bad ports"; fetch fails before any connection.
    const err = await rejection(clientFor('http://127.0.0.1:10080', { retries: 0 }).listDomains());
    assert.equal(err.code, 'network');
    assert.match(err.message, /refuses this port/);
    assert.equal(err.cause?.code, 'BAD_PORT');
  });

  it('names the field of a response with the wrong shape', async () => {
    const msgs = [aSummary(), aSummary(), aSummary(), aSummary({ time: '2026-01-01' })];
    srv = await startServer((_req, res) => json(res, 200, listing(msgs)));
    const err = await rejection(clientFor(srv.base).listInbox('private', 'joe'));
    assert.equal(err.code, 'protocol');
    assert.equal(err.field, 'msgs[3].time');
    assert.match(err.message, /msgs\[3\]\.time: expected integer, got string/);
  });

  it('reports a missing field as missing', async () => {
    srv = await startServer((_req, res) => json(res, 200, { domain: 'x', msgs: [] }));
    const err = await rejection(clientFor(srv.base).listInbox('private', 'joe'));
    assert.equal(err.code, 'protocol');
    assert.match(err.message, /to: expected string, but it is missing/);
  });

  it('reports a non-JSON answer as protocol, quoting its start', async () => {
    srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome to nginx</body></html>');
    });
    const err = await rejection(clientFor(srv.base).listDomains());
    assert.equal(err.code, 'protocol');
    assert.match(err.message, /not JSON \(it starts with "<html>/);
  });

  it('treats an HTML error page as the status it came with', async () => {
    srv = await startServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>Bad gateway</html>');
    });
    const err = await rejection(clientFor(srv.base, { retries: 0 }).listDomains());
    assert.equal(err.code, 'server');
    assert.equal(err.serverMessage, undefined);
  });

  it('cancels a call in flight through its AbortSignal', async () => {
    srv = await startServer((_req, res) => {
      const t = setTimeout(() => json(res, 200, { domains: [] }), 10_000);
      res.on('close', () => clearTimeout(t));
    });
    const ac = new AbortController();
    const p = clientFor(srv.base).listDomains({ signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const err = await rejection(p);
    assert.equal(err.code, 'cancelled');
  });

  it('makes no request with an already aborted signal', async () => {
    srv = await startServer((_req, res) => json(res, 200, { domains: [] }));
    const ac = new AbortController();
    ac.abort();
    const err = await rejection(clientFor(srv.base).listDomains({ signal: ac.signal }));
    assert.equal(err.code, 'cancelled');
    assert.equal(srv.hits.length, 0);
  });

  it('cancels calls in flight when the client is disposed', async () => {
    srv = await startServer((_req, res) => {
      const t = setTimeout(() => json(res, 200, { domains: [] }), 10_000);
      res.on('close', () => clearTimeout(t));
    });
    const api = clientFor(srv.base);
    const outcome = rejection(api.listDomains());
    await new Promise((r) => setTimeout(r, 50));
    await api.dispose();
    assert.equal((await outcome).code, 'cancelled');
    assert.equal((await rejection(api.listDomains())).code, 'cancelled');
  });

  it('rejects invalid input without any network call', async () => {
    const server = await startServer((_req, res) => json(res, 200, {}));
    srv = server;
    const api = clientFor(server.base);
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => api.listInbox('private', '../etc'), 'inbox'],
      [() => api.listInbox('not a domain', 'joe'), 'domain'],
      [() => api.listInbox('private', 'joe', { limit: 0 }), 'limit'],
      [() => api.listInbox('private', 'joe', { limit: 1.5 }), 'limit'],
      [() => api.listInbox('private', 'joe', { skip: -1 }), 'skip'],
      [() => api.listInbox('private', 'joe', { wait: 61 }), 'wait'],
      [() => api.listInbox('private', 'joe', { sort: 'sideways' as 'ascending' }), 'sort'],
      [() => api.getMessage('private', 'joe', '../not-an-id'), 'id'],
      // (A phone number written with + is its phone inbox: test/server/phone-inbox.test.ts.)
      [() => api.getMessage('private', 'joe bloggs', 'x-1-2'), 'inbox'],
      [() => api.inject('private', '*', { text: 'x' }), 'inbox'],
      [() => api.inject('private', 'joe', { text: 42 as unknown as string }), 'text'],
      [() => api.downloadAttachment('private', 'joe', ID, -1), 'attachmentId'],
      [() => api.deliverWebhook('ftp://x/y', { text: 'x' }), 'url'],
      [() => api.listDomains({ timeoutMs: -1 }), 'timeoutMs'],
      [() => api.deliverWebhook(`${server.base}/api/v2/domains/private/webhook/?whtoken=w`, { to: 'a/b' }), 'inbox'],
    ];
    for (const [p, field] of cases) {
      const err = await rejection(p());
      assert.equal(err.code, 'invalid_input', `${field}: ${err.message}`);
      assert.equal(err.field, field, err.message);
    }
    assert.equal(srv.hits.length, 0);
  });

  it('refuses a base URL with credentials or a query, without echoing it', () => {
    for (const bad of [`http://u:${TOKEN}@127.0.0.1:1`, `http://127.0.0.1:1/?token=${TOKEN}`, 'not a url']) {
      try {
        createClient({ baseUrl: bad });
        assert.fail(`accepted ${bad}`);
      } catch (e) {
        assert.ok(ApiError.is(e, 'invalid_input'));
        assertNoToken(e);
      }
    }
  });

  it('encodes every path segment', async () => {
    srv = await startServer((_req, res) => json(res, 200, listing([])));
    await clientFor(srv.base).listInbox('private', "o'brien+test");
    assert.equal(srv.hits[0].url, "/api/v2/domains/private/inboxes/o'brien%2Btest");
  });

  it('sends webhook deliveries without the API token', async () => {
    srv = await startServer((_req, res) => json(res, 200, { status: 'ok', id: ID }));
    const result = await clientFor(srv.base).deliverWebhook(`${srv.base}/api/v2/domains/private/webhook/joe?whtoken=wh-123`, { subject: 'S', text: 'T' });
    assert.deepEqual(result, { status: 'ok', id: ID });
    assert.equal(srv.hits[0].headers.authorization, undefined);
    assert.equal(srv.hits[0].headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(srv.hits[0].body), { subject: 'S', text: 'T' });
    assert.ok(!logs.some((l) => l.includes('wh-123')), 'webhook token in a log line');
  });

  it('says the webhook token was rejected on a webhook 403', async () => {
    srv = await startServer((_req, res) => json(res, 403, { status: 'error', message: 'bad webhook token' }));
    const err = await rejection(clientFor(srv.base).deliverWebhook(`${srv.base}/api/v2/domains/wh-123/webhook/joe/`, { text: 'T' }));
    assert.equal(err.code, 'unauthorized');
    assert.equal(err.field, 'webhookToken');
    assert.match(err.message, /webhook token/);
  });

  it('recognises ApiErrors by tag, not by class identity', () => {
    const err = new ApiError('network', 'x');
    assert.ok(ApiError.is(err));
    assert.ok(ApiError.is(err, 'network'));
    assert.ok(!ApiError.is(err, 'timeout'));
    // A copy of the class from another bundle carries the same registered symbol.
    const foreign = Object.assign(new Error('y'), { code: 'timeout' as ApiErrorCode, [Symbol.for('test-inbox.api.ApiError')]: true });
    assert.ok(ApiError.is(foreign, 'timeout'));
    assert.ok(!ApiError.is(Object.assign(new Error('z'), { code: 'timeout' })));
    assert.ok(!ApiError.is(undefined));
  });
});
