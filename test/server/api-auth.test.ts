import assert from 'node:assert/strict';
import { HostCheck, TokenCheck, checkToken } from '../../src/server/http/auth';
import { createHttpApi } from '../../src/server/http/httpApi';
import { API_TOKEN, DOMAIN, WEBHOOK_TOKEN, startApi, type Harness, type Reply } from './api-harness';

function assertError(r: Reply, status: number, message: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(r.json.status, 'error');
  assert.match(r.json.message, message);
}

describe('HTTP API: authentication, Host check and CORS (docs/api.md §5)', () => {
  let h: Harness;
  let id: string;

  beforeEach(async () => {
    h = await startApi();
    const r = await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: { subject: 'seed', text: 'https://a.test/x' } });
    id = r.json.id;
  });
  afterEach(async () => {
    await h.close();
  });

  /** Every API-token route, with a body where it takes one. */
  const apiRoutes = (): Array<[string, string, unknown?]> => [
    ['GET', '/api/v2/domains'],
    ['GET', '/api/v2/domains/private/inboxes/joe'],
    ['POST', '/api/v2/domains/private/inboxes/joe/', { text: 'x' }],
    ['POST', '/api/v2/domains/private/inboxes/joe/messages', { text: 'x' }],
    ['GET', `/api/v2/domain/private/inboxes/joe/messages/${id}`],
    ['GET', `/api/v2/domains/private/messages/${id}`],
    ['GET', `/api/v2/domains/private/inboxes/joe/messages/${id}/links`],
    ['GET', `/api/v2/domains/private/inboxes/joe/messages/${id}/attachments`],
    ['GET', `/api/v2/domains/private/inboxes/joe/messages/${id}/raw`],
    ['DELETE', `/api/v2/domains/private/inboxes/joe/messages/${id}`],
    ['DELETE', '/api/v2/domains/private/inboxes/nobody'],
  ];

  it('refuses every API route without a token with 401', async () => {
    for (const [method, target, body] of apiRoutes()) assertError(await h.call(method, target, { anonymous: true, body }), 401, /missing API token/);
    assertError(await h.call('GET', '/api/v2/domains/private/stream', { anonymous: true }), 401, /missing API token/);
  });

  it('refuses every API route with a wrong token with 403', async () => {
    for (const [method, target, body] of apiRoutes()) {
      assertError(await h.call(method, target, { body, headers: { authorization: 'nope' } }), 403, /wrong API token/);
    }
  });

  it('refuses the webhook token on API routes (header, ?token= and ?whtoken=)', async () => {
    for (const [method, target, body] of apiRoutes()) {
      assertError(await h.call(method, target, { body, headers: { authorization: WEBHOOK_TOKEN } }), 403, /wrong API token/);
      const sep = target.includes('?') ? '&' : '?';
      assertError(await h.call(method, `${target}${sep}token=${WEBHOOK_TOKEN}`, { body, anonymous: true }), 403, /wrong API token/);
      assertError(await h.call(method, `${target}${sep}whtoken=${WEBHOOK_TOKEN}`, { body, anonymous: true }), 401, /missing API token/);
    }
    assert.equal((await h.store.list(undefined, 'joe', { limit: 10, skip: 0, sort: 'descending' })).total, 1);
  });

  it('accepts the API token as the raw Authorization header and as ?token=', async () => {
    for (const [method, target, body] of apiRoutes()) {
      const r = await h.call(method, target, { body });
      assert.ok(r.status === 200 || r.status === 404, `${method} ${target}: ${r.status} ${r.text}`);
    }
    const q = await h.call('GET', `/api/v2/domains/private/inboxes/joe?token=${encodeURIComponent(API_TOKEN)}`, { anonymous: true });
    assert.equal(q.status, 200);
  });

  it('accepts the API token as "Authorization: Bearer <token>" (as /mcp and the README\'s MCP configs send it) on every API route', async () => {
    for (const [method, target, body] of apiRoutes()) {
      const r = await h.call(method, target, { body, headers: { authorization: `Bearer ${API_TOKEN}` } });
      assert.ok(r.status === 200 || r.status === 404, `${method} ${target}: ${r.status} ${r.text}`);
    }
    for (const form of [`bearer ${API_TOKEN}`, `BEARER  ${API_TOKEN}`]) assert.equal((await h.call('GET', '/api/v2/domains', { headers: { authorization: form } })).status, 200, form);
  });

  it('refuses a Bearer of any other token: the webhook token, the provider key, the Twilio auth token, garbage, nothing', async () => {
    const other = await startApi({ providerKey: 'provider-key-5e1a9c', twilioAuthToken: 'twilio-token-7b3d2f' });
    try {
      for (const wrong of [WEBHOOK_TOKEN, 'provider-key-5e1a9c', 'twilio-token-7b3d2f', 'garbage', `${API_TOKEN}x`, `x${API_TOKEN}`]) {
        for (const [method, target, body] of apiRoutes()) {
          assertError(await other.call(method, target, { body, headers: { authorization: `Bearer ${wrong}` } }), 403, /wrong API token/);
        }
      }
      assertError(await other.call('GET', '/api/v2/domains', { headers: { authorization: 'Bearer ' } }), 403, /wrong API token/);
      assertError(await other.call('GET', '/api/v2/domains', { headers: { authorization: `Basic ${Buffer.from(`user:${API_TOKEN}`).toString('base64')}` } }), 403, /wrong API token/);
    } finally {
      await other.close();
    }
  });

  it('refuses the API token on every webhook form, and a missing webhook token with 401', async () => {
    const body = { to: 'hooked', text: 'x' };
    const withApiToken = [
      `/api/v2/domains/${API_TOKEN}/webhook/hooked/`,
      `/api/v2/domains/${DOMAIN}/webhook/?whtoken=${API_TOKEN}`,
      `/api/v2/domains/private/webhook/?whtoken=${API_TOKEN}`,
      `/api/v2/domains/private/webhook/hooked?whtoken=${API_TOKEN}`,
    ];
    for (const p of withApiToken) assertError(await h.call('POST', p, { body }), 403, /wrong webhook token/);
    // The API token in the Authorization header or ?token= does not open a webhook route either.
    assertError(await h.call('POST', `/api/v2/domains/private/webhook/hooked?token=${API_TOKEN}`, { body }), 403, /wrong webhook token/);
    assertError(await h.call('POST', '/api/v2/domains/private/webhook/hooked?whtoken=', { body }), 401, /missing webhook token/);
    assert.deepEqual((await h.store.list(undefined, 'hooked', { limit: 10, skip: 0, sort: 'descending' })).msgs, []);
  });

  it('checks the webhook token before reading the body', async () => {
    const r = await h.call('POST', `/api/v2/domains/private/webhook/hooked?whtoken=wrong`, { body: '{not json' });
    assertError(r, 403, /wrong webhook token/);
  });

  it('answers 421 to a Host that is not loopback or allowed (DNS rebinding)', async () => {
    for (const host of ['evil.test', 'evil.test:80', '127.0.0.1.evil.test', 'localhost.evil.test:2580', '[::2]:1']) {
      assertError(await h.call('GET', '/api/v2/domains', { headers: { host } }), 421, /not allowed/);
    }
    assertError(await h.call('GET', '/healthz', { anonymous: true, headers: { host: 'evil.test' } }), 421, /not allowed/);
  });

  it('accepts localhost, 127.0.0.1 and [::1] with any port', async () => {
    for (const host of ['localhost', 'LOCALHOST:2580', '127.0.0.1', '127.0.0.1:9', '[::1]', '[::1]:65535']) {
      assert.equal((await h.call('GET', '/api/v2/domains', { headers: { host } })).status, 200, host);
    }
  });

  it('accepts the configured allowedHosts', async () => {
    await h.close();
    h = await startApi({ allowedHosts: ['Inbox.Local', 'box.lan:8080'] });
    assert.equal((await h.call('GET', '/healthz', { headers: { host: 'inbox.local:1234' } })).status, 200);
    assert.equal((await h.call('GET', '/healthz', { headers: { host: 'box.lan:8080' } })).status, 200);
    assert.equal((await h.call('GET', '/healthz', { headers: { host: 'box.lan:8081' } })).status, 421);
  });

  it('sends no CORS headers, not even to a preflight', async () => {
    const origin = { origin: 'https://evil.test' };
    const r = await h.call('GET', '/api/v2/domains', { headers: origin });
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    const pre = await h.call('OPTIONS', '/api/v2/domains/private/inboxes/joe', { anonymous: true, headers: { ...origin, 'access-control-request-method': 'DELETE' } });
    assert.equal(pre.status, 405);
    for (const k of Object.keys(pre.headers)) assert.ok(!k.startsWith('access-control-'), k);
  });

  it('never writes a token to the log', async () => {
    await h.call('GET', `/api/v2/domains/private/inboxes/joe?token=${API_TOKEN}`, { anonymous: true });
    await h.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/x`, { anonymous: true, body: { text: 'y' } });
    await h.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/x/y/z`, { anonymous: true, body: { text: 'y' } });
    for (const l of h.logs) {
      assert.ok(!l.msg.includes(API_TOKEN) && !l.msg.includes(WEBHOOK_TOKEN), l.msg);
    }
  });

  it('refuses to start with an empty token, the same token for both, or a bad domain or body limit', () => {
    const base = { store: h.store, defaultDomain: DOMAIN, version: '1' };
    assert.throws(() => createHttpApi({ ...base, apiToken: '', webhookToken: 'w' }), (e: { code?: string }) => e.code === 'empty_token');
    assert.throws(() => createHttpApi({ ...base, apiToken: 'same', webhookToken: 'same' }), (e: { code?: string }) => e.code === 'same_tokens');
    assert.throws(() => createHttpApi({ ...base, apiToken: 'a', webhookToken: 'w', defaultDomain: 'private' }), /defaultDomain/);
    assert.throws(() => createHttpApi({ ...base, apiToken: 'a', webhookToken: 'w', maxBodyBytes: 0 }), /maxBodyBytes/);
  });
});

