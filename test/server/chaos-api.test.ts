// Failures on demand over HTTP (issue 39, docs/chaos.md): /api/v2/chaos and /api/v2/chaos/rules
// on a real server, with the API token only; bad rules are a 400 that names the field and change
// nothing; /healthz names the number of active rules.
import assert from 'node:assert/strict';
import { API_TOKEN, WEBHOOK_TOKEN, startApi, type Harness, type Reply } from './api-harness';

const greylist = { surface: 'smtp', match: { recipient: 'joe@inbox.test', stage: 'rcpt' }, fault: { reply: { code: 451, text: '4.7.1 Greylisted' } }, times: 1 };
const resend429 = { surface: 'resend', match: { recipient: 'ann@inbox.test' }, fault: { status: 429, retry_after: 2 }, times: 3, ttl: '1m' };

function assertError(r: Reply, status: number, message: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(r.json.status, 'error');
  assert.match(r.json.message, message);
}

describe('HTTP API: fault rules (/api/v2/chaos)', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(async () => {
    await h.close();
  });

  it('adds a rule and answers its id, lists it with its counters, and removes only that rule', async () => {
    const a = await h.call('POST', '/api/v2/chaos/rules', { body: greylist });
    assert.equal(a.status, 201, a.text);
    assert.match(a.json.id, /^r\d+-[0-9a-f]{6}$/);
    const b = await h.call('POST', '/api/v2/chaos/rules', { body: resend429 });
    assert.equal(b.status, 201, b.text);
    assert.notEqual(a.json.id, b.json.id);

    const list = await h.call('GET', '/api/v2/chaos');
    assert.equal(list.status, 200);
    assert.equal(list.json.active, 2);
    const [g, r] = list.json.rules;
    assert.deepEqual({ id: g.id, surface: g.surface, match: g.match, fault: g.fault, times: g.times, fired: g.fired, evaluated: g.evaluated }, { id: a.json.id, ...greylist, fired: 0, evaluated: 0 });
    assert.deepEqual(r.fault, { status: 429, retry_after: 2 });
    assert.ok(Date.parse(r.expires) - Date.now() <= 60_000 && Date.parse(r.expires) - Date.now() > 50_000, 'ttl 1m');
    assert.deepEqual((await h.call('GET', '/api/v2/chaos/rules')).json.rules, list.json.rules);
    assert.equal((await h.call('GET', `/api/v2/chaos/rules/${b.json.id}`)).json.rule.id, b.json.id);

    const del = await h.call('DELETE', `/api/v2/chaos/rules/${a.json.id}`);
    assert.equal(del.status, 200, del.text);
    assert.deepEqual((await h.call('GET', '/api/v2/chaos')).json.rules.map((x: { id: string }) => x.id), [b.json.id]);
    assertError(await h.call('DELETE', `/api/v2/chaos/rules/${a.json.id}`), 404, /no fault rule/);
  });

  it('replaces the whole set with PUT (an array or {"rules": …}) and clears it with DELETE', async () => {
    await h.call('POST', '/api/v2/chaos/rules', { body: greylist });
    const put = await h.call('PUT', '/api/v2/chaos', { body: [resend429, { ...resend429, match: { recipient: 'bob' } }] });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.active, 2);
    assert.deepEqual(put.json.rules.map((x: { surface: string }) => x.surface), ['resend', 'resend']);
    const wrapped = await h.call('PUT', '/api/v2/chaos', { body: { rules: [greylist] } });
    assert.equal(wrapped.json.active, 1);
    const cleared = await h.call('DELETE', '/api/v2/chaos');
    assert.deepEqual(cleared.json, { status: 'ok', removed: 1, active: 0 });
    assert.deepEqual((await h.call('GET', '/api/v2/chaos')).json, { status: 'ok', active: 0, rules: [] });
  });

  it('refuses a bad rule with a 400 that names the field, and changes nothing', async () => {
    await h.call('POST', '/api/v2/chaos/rules', { body: greylist });
    const before = (await h.call('GET', '/api/v2/chaos')).json;
    assertError(await h.call('POST', '/api/v2/chaos/rules', { body: { surface: 'smtp', match: {}, fault: { drop: true } } }), 400, /"all": true/);
    assertError(await h.call('POST', '/api/v2/chaos/rules', { body: { ...resend429, fault: { status: 200 } } }), 400, /fault.status must be an HTTP status from 400 to 599/);
    assertError(await h.call('POST', '/api/v2/chaos/rules', { body: '{"surface":' }), 400, /not valid JSON/);
    assertError(await h.call('POST', '/api/v2/chaos/rules', { body: 'x', headers: { 'content-type': 'text/plain' } }), 415, /application\/json/);
    assertError(await h.call('PUT', '/api/v2/chaos', { body: [resend429, { ...greylist, ttl: '25h' }] }), 400, /rule 2: ttl must be/);
    assertError(await h.call('PUT', '/api/v2/chaos', { body: { rule: [] } }), 400, /JSON array of rules/);
    assertError(await h.call('PATCH', '/api/v2/chaos'), 405, /not allowed/);
    assertError(await h.call('POST', '/api/v2/chaos/rules', { body: { surface: 'delivery', match: { all: true }, fault: { delivery_delay: '40s' } } }), 400, /surface delivery is not applied by this server yet/);
    assert.deepEqual((await h.call('GET', '/api/v2/chaos')).json, before);
  });

  it('opens to the API token only: not without it, not with the webhook token, not through the web UI\'s session routes', async () => {
    assertError(await h.call('POST', '/api/v2/chaos/rules', { body: greylist, anonymous: true }), 401, /missing API token/);
    assertError(await h.call('PUT', '/api/v2/chaos', { body: [greylist], headers: { authorization: WEBHOOK_TOKEN } }), 403, /wrong API token/);
    assertError(await h.call('GET', `/api/v2/chaos?token=${WEBHOOK_TOKEN}`, { anonymous: true }), 403, /wrong API token/);
    assert.equal((await h.call('GET', `/api/v2/chaos?token=${API_TOKEN}`, { anonymous: true })).status, 200);
    for (const [method, target] of [['POST', '/ui/api/v2/chaos/rules'], ['PUT', '/ui/api/v2/chaos'], ['DELETE', '/ui/api/v2/chaos'], ['GET', '/ui/api/v2/chaos']]) {
      assertError(await h.call(method, target), 404, /unknown route/);
    }
    assert.equal((await h.call('GET', '/api/v2/chaos')).json.active, 0);
  });

  it("is never reached through /mcp's in-process transport, whatever the method; the same transport still reads the API", async () => {
    const inProcess = h.api.inProcessFetch();
    const base = 'http://in-process.invalid';
    for (const [method, path, body] of [
      ['GET', '/api/v2/chaos', undefined],
      ['PUT', '/api/v2/chaos', '[]'],
      ['DELETE', '/api/v2/chaos', undefined],
      ['GET', '/api/v2/chaos/rules', undefined],
      ['POST', '/api/v2/chaos/rules', JSON.stringify(greylist)],
      ['DELETE', '/api/v2/chaos/rules/r1-000000', undefined],
    ] as const) {
      const res = await inProcess(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body } : {}) });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(((await res.json()) as { message: string }).message, /unknown route/);
    }
    assert.equal((await h.call('GET', '/api/v2/chaos')).json.active, 0, 'nothing was added');
    assert.equal((await inProcess(`${base}/api/v2/domains`)).status, 200);
  });

  it('names the number of active rules in /healthz', async () => {
    assert.equal((await h.call('GET', '/healthz', { anonymous: true })).json.chaosRules, 0);
    await h.call('POST', '/api/v2/chaos/rules', { body: greylist });
    await h.call('POST', '/api/v2/chaos/rules', { body: resend429 });
    assert.equal((await h.call('GET', '/healthz', { anonymous: true })).json.chaosRules, 2);
  });
});
