// Twilio's inbound "a message comes in" webhook on the webhook routes: form-encoded payloads,
// signatures computed by the official SDK's own functions.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import twilio from 'twilio';
import { startApi, WEBHOOK_TOKEN, type Harness } from './api-harness';

const TWILIO_TOKEN = 'twilio-token-5d1f0c9a7b';
const ACCOUNT = `AC${'1a2b3c4d'.repeat(4)}`;
const MESSAGE_SID = `SM${'0f1e2d3c'.repeat(4)}`;

describe('Twilio inbound webhook (server, real HTTP, SDK signatures)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startApi({ twilioAuthToken: TWILIO_TOKEN });
  });
  afterEach(() => h.close());

  const payload = (over: Record<string, string> = {}) => ({ MessageSid: MESSAGE_SID, SmsSid: MESSAGE_SID, AccountSid: ACCOUNT, From: '+15550100123', To: '+1 555 010 0199', Body: 'Login code 556677', NumMedia: '0', ...over });

  async function post(path: string, params: Record<string, string>, signWith: string | null = TWILIO_TOKEN, signedUrl?: string) {
    const url = signedUrl ?? `http://127.0.0.1:${h.port}${path}`;
    const headers: Record<string, string | undefined> = { 'content-type': 'application/x-www-form-urlencoded', authorization: undefined };
    if (signWith !== null) headers['x-twilio-signature'] = twilio.getExpectedTwilioSignature(signWith, url, params);
    return h.call('POST', path, { body: new URLSearchParams(params).toString(), headers, anonymous: true });
  }

  it('a signed payload lands in the phone inbox of the To digits, mapped to from / to / text, and reads back as Twilio inbound', async () => {
    const path = `/api/v2/domains/${WEBHOOK_TOKEN}/webhook`;
    const r = await post(path, payload());
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers['content-type'] ?? '', /^text\/xml/);
    assert.match(r.text, /<Response><\/Response>/);
    const signed = { ...payload(), Body: 'x' };
    assert.ok(twilio.validateRequest(TWILIO_TOKEN, twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `http://127.0.0.1:${h.port}${path}`, signed), `http://127.0.0.1:${h.port}${path}`, signed));
    const listing = await h.call('GET', '/api/v2/domains/private/inboxes/15550100199');
    assert.equal(listing.json.msgs.length, 1);
    const sms = await h.call('GET', `/api/v2/domains/private/messages/${listing.json.msgs[0].id}`);
    assert.equal(sms.json.fromfull, '+15550100123');
    assert.equal(sms.json.parts[0].body, 'Login code 556677');
    const auth = `Basic ${Buffer.from(`${ACCOUNT}:${TWILIO_TOKEN}`).toString('base64')}`;
    const res = await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages/${MESSAGE_SID}.json`, { headers: { authorization: auth } });
    assert.equal(res.json.direction, 'inbound');
    assert.equal(res.json.status, 'received');
    assert.equal(res.json.body, 'Login code 556677');
  });

  it('the signature is checked against the public URL a tunnel forwards (X-Forwarded-Proto/Host) and the query', async () => {
    const path = `/api/v2/domains/private/webhook?whtoken=${WEBHOOK_TOKEN}`;
    const url = `https://abc.tunnel.example${path}`;
    const params = payload();
    const r = await h.call('POST', path, {
      body: new URLSearchParams(params).toString(),
      anonymous: true,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'abc.tunnel.example', 'x-twilio-signature': twilio.getExpectedTwilioSignature(TWILIO_TOKEN, url, params) },
    });
    assert.equal(r.status, 200, r.text);
  });

  it('a bad or missing signature is 403 and nothing is stored', async () => {
    const path = `/api/v2/domains/${WEBHOOK_TOKEN}/webhook`;
    assert.equal((await post(path, payload(), 'another-token')).status, 403);
    assert.equal((await post(path, payload(), null)).status, 403);
    // Signed for other parameters (the body was changed on the way).
    const tampered = await h.call('POST', path, {
      body: new URLSearchParams(payload({ Body: 'Login code 000000' })).toString(),
      anonymous: true,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `http://127.0.0.1:${h.port}${path}`, payload()) },
    });
    assert.equal(tampered.status, 403);
    assert.equal(tampered.json.status, 'error');
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/*')).json.msgs.length, 0);
  });

  it('follows the webhook rules: an inbox in the path overrides To; no usable To and no path inbox is 400; the webhook token is still required', async () => {
    const path = `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/15550100777`;
    assert.equal((await post(path, payload())).status, 200);
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/15550100777')).json.msgs.length, 1);
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/15550100199')).json.msgs.length, 0);
    const noTo = await post(`/api/v2/domains/${WEBHOOK_TOKEN}/webhook`, payload({ To: 'nobody' }));
    assert.equal(noTo.status, 400);
    assert.equal((await post('/api/v2/domains/wrong-token/webhook', payload())).status, 403);
    const garbled = await h.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook`, { body: 'To=%ZZ', anonymous: true, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(garbled.status, 400);
  });

  const messagesApi = async () => {
    const auth = `Basic ${Buffer.from(`${ACCOUNT}:${TWILIO_TOKEN}`).toString('base64')}`;
    return (await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, { headers: { authorization: auth } })).json.messages as Array<{ sid: string; body: string }>;
  };

  it('a replayed signed request, or the same one delivered at once several times, is answered 200 and stored once', async () => {
    const path = `/api/v2/domains/${WEBHOOK_TOKEN}/webhook`;
    for (let i = 0; i < 3; i++) assert.equal((await post(path, payload())).status, 200);
    const burst = await Promise.all(Array.from({ length: 4 }, () => post(path, payload({ MessageSid: `SM${'9'.repeat(32)}`, SmsSid: `SM${'9'.repeat(32)}`, Body: 'Other code 112233' }))));
    assert.deepEqual(
      burst.map((r) => r.status),
      [200, 200, 200, 200],
    );
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/15550100199')).json.msgs.length, 2);
    assert.deepEqual((await messagesApi()).map((m) => m.sid).sort(), [MESSAGE_SID, `SM${'9'.repeat(32)}`].sort());
  });

  it('a JSON body is checked whenever it says it comes from Twilio (a signature, or inbound fields), and never makes a Twilio record', async () => {
    const path = `/api/v2/domains/${WEBHOOK_TOKEN}/webhook/15550100199`;
    const json = (body: unknown, headers: Record<string, string> = {}, target = path) => h.call('POST', target, { body, anonymous: true, headers });
    // Unsigned, with Twilio's inbound fields: refused.
    const unsigned = await json({ MessageSid: MESSAGE_SID, AccountSid: ACCOUNT, From: '+15550100123', To: '+15550100199', Body: 'x', text: 'Login code 556677' });
    assert.equal(unsigned.status, 403);
    assert.match(unsigned.json.message, /inbound field\(s\) MessageSid, AccountSid but no X-Twilio-Signature/);
    // A signature that does not match: refused.
    assert.equal((await json({ text: 'x' }, { 'x-twilio-signature': 'bm90IGEgc2lnbmF0dXJl' })).status, 403);
    // Signed as Twilio signs a JSON body (bodySHA256 in the URL; the SDK's validateRequestWithBody agrees): taken.
    const body = JSON.stringify({ from: '+15550100123', text: 'Signed code 445566', MessageSid: MESSAGE_SID, AccountSid: ACCOUNT });
    const target = `${path}?bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const url = `http://127.0.0.1:${h.port}${target}`;
    const signature = twilio.getExpectedTwilioSignature(TWILIO_TOKEN, url, {});
    assert.ok(twilio.validateRequestWithBody(TWILIO_TOKEN, signature, url, body));
    const signed = await json(body, { 'x-twilio-signature': signature, 'content-type': 'application/json' }, target);
    assert.equal(signed.status, 200, signed.text);
    // A tampered body under that signature: refused.
    assert.equal((await json(body.replace('445566', '000000'), { 'x-twilio-signature': signature, 'content-type': 'application/json' }, target)).status, 403);
    // The plain JSON webhook needs the webhook token only.
    assert.equal((await json({ from: 'ci@acme.test', text: 'Plain code 778899' })).status, 200);
    const listing = await h.call('GET', '/api/v2/domains/private/inboxes/15550100199?sort=ascending');
    assert.deepEqual(
      listing.json.msgs.map((m: { subject: string }) => m.subject),
      ['Signed code 445566', 'Plain code 778899'],
    );
    // Neither is a Twilio record, whatever SIDs its body names.
    assert.deepEqual(await messagesApi(), []);
    const auth = `Basic ${Buffer.from(`${ACCOUNT}:${TWILIO_TOKEN}`).toString('base64')}`;
    assert.equal((await h.call('GET', `/2010-04-01/Accounts/${ACCOUNT}/Messages/${MESSAGE_SID}.json`, { headers: { authorization: auth } })).status, 404);
  });

  it('without a Twilio auth token configured, form payloads are taken unsigned, as SMS without a Twilio record', async () => {
    const plain = await startApi();
    try {
      const r = await plain.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook`, { body: new URLSearchParams(payload()).toString(), anonymous: true, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(r.status, 200);
      assert.equal((await plain.call('GET', '/api/v2/domains/private/inboxes/15550100199')).json.msgs.length, 1);
      // ...as SMS without a Twilio record: nothing could check they come from Twilio.
      const all = await plain.store.listByScope(ACCOUNT);
      assert.equal(all.length, 0);
    } finally {
      await plain.close();
    }
  });
});
