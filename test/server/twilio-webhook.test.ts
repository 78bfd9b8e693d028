// Twilio's inbound "a message comes in" webhook on the webhook routes: form-encoded payloads,
// signatures computed by the official SDK's own functions.
import assert from 'node:assert/strict';
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

  it('without a Twilio auth token configured, form payloads are taken unsigned', async () => {
    const plain = await startApi();
    try {
      const r = await plain.call('POST', `/api/v2/domains/${WEBHOOK_TOKEN}/webhook`, { body: new URLSearchParams(payload()).toString(), anonymous: true, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(r.status, 200);
      assert.equal((await plain.call('GET', '/api/v2/domains/private/inboxes/15550100199')).json.msgs.length, 1);
    } finally {
      await plain.close();
    }
  });
});