describe('auth checks', () => {
  it('matches a token only by its exact value, whatever the length of the candidate', () => {
    const check = new TokenCheck('s3cret-token', 'API token');
    assert.equal(checkToken(check, 's3cret-token'), 'ok');
    for (const wrong of ['s3cret-toke', 's3cret-token ', 'S3CRET-TOKEN', 'x'.repeat(10_000), 's3cret-token\u0000']) assert.equal(checkToken(check, wrong), 'wrong', wrong);
    assert.equal(checkToken(check, ''), 'missing');
    assert.equal(checkToken(check, undefined), 'missing');
  });

  it('keeps no copy of the token it checks', () => {
    const check = new TokenCheck('s3cret-token', 'API token');
    assert.ok(!JSON.stringify(check).includes('s3cret'));
    assert.ok(!Object.values(check).some((v) => String(v).includes('s3cret')));
  });

  it('allows loopback Host values with any port and refuses malformed ones', () => {
    const hosts = new HostCheck(['ci.box']);
    for (const ok of ['localhost', 'localhost:1', '127.0.0.1:2580', '[::1]', '[::1]:80', 'ci.box', 'CI.BOX:443', ' localhost ']) assert.equal(hosts.allows(ok), true, ok);
    for (const bad of [undefined, '', 'localhost:abc', 'localhost:123456', '[::1', '[::1]x', '::1', 'ci.box.evil.test', 'evil.test', '127.0.0.2', 'localhost@evil.test']) {
      assert.equal(hosts.allows(bad), false, String(bad));
    }
  });
});
