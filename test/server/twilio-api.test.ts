// Twilio's Messages API on the local server: real HTTP on port 0, the official `twilio` SDK as
// the client (pointed here through its documented `httpClient` option), raw requests for what
// an SDK never sends.
import assert from 'node:assert/strict';
import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import * as os from 'node:os';
import { SLICE_ITEMS, sliceCounters } from '../../src/server/slices';
import { probeHealthz, startApi, type Harness } from './api-harness';

const TWILIO_TOKEN = 'twilio-token-5d1f0c9a7b';
const ACCOUNT = `AC${'1a2b3c4d'.repeat(4)}`;

/** The SDK's own transport, with api.twilio.com replaced by the local server. */
class LocalHttpClient extends RequestClient {
  constructor(private readonly base: string) {
    super();
  }
  override request<T>(opts: RequestClient.RequestOptions<T>) {
    return super.request({ ...opts, uri: opts.uri.replace(/^https:\/\/api\.twilio\.com/, this.base) });
  }
}

function basic(user: string, pass: string): string {
  return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
}

describe('Twilio Messages API (server, real HTTP, official SDK)', () => {
  let h: Harness;
  let client: twilio.Twilio;
  beforeEach(async () => {
    h = await startApi({ twilioAuthToken: TWILIO_TOKEN });
    client = twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new LocalHttpClient(`http://127.0.0.1:${h.port}`) });
  });
  afterEach(() => h.close());

  const form = (fields: Record<string, string>, auth = basic(ACCOUNT, TWILIO_TOKEN), account = ACCOUNT) =>
    h.call('POST', `/2010-04-01/Accounts/${account}/Messages.json`, {
      body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
    });

  it('the SDK sends an SMS; it lands in the phone inbox of the To digits and reads back through the SDK', async () => {
    const sent = await client.messages.create({ to: '+1 (555) 010-0199', from: '+15550100000', body: 'Your code is 482913' });
    assert.match(sent.sid, /^SM[0-9a-f]{32}$/);
    assert.equal(sent.status, 'queued');
    assert.equal(sent.accountSid, ACCOUNT);
    assert.equal(sent.to, '+1 (555) 010-0199');
    assert.equal(sent.from, '+15550100000');
    assert.equal(sent.body, 'Your code is 482913');
    assert.equal(sent.numSegments, '1');
    assert.equal(sent.direction, 'outbound-api');
    assert.ok(sent.dateCreated instanceof Date && Math.abs(sent.dateCreated.getTime() - Date.now()) < 5000);
    assert.equal(sent.uri, `/2010-04-01/Accounts/${ACCOUNT}/Messages/${sent.sid}.json`);

    const listing = await h.call('GET', '/api/v2/domains/private/inboxes/15550100199');
    assert.equal(listing.json.msgs.length, 1);
    // An SMS has no subject: its first words name it in listings, so the tree never shows a row of "SMS".
    assert.equal(listing.json.msgs[0].subject, 'Your code is 482913');
    const sms = await h.call('GET', `/api/v2/domains/private/inboxes/15550100199/messages/${listing.json.msgs[0].id}`);
    assert.equal(sms.json.parts[0].body, 'Your code is 482913');
    assert.equal(sms.json.fromfull, '+15550100000');

    const fetched = await client.messages(sent.sid).fetch();
    assert.equal(fetched.body, 'Your code is 482913');
    assert.equal(fetched.status, 'delivered');
    const listed = await client.messages.list({ to: '+15550100199' });
    assert.deepEqual(listed.map((m) => m.sid), [sent.sid]);
  });

  it('answers the raw Message resource with RFC 2822 dates and string counts', async () => {
    const r = await form({ To: '+15550100199', MessagingServiceSid: `MG${'0'.repeat(32)}`, Body: '€'.repeat(81) });
    assert.equal(r.status, 201);
    assert.match(r.json.date_created, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    assert.equal(r.json.num_segments, '2'); // 162 septets
    assert.equal(r.json.from, null);
    assert.equal(r.json.messaging_service_sid, `MG${'0'.repeat(32)}`);
    assert.equal(r.json.num_media, '0');
    assert.equal(r.json.date_sent, null);
  });

  it('lists with PageSize and next_page_uri, which the SDK follows, and filters by To, From and DateSent', async () => {
    for (let i = 0; i < 5; i++) await client.messages.create({ to: '+15550100199', from: i % 2 ? '+15550100001' : '+15550100002', body: `m${i}` });
    await client.messages.create({ to: '+15550100777', from: '+15550100001', body: 'other' });
    const page = await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json?PageSize=2&To=%2B15550100199`, { headers: { authorization: basic(ACCOUNT, TWILIO_TOKEN) } });
    assert.equal(page.status, 200);
    assert.deepEqual(page.json.messages.map((m: { body: string }) => m.body), ['m4', 'm3']);
    assert.equal(page.json.page_size, 2);
    assert.match(page.json.next_page_uri, /PageSize=2&Page=1&PageToken=PASM/);
    const all: string[] = [];
    await client.messages.each({ to: '+15550100199', pageSize: 2 }, (m) => void all.push(m.body));
    assert.deepEqual(all, ['m4', 'm3', 'm2', 'm1', 'm0']);
    const fromOne = await client.messages.list({ from: '+15550100001' });
    assert.deepEqual(fromOne.map((m) => m.body), ['other', 'm3', 'm1']);
    const today = new Date();
    assert.equal((await client.messages.list({ dateSent: today })).length, 6);
    const twoDays = 2 * 24 * 3600_000;
    assert.equal((await client.messages.list({ dateSentAfter: new Date(Date.now() + twoDays) })).length, 0);
    assert.equal((await client.messages.list({ dateSentAfter: today })).length, 6);
    assert.equal((await client.messages.list({ dateSentBefore: new Date(Date.now() - twoDays) })).length, 0);
    assert.equal((await client.messages.list({ dateSentBefore: today })).length, 6);
    assert.equal((await client.messages.list({ dateSent: new Date(Date.now() - twoDays) })).length, 0);
  });

  it('a list of many records is built in slices that yield, and /healthz answers while twenty such lists run (issue 35)', async function () {
    this.timeout(180_000);
    // More records than one slice (slices.ts SLICE_ITEMS = 256) holds: the build must give the loop back.
    const n = 700;
    for (let i = 0; i < n; i += 25) {
      await Promise.all(Array.from({ length: Math.min(25, n - i) }, (_, j) => form({ To: '+15550100199', From: '+15550100001', Body: `sms ${i + j}` }).then((r) => assert.equal(r.status, 201))));
    }
    const yields = sliceCounters.yields;
    const page = await client.messages.page({ pageSize: 1000 });
    assert.ok(sliceCounters.yields - yields >= Math.floor(n / SLICE_ITEMS), `the list of ${n} yielded ${sliceCounters.yields - yields} times`);
    assert.equal(page.instances.length, n);
    const times = page.instances.map((m) => m.dateCreated.getTime());
    assert.deepEqual([...times].sort((a, b) => b - a), times, 'newest first');
    assert.equal(new Set(page.instances.map((m) => m.body)).size, n);

    // Twenty lists at once while /healthz is asked: every answer whole. The latency is printed, not asserted.
    const prober = probeHealthz(h);
    const lists = await Promise.all(Array.from({ length: 20 }, () => h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json?PageSize=1000`, { headers: { authorization: basic(ACCOUNT, TWILIO_TOKEN) } })));
    const health = await prober.stop();
    for (const l of lists) assert.equal(l.json.messages.length, n);
    console.log(`      /healthz during 20 lists of ${n}: n=${health.length} p50 ${health[Math.floor(health.length / 2)].toFixed(1)} ms, max ${health[health.length - 1].toFixed(1)} ms (load ${os.loadavg()[0].toFixed(2)})`);
  });

  it('bad input gets Twilio-shaped 4xx errors, writes nothing, and the server stays up', async () => {
    const cases: Array<[Record<string, string> | string, number, number]> = [
      [{ To: 'call me', From: '+1555', Body: 'x' }, 400, 21211],
      [{ To: '+15550100199', From: '+1555' }, 400, 21602],
      [{ To: '+15550100199', Body: 'x' }, 400, 21603],
      [{ From: '+1555', Body: 'x' }, 400, 21604],
      [{ To: '+15550100199', From: '+1555', Body: 'a'.repeat(1601) }, 400, 21617],
      ['To=%E0%A4%A&Body=x', 400, 21604],
    ];
    for (const [fields, status, code] of cases) {
      const r =
        typeof fields === 'string'
          ? await h.call('POST', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, { body: fields, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ACCOUNT, TWILIO_TOKEN) } })
          : await form(fields);
      assert.equal(r.status, status, JSON.stringify(fields).slice(0, 80));
      assert.equal(r.json.code, code);
      assert.equal(r.json.status, status);
      assert.equal(r.json.more_info, `https://www.twilio.com/docs/errors/${code}`);
      assert.equal(typeof r.json.message, 'string');
    }
    // Exactly 1,600 characters is accepted.
    assert.equal((await form({ To: '+15550100199', From: '+1555', Body: 'a'.repeat(1600) })).status, 201);
    const json = await h.call('POST', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, { body: { To: '+15550100199' }, headers: { authorization: basic(ACCOUNT, TWILIO_TOKEN) } });
    assert.equal(json.json.code, 21604);
    const listing = await h.call('GET', '/api/v2/domains/private/inboxes/*');
    assert.equal(listing.json.msgs.length, 1);
    const bad = await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json?PageSize=0`, { headers: { authorization: basic(ACCOUNT, TWILIO_TOKEN) } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 80701);
    const missing = await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages/SM${'f'.repeat(32)}.json`, { headers: { authorization: basic(ACCOUNT, TWILIO_TOKEN) } });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 20404);
    assert.equal((await h.call('GET', '/healthz', { anonymous: true })).status, 200);
  });

  it('wrong auth is 401 with 20003: wrong token, the API token, a SID other than the path, no credentials', async () => {
    const tries = [basic(ACCOUNT, 'nope'), basic(ACCOUNT, 'api-token-3f9c2b7e1d'), basic(`AC${'9'.repeat(32)}`, TWILIO_TOKEN), basic('ACnope', TWILIO_TOKEN), 'api-token-3f9c2b7e1d', undefined];
    for (const auth of tries) {
      const r = await h.call('POST', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, {
        body: 'To=%2B15550100199&From=%2B1555&Body=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
      });
      assert.equal(r.status, 401);
      assert.deepEqual(r.json, { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
    }
    const sdk = twilio(ACCOUNT, 'wrong', { httpClient: new LocalHttpClient(`http://127.0.0.1:${h.port}`) });
    await assert.rejects(sdk.messages.create({ to: '+15550100199', from: '+1555', body: 'x' }), (e: { status?: number; code?: number }) => e.status === 401 && e.code === 20003);
    // The Twilio token opens no API route.
    assert.equal((await h.call('GET', '/api/v2/domains', { headers: { authorization: TWILIO_TOKEN } })).status, 403);
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/*')).json.msgs.length, 0);
  });

  it('any Account SID works, and reads are per account', async () => {
    const other = `AC${'abcdef01'.repeat(4)}`;
    const sent = await form({ To: '+15550100199', From: '+1555', Body: 'x' }, basic(other, TWILIO_TOKEN), other);
    assert.equal(sent.status, 201);
    const r = await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages/${sent.json.sid}.json`, { headers: { authorization: basic(ACCOUNT, TWILIO_TOKEN) } });
    assert.equal(r.status, 404);
  });

  it('without a Twilio auth token every Twilio request is refused', async () => {
    const plain = await startApi();
    try {
      const r = await plain.call('POST', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, {
        body: 'To=%2B15550100199&From=%2B1555&Body=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(ACCOUNT, '') },
      });
      assert.equal(r.json.code, 20003);
    } finally {
      await plain.close();
    }
  });
});
