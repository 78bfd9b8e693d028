// Failures on demand on the provider APIs and Twilio's (issue 39, docs/chaos.md), each shown with
// its official SDK against a real server on port 0: the status comes in the provider's own error
// shape with its headers (Retry-After, Twilio's error code, SES's throttling type), nothing of a
// refused request is stored, and a rule matches only its surface and recipient.
import assert from 'node:assert/strict';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { Client } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import FormData from 'form-data';
import { ServerClient } from 'postmark';
import { Resend } from 'resend';
import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import { type ProviderHarness, PROVIDER_KEY, readInbox, startProviders } from './providers-harness';

// mailgun.js's types are ES modules: a CommonJS test loads it with a dynamic import.
type MailgunClass = (typeof import('mailgun.js', { with: { 'resolution-mode': 'import' } }))['default'];
let Mailgun: MailgunClass;

const TWILIO_TOKEN = 'twilio-token-chaos-4e2a9c';
const ACCOUNT = `AC${'5e6f7a8b'.repeat(4)}`;

/** Every https://*.twilio.com host goes to the local server. */
class LocalTwilio extends RequestClient {
  constructor(private readonly base: string) {
    super();
  }
  override request<T>(opts: RequestClient.RequestOptions<T>) {
    return super.request({ ...opts, uri: opts.uri.replace(/^https:\/\/[a-z0-9.-]*\.twilio\.com/, this.base) });
  }
}

