// Twilio Verify v2 on the local server, driven by the official `twilio` SDK through a request
// client that sends every https://*.twilio.com host to the server (the form docs/twilio.md and
// Copy SMS Settings give), against a real server on port 0. Expiry and the send window run on the
// server's clock, which the test moves forward.
import assert from 'node:assert/strict';
import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import { onlyMessage, type ProviderHarness, readInbox, startProviders } from './providers-harness';

const TWILIO_TOKEN = 'twilio-token-5d1f0c9a7b';
const ACCOUNT = `AC${'1a2b3c4d'.repeat(4)}`;

/** Every https://*.twilio.com host goes to the local server (Messages at api., Verify at verify.). */
class LocalTwilio extends RequestClient {
  constructor(private readonly base: string) {
    super();
  }
  override request<T>(opts: RequestClient.RequestOptions<T>) {
    return super.request({ ...opts, uri: opts.uri.replace(/^https:\/\/[a-z0-9.-]*\.twilio\.com/, this.base) });
  }
}

describe('Twilio Verify v2 (server, real HTTP, official SDK)', () => {
  let h: ProviderHarness;
  let client: twilio.Twilio;
  beforeEach(async () => {
    h = await startProviders({ twilioAuthToken: TWILIO_TOKEN });
    client = twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new LocalTwilio(h.base) });
  });
  afterEach(() => h.close());

  const codeIn = (text: string): string => /verification code is: (\d+)/.exec(text)![1];

  it('round trip: a service, an SMS verification delivered to the phone inbox, a wrong check, the right one once', async () => {
    const service = await client.verify.v2.services.create({ friendlyName: 'Acme' });
    assert.match(service.sid, /^VA[0-9a-f]{32}$/);
    assert.equal(service.friendlyName, 'Acme');
    assert.equal(service.codeLength, 6);
    assert.equal((await client.verify.v2.services(service.sid).fetch()).friendlyName, 'Acme');

    const v = await client.verify.v2.services(service.sid).verifications.create({ to: '+1 555 010 0777', channel: 'sms' });
    assert.match(v.sid, /^VE[0-9a-f]{32}$/);
    assert.equal(v.status, 'pending');
    assert.equal(v.channel, 'sms');
    const sms = await onlyMessage(h, '15550100777');
    assert.match(sms.json.parts[0].body, /^Your Acme verification code is: \d{6}/);
    // A phone inbox's message reads as an SMS (no headers in its JSON): the API is in the stored message.
    assert.ok(sms.raw.replace(/\r\n[ \t]+/g, ' ').includes(`X-Test-Inbox-Api: Twilio Verify (POST /v2/Services/${service.sid}/Verifications)`), sms.raw);
    const code = codeIn(sms.json.parts[0].body);
    const listing = await h.call('GET', '/api/v2/domains/inbox.test/inboxes/15550100777');
    assert.equal(listing.json.msgs[0].code, code, "the core's code of the SMS is the Verify code");

    const wrong = await client.verify.v2.services(service.sid).verificationChecks.create({ to: '+1 555 010 0777', code: code === '000000' ? '111111' : '000000' });
    assert.equal(wrong.status, 'pending');
    assert.equal(wrong.valid, false);
    const right = await client.verify.v2.services(service.sid).verificationChecks.create({ to: '+1 555 010 0777', code });
    assert.equal(right.status, 'approved');
    assert.equal(right.valid, true);
    assert.equal(right.sid, v.sid);
    await assert.rejects(client.verify.v2.services(service.sid).verificationChecks.create({ to: '+1 555 010 0777', code }), (e: { status: number; code: number }) => {
      assert.equal(e.status, 404);
      assert.equal(e.code, 20404);
      return true;
    });
    assert.equal((await client.verify.v2.services(service.sid).verifications(v.sid).fetch()).status, 'approved');
  });

  it('an email verification lands in the inbox of the To address; code_length is honoured', async () => {
    const service = await client.verify.v2.services.create({ friendlyName: 'Acme Mail', codeLength: 8 });
    assert.equal(service.codeLength, 8);
    await client.verify.v2.services(service.sid).verifications.create({ to: 'otp@inbox.test', channel: 'email' });
    const mail = await onlyMessage(h, 'otp');
    const code = codeIn(mail.json.parts[0].body);
    assert.equal(code.length, 8);
    assert.equal((await client.verify.v2.services(service.sid).verificationChecks.create({ to: 'otp@inbox.test', code })).status, 'approved');
  });

  it("a code expires after 10 minutes of the server's clock", async () => {
    const service = await client.verify.v2.services.create({ friendlyName: 'Acme' });
    await client.verify.v2.services(service.sid).verifications.create({ to: '+15550100778', channel: 'sms' });
    const code = codeIn((await onlyMessage(h, '15550100778')).json.parts[0].body);
    h.clock.advance(10 * 60_000 + 1000);
    await assert.rejects(client.verify.v2.services(service.sid).verificationChecks.create({ to: '+15550100778', code }), { status: 404, code: 20404 });
    // A new verification after expiry gets a new message.
    await client.verify.v2.services(service.sid).verifications.create({ to: '+15550100778', channel: 'sms' });
    assert.equal((await readInbox(h, '15550100778')).length, 2);
  });

  it('5 wrong checks end the verification (60202); 5 sends to one To per 10 minutes (60203), then again after the window', async () => {
    const service = await client.verify.v2.services.create({ friendlyName: 'Acme' });
    const svc = client.verify.v2.services(service.sid);
    await svc.verifications.create({ to: '+15550100779', channel: 'sms' });
    const code = codeIn((await onlyMessage(h, '15550100779')).json.parts[0].body);
    const wrongCode = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) assert.equal((await svc.verificationChecks.create({ to: '+15550100779', code: wrongCode })).valid, false);
    await assert.rejects(svc.verificationChecks.create({ to: '+15550100779', code }), (e: { status: number; code: number }) => {
      assert.equal(e.status, 429);
      assert.equal(e.code, 60202);
      return true;
    });

    for (let i = 0; i < 4; i++) await svc.verifications.create({ to: '+15550100780', channel: 'sms' });
    const sent = await svc.verifications.create({ to: '+15550100780', channel: 'sms' });
    assert.equal(sent.sendCodeAttempts.length, 5, 'a send to a To with an open verification sends it again');
    const inbox = await readInbox(h, '15550100780');
    assert.equal(inbox.length, 5);
    assert.equal(new Set(inbox.map((m) => codeIn(m.json.parts[0].body))).size, 1, 'the same code each time');
    await assert.rejects(svc.verifications.create({ to: '+15550100780', channel: 'sms' }), { status: 429, code: 60203 });
    assert.equal((await readInbox(h, '15550100780')).length, 5);
    h.clock.advance(10 * 60_000);
    await svc.verifications.create({ to: '+15550100780', channel: 'sms' });
    assert.equal((await readInbox(h, '15550100780')).length, 6);
  });

  it('G8: the five-sends and five-checks rules count one To however it is spelled: a number in E.164 with any separators, an address in any case', async () => {
    const svc = client.verify.v2.services((await client.verify.v2.services.create({ friendlyName: 'Acme' })).sid);
    const spellings = ['+15550100790', '+1 555 010 0790', '+1 (555) 010-0790', '+1.555.010.0790', '+1-555-010-0790'];
    const sids = new Set<string>();
    for (const to of spellings) sids.add((await svc.verifications.create({ to, channel: 'sms' })).sid);
    assert.equal(sids.size, 1, 'one open verification, sent again');
    await assert.rejects(svc.verifications.create({ to: '+1 (555) 0100790', channel: 'sms' }), { status: 429, code: 60203 });
    const inbox = await readInbox(h, '15550100790');
    assert.equal(inbox.length, 5);
    // A check by another spelling is a check of the same verification.
    const code = codeIn(inbox[0].json.parts[0].body);
    const wrongCode = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) assert.equal((await svc.verificationChecks.create({ to: spellings[i], code: wrongCode })).valid, false);
    await assert.rejects(svc.verificationChecks.create({ to: '+15550100790', code }), { status: 429, code: 60202 });

    const mails = ['otp2@inbox.test', 'OTP2@inbox.test', 'Otp2@Inbox.Test', 'Ann <OTP2@INBOX.TEST>', 'otp2@INBOX.test'];
    for (const to of mails) await svc.verifications.create({ to, channel: 'email' });
    await assert.rejects(svc.verifications.create({ to: 'oTp2@inbox.test', channel: 'email' }), { status: 429, code: 60203 });
    const mail = await readInbox(h, 'otp2');
    assert.equal(mail.length, 5);
    const approved = await svc.verificationChecks.create({ to: 'OTP2@Inbox.test', code: codeIn(mail[0].json.parts[0].body) });
    assert.equal(approved.status, 'approved');
  });

  it("bad input gets Twilio's JSON errors: call and whatsapp channels, a bad code length, unknown services, wrong credentials", async () => {
    await assert.rejects(client.verify.v2.services.create({ friendlyName: 'Acme', codeLength: 12 }), { status: 400, code: 60200 });
    await assert.rejects(client.verify.v2.services.create({ friendlyName: '' }), { status: 400, code: 20001 });
    const service = await client.verify.v2.services.create({ friendlyName: 'Acme' });
    for (const channel of ['call', 'whatsapp']) {
      await assert.rejects(client.verify.v2.services(service.sid).verifications.create({ to: '+15550100781', channel }), (e: { status: number; code: number; moreInfo: string }) => {
        assert.equal(e.status, 400);
        assert.equal(e.code, 60200);
        assert.equal(e.moreInfo, 'https://www.twilio.com/docs/errors/60200');
        return true;
      });
    }
    await assert.rejects(client.verify.v2.services(service.sid).verifications.create({ to: 'not-a-number', channel: 'sms' }), { status: 400, code: 60200 });
    await assert.rejects(client.verify.v2.services(`VA${'0'.repeat(32)}`).verifications.create({ to: '+15550100781', channel: 'sms' }), { status: 404, code: 20404 });
    const wrong = twilio(ACCOUNT, 'wrong-token', { httpClient: new LocalTwilio(h.base) });
    await assert.rejects(wrong.verify.v2.services(service.sid).fetch(), { status: 401, code: 20003 });
    // Another account's services are not found.
    const other = twilio(`AC${'9'.repeat(32)}`, TWILIO_TOKEN, { httpClient: new LocalTwilio(h.base) });
    await assert.rejects(other.verify.v2.services(service.sid).fetch(), { status: 404, code: 20404 });
    assert.equal((await readInbox(h, '15550100781')).length, 0);
  });
});
