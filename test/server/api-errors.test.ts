import assert from 'node:assert/strict';
import { promises as fs, readdirSync } from 'node:fs';
import http from 'node:http';
import * as path from 'node:path';
import type { MaildirStore } from '../../src/server/store/maildir/store';
import { API_TOKEN, rawRequest, DOMAIN, ON_MAILDIR, WEBHOOK_TOKEN, startApi, type Harness, type Reply } from './api-harness';

/** Every error: the right status, a JSON `{status:"error", message}` naming the problem, never HTML or a stack. */
function assertError(r: Reply, status: number, message: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/, r.text);
  assert.deepEqual(Object.keys(r.json).sort(), ['message', 'status']);
  assert.equal(r.json.status, 'error');
  assert.match(r.json.message, message);
  assert.doesNotMatch(r.text, /<html|\bat [\w.<>]+ \(|node:internal/i);
}

describe('HTTP API: bad input gets a clear 4xx and loses nothing', () => {
  let h: Harness;
  const inject = '/api/v2/domains/private/inboxes/joe/';
  const webhook = `/api/v2/domains/private/webhook/joe?whtoken=${WEBHOOK_TOKEN}`;

  beforeEach(async () => {
    h = await startApi({ maxBodyBytes: 4096 });
  });
  afterEach(async () => {
    await h.close();
  });

  /** Nothing was stored: no domain in the store and, on the Maildir, no domain directory under mail/ (the server's own files live outside it). */
  async function assertNothingStored(): Promise<void> {
    assert.deepEqual(await h.store.domains(), []);
    if (!ON_MAILDIR) return;
    const entries = readdirSync(path.join(h.dir, 'mail'));
    assert.deepEqual(entries, []);
  }

  async function assertStillServing(): Promise<void> {
    const r = await h.call('POST', inject, { body: { subject: 'still fine' } });
    assert.equal(r.status, 200, r.text);
  }

  it('refuses malformed JSON with 400 naming JSON, on inject and webhook', async () => {
    for (const target of [inject, webhook]) {
      for (const body of ['{"from": "a", ', '{from: "a"}', "{'a':1}", '\u0000']) {
        assertError(await h.call('POST', target, { body, anonymous: target === webhook }), 400, /not valid JSON/);
      }
    }
    await assertNothingStored();
    await assertStillServing();
  });

  it('refuses a body that is not a JSON object, or empty', async () => {
    for (const [body, what] of [
      ['[]', /an array/],
      ['null', /null/],
      ['"text"', /string/],
      ['42', /number/],
    ] as const) {
      assertError(await h.call('POST', inject, { body }), 400, what);
    }
    assertError(await h.call('POST', inject, { body: '' }), 400, /empty/);
    await assertNothingStored();
  });

  it('refuses fields of the wrong type, naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ from: 7 }, /"from" must be a string, not number/],
      [{ subject: { a: 1 } }, /"subject" must be a string, not object/],
      [{ text: ['a'] }, /"text" must be a string, not an array/],
      [{ to: null }, /"to" must be a string, not null/],
      [{ text: true }, /"text" must be a string, not boolean/],
    ];
    for (const [body, message] of cases) {
      assertError(await h.call('POST', inject, { body }), 400, message);
      assertError(await h.call('POST', webhook, { body, anonymous: true }), 400, message);
    }
    await assertNothingStored();
  });

  it('refuses a sender with line breaks (header injection)', async () => {
    assertError(await h.call('POST', inject, { body: { from: 'a@b.test\r\nBcc: x@evil.test' } }), 400, /from must not contain line breaks/);
    await assertNothingStored();
  });

  it('refuses an oversized body with 413, whether its length is declared or chunked', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(5000) });
    assertError(await h.call('POST', inject, { body: big }), 413, /larger than 4096 bytes/);
    const chunked = await new Promise<Reply>((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: h.port, method: 'POST', path: webhook, headers: { host: 'localhost', 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, bytes: Buffer.from(text), json: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write('x'.repeat(1000));
      req.end();
    });
    assertError(chunked, 413, /larger than 4096 bytes/);
    await assertNothingStored();
    await assertStillServing();
  });

  it('refuses a body that is not declared as JSON with 415', async () => {
    assertError(await h.call('POST', inject, { body: 'from=a&text=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, /application\/json/);
    assertError(await h.call('POST', inject, { body: '{"text":"b"}', headers: { 'content-type': undefined } }), 415, /no content type/);
    assertError(await h.call('POST', webhook, { anonymous: true, body: '{"text":"b"}', headers: { 'content-type': 'text/plain' } }), 415, /text\/plain/);
    assert.equal((await h.call('POST', inject, { body: '{"text":"b"}', headers: { 'content-type': 'Application/JSON; charset=utf-8' } })).status, 200);
  });

  it('answers 404 JSON to unknown routes', async () => {
    // `/` is the web UI's page (webui-routes.test.ts); every other path outside the API's is unknown.
    for (const p of ['/index.html', '/ui', '/ui/nope.js', '/api/v1/domains', '/api/v2', '/api/v2/domains/private', '/api/v2/domains/private/inboxes/joe/messages/joe-1-1/nope', '/api/v2/domains/private/things/joe']) {
      assertError(await h.call('GET', p), 404, /unknown route/);
    }
  });

  it('answers 405 with Allow to a wrong method', async () => {
    const r = await h.call('PUT', '/api/v2/domains/private/inboxes/joe', { body: {} });
    assertError(r, 405, /PUT is not allowed/);
    assert.equal(r.headers.allow, 'GET, HEAD, POST, DELETE');
    assertError(await h.call('GET', webhook, { anonymous: true }), 405, /use POST/);
    assertError(await h.call('POST', '/api/v2/domains'), 405, /use GET/);
    // A route that answers PUT says so (the fault rules' set, docs/chaos.md).
    const chaos = await h.call('POST', '/api/v2/chaos', { body: {} });
    assertError(chaos, 405, /POST is not allowed here; use GET or HEAD or PUT or DELETE/);
    assert.equal(chaos.headers.allow, 'GET, HEAD, PUT, DELETE');
  });

  it('refuses bad inbox names on every route: traversal (also percent-encoded), control characters, over-long', async () => {
    const bad: Array<[string, RegExp]> = [
      ['..', /path/],
      ['%2e%2e', /path/],
      ['%2E%2E%2Fetc', /path/],
      ['a%2Fb', /path/],
      ['a%5Cb', /path/],
      ['a%00b', /control/],
      ['a%0Ab', /control/],
      ['a%0D%0Ab', /control/],
      ['x'.repeat(65), /longer than 64/],
      ['bad%20name', /may contain only/],
      ['.hidden', /start with a dot/],
      ['%', /percent-encoding/],
      ['%E0%A4%A', /percent-encoding/],
    ];
    for (const [inbox, message] of bad) {
      assertError(await h.call('GET', `/api/v2/domains/private/inboxes/${inbox}`), 400, message);
      assertError(await h.call('POST', `/api/v2/domains/private/inboxes/${inbox}/`, { body: { text: 'x' } }), 400, message);
      assertError(await h.call('POST', `/api/v2/domains/private/webhook/${inbox}?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { text: 'x' } }), 400, message);
      assertError(await h.call('DELETE', `/api/v2/domains/private/inboxes/${inbox}`), 400, message);
    }
    assertError(await h.call('POST', `/api/v2/domains/private/webhook/?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: '../../etc' } }), 400, /bad field "to".*path/);
    assertError(await h.call('POST', '/api/v2/domains/private/inboxes/*', { body: { text: 'x' } }), 400, /only for reading/);
    await assertNothingStored();
    // Nothing escaped the data dir either.
    const parent = await fs.readdir(path.dirname(h.dir));
    assert.ok(!parent.includes('etc') && !parent.includes('joe'));
  });

  it('refuses bad domains', async () => {
    assertError(await h.call('GET', '/api/v2/domains/exa_mple/inboxes/joe'), 400, /bad domain/);
    assertError(await h.call('POST', '/api/v2/domains/-x.test/inboxes/joe', { body: {} }), 400, /bad domain/);
    assertError(await h.call('POST', `/api/v2/domains/a..b/webhook/?whtoken=${WEBHOOK_TOKEN}`, { anonymous: true, body: { to: 'joe' } }), 400, /bad domain/);
  });

  it('refuses bad message ids and attachment ids with 400', async () => {
    for (const id of ['abc', 'joe-1', 'joe-x-1', '..%2Fjoe-1-2', '-1-2', 'joe-1-2%00']) {
      assertError(await h.call('GET', `/api/v2/domains/private/inboxes/joe/messages/${id}`), 400, /bad message id/);
      assertError(await h.call('GET', `/api/v2/domains/private/messages/${id}/raw`), 400, /bad message id/);
      assertError(await h.call('DELETE', `/api/v2/domains/private/messages/${id}`), 400, /bad message id/);
    }
    assertError(await h.call('GET', '/api/v2/domains/private/messages/joe-1-2/attachments/first'), 400, /attachment id must be a number/);
  });

  it('refuses bad list parameters with 400 naming the parameter', async () => {
    const cases: Array<[string, RegExp]> = [
      ['limit=0', /limit/],
      ['limit=501', /limit/],
      ['limit=ten', /limit/],
      ['limit=-1', /limit/],
      ['skip=-1', /skip/],
      ['skip=1.5', /skip/],
      ['sort=sideways', /sort/],
      ['cursor=not-an-id', /bad message id/],
      ['wait=-1', /wait/],
      ['wait=soon', /wait/],
      ['wait=10y', /wait must be a number of seconds or a duration such as 500ms, 10s, 1m/],
      ['wait=1.m', /wait/],
    ];
    for (const [q, message] of cases) assertError(await h.call('GET', `/api/v2/domains/private/inboxes/joe?${q}`), 400, message);
  });

  it('answers malformed HTTP with a JSON 400 and keeps serving', async () => {
    const reply = await rawRequest(h.port, 'GARBAGE\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 400 /);
    assert.match(reply, /content-type: application\/json/i);
    assert.match(reply, /"status":"error"/);
    const noHost = await rawRequest(h.port, `GET /api/v2/domains HTTP/1.0\r\nAuthorization: ${API_TOKEN}\r\n\r\n`);
    assert.match(noHost, /^HTTP\/1\.1 400 /);
    assert.match(noHost, /no Host header/);
    await assertStillServing();
  });

  it('answers a failed write with a JSON 500, stores nothing, and logs the route without the webhook token', async function () {
    // The fault is a Maildir's (PostgreSQL's lost database is test/server/team.test.ts).
    if (!ON_MAILDIR) this.skip();
    // `new` is a file instead of a directory: the rename into it fails.
    const inboxDir = path.join(h.dir, 'mail', DOMAIN, 'broken');
    await fs.mkdir(path.join(inboxDir, 'tmp'), { recursive: true });
    await fs.mkdir(path.join(inboxDir, 'cur'), { recursive: true });
    await fs.writeFile(path.join(inboxDir, 'new'), 'not a directory');
    const r = await h.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/broken`, { anonymous: true, body: { text: 'x' } });
    assertError(r, 500, /see the server log/);
    assert.deepEqual((await h.store.list(undefined, 'broken', { limit: 10, skip: 0, sort: 'descending' })).msgs, []);
    const line = h.logs.find((l) => l.level === 'error');
    assert.ok(line, JSON.stringify(h.logs));
    assert.match(line.msg, /^POST \/api\/v2\/domains\/…\/webhook\/broken: storage failed/);
    for (const l of h.logs) assert.ok(!l.msg.includes(WEBHOOK_TOKEN), l.msg);
    await assertStillServing();
  });

  it('answers a storage failure with a JSON 500 and a log line, without a stack or token to the client', async function () {
    // The fault is a Maildir's (PostgreSQL's lost database is test/server/team.test.ts).
    if (!ON_MAILDIR) this.skip();
    const r = await h.call('POST', inject, { body: { text: 'x' } });
    const meta = await h.store.get(r.json.id);
    assert.ok(meta);
    // Until its file is written a message is read from memory: wait for the file to break it.
    await (h.store as MaildirStore).filesWritten();
    const dir = path.join(h.dir, 'mail', DOMAIN, 'joe', 'new');
    // Replace the stored file by a directory of the same name: reading it fails with EISDIR.
    for (const f of readdirSync(dir)) {
      await fs.rm(path.join(dir, f));
      await fs.mkdir(path.join(dir, f));
    }
    const failed = await h.call('GET', `/api/v2/domains/private/inboxes/joe/messages/${r.json.id}?token=${API_TOKEN}`);
    assertError(failed, 500, /see the server log/);
    assert.ok(h.logs.some((l) => l.level === 'error' && /storage failed/.test(l.msg)));
    for (const l of h.logs) assert.ok(!l.msg.includes(API_TOKEN) && !l.msg.includes(WEBHOOK_TOKEN), l.msg);
    assert.equal((await h.call('GET', '/healthz')).status, 200);
  });
});