describe('failures on demand: provider and Twilio faults (server, real HTTP, official SDKs)', function () {
  this.timeout(60_000);
  before(async () => {
    Mailgun = (await import('mailgun.js')).default;
  });
  let h: ProviderHarness;
  beforeEach(async () => {
    h = await startProviders({ twilioAuthToken: TWILIO_TOKEN });
  });
  afterEach(() => h.close());

  async function rule(r: unknown): Promise<string> {
    const added = await h.call('POST', '/api/v2/chaos/rules', { body: r });
    assert.equal(added.status, 201, added.text);
    return added.json.id as string;
  }
  async function fired(): Promise<number[]> {
    return ((await h.call('GET', '/api/v2/chaos')).json.rules as Array<{ fired: number }>).map((r) => r.fired);
  }
  const count = async (inbox: string): Promise<number> => (await readInbox(h, inbox)).length;

  it('Resend: the SDK returns its error object (rate_limit_exceeded, 429) for the one address; Retry-After is sent; other addresses deliver', async () => {
    await rule({ surface: 'resend', match: { recipient: 'ann@inbox.test' }, fault: { status: 429, retry_after: 2 }, times: 1 });
    const resend = new Resend(PROVIDER_KEY, { baseUrl: h.base });
    const other = await resend.emails.send({ from: 'app@acme.test', to: 'joe@inbox.test', subject: 'Code', text: 'Your code is 111111' });
    assert.equal(other.error, null);
    const refused = await resend.emails.send({ from: 'app@acme.test', to: 'ann@inbox.test', subject: 'Code', text: 'Your code is 222222' });
    assert.equal(refused.data, null);
    assert.equal(refused.error?.name, 'rate_limit_exceeded');
    assert.equal(refused.error?.statusCode, 429);
    assert.equal(refused.headers?.['retry-after'], '2');
    assert.equal(await count('ann'), 0, 'a refused message is not stored');
    const retried = await resend.emails.send({ from: 'app@acme.test', to: 'ann@inbox.test', subject: 'Code', text: 'Your code is 333333' });
    assert.equal(retried.error, null, 'times: 1 refuses only the next send');
    assert.deepEqual([await count('joe'), await count('ann')], [1, 1]);
    assert.deepEqual(await fired(), [1]);
  });

  it('Resend batch: the rule answers for the whole request, and no email of it is stored', async () => {
    await rule({ surface: 'resend', match: { recipient: 'bob' }, fault: { status: 503 }, times: 1 });
    const resend = new Resend(PROVIDER_KEY, { baseUrl: h.base });
    const r = await resend.batch.send([
      { from: 'app@acme.test', to: 'joe@inbox.test', subject: 'a', text: 'a' },
      { from: 'app@acme.test', to: 'bob@inbox.test', subject: 'b', text: 'b' },
    ]);
    assert.equal(r.error?.statusCode, 503);
    assert.equal(r.error?.name, 'application_error');
    assert.deepEqual([await count('joe'), await count('bob')], [0, 0]);
  });

  it('SendGrid: the client throws with code 429 and SendGrid\'s error body', async () => {
    await rule({ surface: 'sendgrid', match: { recipient: '*@inbox.test' }, fault: { status: 429, retry_after: 1 } });
    const client = new Client();
    client.setApiKey(PROVIDER_KEY);
    client.setDefaultRequest('baseUrl', h.base);
    const sg = new MailService();
    sg.setClient(client);
    await assert.rejects(sg.send({ from: 'app@acme.test', to: 'joe@inbox.test', subject: 'Code', text: 'x' }), (e: { code: number; response: { body: unknown; headers: Record<string, string> } }) => {
      assert.equal(e.code, 429);
      assert.deepEqual(e.response.body, { errors: [{ message: 'too many requests', field: null, help: null }] });
      assert.equal(e.response.headers['retry-after'], '1');
      return true;
    });
    assert.equal(await count('joe'), 0);
  });

  it('Postmark: the client throws with status 429; a batch is refused whole', async () => {
    await rule({ surface: 'postmark', match: { sender: 'app@acme.test' }, fault: { status: 429 }, times: 2 });
    const pm = new ServerClient(PROVIDER_KEY, { useHttps: false, requestHost: `127.0.0.1:${h.port}` });
    await assert.rejects(pm.sendEmail({ From: 'app@acme.test', To: 'joe@inbox.test', Subject: 'Code', TextBody: 'x' }), (e: { statusCode: number; name: string }) => {
      assert.equal(e.statusCode, 429);
      return true;
    });
    await assert.rejects(pm.sendEmailBatch([{ From: 'app@acme.test', To: 'joe@inbox.test', Subject: 'a', TextBody: 'a' }, { From: 'app@acme.test', To: 'ann@inbox.test', Subject: 'b', TextBody: 'b' }]), (e: { statusCode: number }) => e.statusCode === 429);
    assert.deepEqual([await count('joe'), await count('ann')], [0, 0]);
    await pm.sendEmail({ From: 'app@acme.test', To: 'joe@inbox.test', Subject: 'Code', TextBody: 'x' });
    assert.equal(await count('joe'), 1);
  });

  it('Mailgun: the client throws with status 429 for the matching recipient only', async () => {
    await rule({ surface: 'mailgun', match: { recipient: 'ann@inbox.test' }, fault: { status: 429 } });
    const mg = new Mailgun(FormData).client({ username: 'api', key: PROVIDER_KEY, url: h.base });
    await assert.rejects(mg.messages.create('acme.test', { from: 'app@acme.test', to: ['ann@inbox.test'], subject: 'Code', text: 'x' }), (e: { status: number }) => e.status === 429);
    await mg.messages.create('acme.test', { from: 'app@acme.test', to: ['joe@inbox.test'], subject: 'Code', text: 'x' });
    assert.deepEqual([await count('joe'), await count('ann')], [1, 0]);
  });

  it('SES v2: TooManyRequestsException is retried by the AWS SDK, which gives up after its attempts; with fewer faults its last attempt delivers once', async () => {
    const ses = new SESv2Client({ region: 'eu-west-1', endpoint: h.base, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: PROVIDER_KEY }, maxAttempts: 3 });
    const send = (to: string): Promise<unknown> => ses.send(new SendEmailCommand({ FromEmailAddress: 'app@acme.test', Destination: { ToAddresses: [to] }, Content: { Simple: { Subject: { Data: 'Code' }, Body: { Text: { Data: 'x' } } } } }));
    const id = await rule({ surface: 'ses', match: { recipient: 'joe@inbox.test' }, fault: { status: 429 }, times: 10 });
    await assert.rejects(send('joe@inbox.test'), (e: { name: string; $metadata: { httpStatusCode: number; attempts: number } }) => {
      assert.equal(e.name, 'TooManyRequestsException');
      assert.equal(e.$metadata.httpStatusCode, 429);
      assert.equal(e.$metadata.attempts, 3);
      return true;
    });
    assert.deepEqual(await fired(), [3]);
    assert.equal(await count('joe'), 0);
    await h.call('DELETE', `/api/v2/chaos/rules/${id}`);
    await rule({ surface: 'ses', match: { recipient: 'joe@inbox.test' }, fault: { status: 429 }, times: 2 });
    await send('joe@inbox.test');
    assert.deepEqual(await fired(), [2]);
    assert.equal(await count('joe'), 1);
    ses.destroy();
  });

  it('SES v2 Raw: a rule\'s sender is the raw message\'s From (the request names none)', async () => {
    const ses = new SESv2Client({ region: 'eu-west-1', endpoint: h.base, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: PROVIDER_KEY }, maxAttempts: 1 });
    const raw = (from: string): SendEmailCommand => new SendEmailCommand({ Destination: { ToAddresses: ['joe@inbox.test'] }, Content: { Raw: { Data: Buffer.from(`From: "Billing" <${from}>\r\nTo: joe@inbox.test\r\nSubject: Code\r\n\r\nYour code is 424242\r\n`) } } });
    await rule({ surface: 'ses', match: { sender: 'billing@acme.test' }, fault: { status: 429 } });
    await assert.rejects(ses.send(raw('billing@acme.test')), (e: { name: string }) => e.name === 'TooManyRequestsException');
    await ses.send(raw('app@acme.test'));
    assert.equal(await count('joe'), 1, 'another sender delivers');
    ses.destroy();
  });

  it('Twilio Messages: the SDK raises RestException with the status and Twilio code (20429 by default, the rule\'s 21211)', async () => {
    await rule({ surface: 'twilio', match: { recipient: '+15550100199' }, fault: { status: 429, retry_after: 3 }, times: 1 });
    await rule({ surface: 'twilio', match: { recipient: '15550100200' }, fault: { twilio_code: 21211 } });
    const client = twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new LocalTwilio(h.base) });
    await assert.rejects(client.messages.create({ to: '+15550100199', from: '+15550000000', body: 'Your code is 123456' }), (e: { status: number; code: number; moreInfo: string }) => {
      assert.equal(e.status, 429);
      assert.equal(e.code, 20429);
      assert.equal(e.moreInfo, 'https://www.twilio.com/docs/errors/20429');
      return true;
    });
    await assert.rejects(client.messages.create({ to: '+1 555 010 0200', from: '+15550000000', body: 'Your code is 123456' }), (e: { status: number; code: number }) => e.status === 400 && e.code === 21211);
    assert.equal(await count('15550100199'), 0);
    await client.messages.create({ to: '+15550100199', from: '+15550000000', body: 'Your code is 123456' });
    assert.equal(await count('15550100199'), 1);
  });

  it('Twilio Verify: a verification to the number gets the rule\'s code (60203, 429); a delay slows the send; no code is sent while refused', async () => {
    const client = twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new LocalTwilio(h.base) });
    const service = await client.verify.v2.services.create({ friendlyName: 'Acme' });
    await rule({ surface: 'verify', match: { recipient: '+15550100777' }, fault: { status: 429, twilio_code: 60203 }, times: 1 });
    await assert.rejects(client.verify.v2.services(service.sid).verifications.create({ to: '+15550100777', channel: 'sms' }), (e: { status: number; code: number }) => e.status === 429 && e.code === 60203);
    assert.equal(await count('15550100777'), 0);
    await h.call('DELETE', '/api/v2/chaos');
    await rule({ surface: 'verify', match: { recipient: '15550100777' }, fault: { delay: '700ms' }, times: 1 });
    const started = Date.now();
    await client.verify.v2.services(service.sid).verifications.create({ to: '+15550100777', channel: 'sms' });
    assert.ok(Date.now() - started >= 650, `took ${Date.now() - started} ms`);
    assert.equal(await count('15550100777'), 1);
  });

  it('a rule of one surface leaves the others alone, and what a sender puts in its request cannot set one', async () => {
    await rule({ surface: 'sendgrid', match: { all: true }, fault: { status: 500 } });
    const resend = new Resend(PROVIDER_KEY, { baseUrl: h.base });
    // A request that names the chaos API in its fields and headers is mail like any other.
    const sent = await resend.emails.send({ from: 'app@acme.test', to: 'joe@inbox.test', subject: '{"surface":"resend","match":{"all":true},"fault":{"status":429}}', text: 'POST /api/v2/chaos/rules', headers: { 'X-Chaos': 'resend 429' } });
    assert.equal(sent.error, null);
    assert.equal((await h.call('GET', '/api/v2/chaos')).json.active, 1);
    assert.equal((await resend.emails.send({ from: 'app@acme.test', to: 'joe@inbox.test', subject: 's', text: 't' })).error, null);
    assert.equal(await count('joe'), 2);
  });
});
