// Mailgun's Messages API on the local server, driven by the official `mailgun.js` SDK (its
// documented `url` option, with `form-data` as its README shows) against a real server on port 0.
import assert from 'node:assert/strict';
import FormData from 'form-data';
// mailgun.js's types are ES modules: a CommonJS test loads it with a dynamic import.
type MailgunClass = (typeof import('mailgun.js', { with: { 'resolution-mode': 'import' } }))['default'];
let Mailgun: MailgunClass;
import MailComposer from 'nodemailer/lib/mail-composer';
import { API_TOKEN } from './api-harness';
import { header, onlyMessage, PIXEL, PROVIDER_KEY, type ProviderHarness, readInbox, startProviders } from './providers-harness';

function mailgunFor(url: string, key: string) {
  return new Mailgun(FormData).client({ username: 'api', key, url });
}

describe('Mailgun Messages API (server, real HTTP, official SDK)', () => {
  before(async () => {
    Mailgun = (await import('mailgun.js')).default;
  });
  let h: ProviderHarness;
  let mg: ReturnType<typeof mailgunFor>;
  beforeEach(async () => {
    h = await startProviders();
    mg = mailgunFor(h.base, PROVIDER_KEY);
  });
  afterEach(() => h.close());

  const basic = (key: string) => `Basic ${Buffer.from(`api:${key}`).toString('base64')}`;
  const postForm = (path: string, fields: Record<string, string>, headers: Record<string, string | undefined> = {}) =>
    h.call('POST', path, { body: new URLSearchParams(fields).toString(), headers: { authorization: basic(PROVIDER_KEY), 'content-type': 'application/x-www-form-urlencoded', ...headers } });

  it('sends HTML, text, an attachment and an inline image (multipart); answers {id, message}; tags and variables as headers', async () => {
    const sent = await mg.messages.create('mg.acme.test', {
      from: 'Acme <no-reply@mg.acme.test>',
      to: ['ann@inbox.test', 'Carl <carl@inbox.test>'],
      bcc: 'audit@inbox.test',
      subject: 'Your code is 314159',
      text: 'Your code is 314159',
      html: '<p>Your code is <b>314159</b><img src="cid:logo.png"></p>',
      attachment: [{ filename: 'report.csv', data: Buffer.from('a,b\n') }],
      inline: [{ filename: 'logo.png', data: PIXEL }],
      'o:tag': ['signup', 'otp'],
      'v:user-id': '42',
      'h:X-Campaign': 'spring',
    });
    assert.equal(sent.status, 200);
    assert.equal(sent.message, 'Queued. Thank you.');
    assert.match(sent.id!, /^<\d{14}\.[0-9a-f]{16}@mg\.acme\.test>$/);
    const ann = await onlyMessage(h, 'ann');
    assert.equal(header(ann, 'X-Test-Inbox-Api'), 'Mailgun (POST /v3/mg.acme.test/messages)');
    assert.equal(header(ann, 'message-id'), sent.id);
    assert.equal(header(ann, 'X-Mailgun-Tag'), 'signup');
    assert.equal(header(ann, 'X-Mailgun-Variables'), '{"user-id":"42"}');
    assert.equal(header(ann, 'X-Campaign'), 'spring');
    assert.doesNotMatch(ann.raw, /audit@inbox\.test/);
    assert.ok(ann.json.parts.some((p) => p.body.includes('<b>314159</b>')));
    assert.ok(ann.json.parts.some((p) => p.body.trim() === 'Your code is 314159'));
    assert.deepEqual(ann.attachments.map((a) => a.filename).sort(), ['logo.png', 'report.csv']);
    assert.equal((await onlyMessage(h, 'carl')).json.subject, 'Your code is 314159');
    assert.equal((await onlyMessage(h, 'audit')).json.subject, 'Your code is 314159');
  });

  it('o:testmode is answered as Mailgun answers it and the message is stored, marked', async () => {
    const sent = await mg.messages.create('mg.acme.test', { from: 'a@mg.acme.test', to: 'test@inbox.test', subject: 'Test mode', text: 'x', 'o:testmode': 'yes' });
    assert.equal(sent.message, 'Queued. Thank you.');
    assert.match(header(await onlyMessage(h, 'test'), 'X-Test-Inbox-Test-Mode') ?? '', /o:testmode/);
  });

  it('messages.mime stores the whole message as given, to the recipients of the request', async () => {
    const raw = await new MailComposer({ from: 'a@mg.acme.test', to: 'shown@inbox.test', subject: 'Raw 271828', text: 'code 271828' }).compile().build();
    const sent = await mg.messages.create('mg.acme.test', { to: 'envelope@inbox.test', message: raw });
    assert.equal(sent.message, 'Queued. Thank you.');
    const m = await onlyMessage(h, 'envelope');
    assert.equal(m.json.subject, 'Raw 271828');
    assert.equal(header(m, 'X-Test-Inbox-Api'), 'Mailgun (POST /v3/mg.acme.test/messages.mime)');
    assert.ok(m.raw.endsWith(raw.toString('utf8')), 'the message as given, after the API header fields');
    assert.equal((await readInbox(h, 'shown')).length, 0, 'the envelope decides, not the To header');
  });

  it('a wrong key gets 401 Forbidden; the API token does not open the route', async () => {
    await assert.rejects(mailgunFor(h.base, 'wrong-key').messages.create('mg.acme.test', { from: 'a@mg.acme.test', to: 'x@inbox.test', subject: 's', text: 't' }), (e: { status: number }) => {
      assert.equal(e.status, 401);
      return true;
    });
    const r = await postForm('/v3/mg.acme.test/messages', { from: 'a@mg.acme.test', to: 'x@inbox.test', text: 't' }, { authorization: basic(API_TOKEN) });
    assert.equal(r.status, 401);
    assert.equal(r.text, 'Forbidden');
    assert.equal((await readInbox(h, 'x')).length, 0);
  });

  it('bad input gets Mailgun 400s {message}; broken multipart too; nothing is stored', async () => {
    const base = { from: 'a@mg.acme.test', to: 'x@inbox.test', subject: 's', text: 't' };
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...base, from: '' }, /from parameter is missing/],
      [{ from: base.from, subject: 's', text: 't' }, /to parameter is missing/],
      [{ ...base, to: 'nope' }, /'to' parameter is not a valid address/],
      [{ from: base.from, to: base.to, subject: 's' }, /Need at least one of 'text', 'html'/],
      [{ ...base, 'o:deliverytime': new Date(Date.now() + 3_600_000).toUTCString() }, /Scheduled sending is not supported/],
      [{ ...base, colour: 'red' }, /'colour' is not a parameter/],
      [{ ...base, to: Array.from({ length: 1001 }, (_, i) => `r${i}@inbox.test`).join(',') }, /Too many recipients/],
    ];
    for (const [fields, message] of cases) {
      const r = await postForm('/v3/mg.acme.test/messages', fields);
      assert.equal(r.status, 400, JSON.stringify(fields).slice(0, 100));
      assert.match(r.json.message, message);
    }
    const broken = await h.call('POST', '/v3/mg.acme.test/messages', {
      body: '--XYZ\r\nContent-Disposition: form-data; name="from"\r\n\r\na@mg.acme.test\r\n--XY',
      headers: { authorization: basic(PROVIDER_KEY), 'content-type': 'multipart/form-data; boundary=XYZ' },
    });
    assert.equal(broken.status, 400);
    assert.match(broken.json.message, /not a form that can be read/);
    const noBoundary = await h.call('POST', '/v3/mg.acme.test/messages', { body: 'x', headers: { authorization: basic(PROVIDER_KEY), 'content-type': 'multipart/form-data' } });
    assert.equal(noBoundary.status, 400);
    assert.equal((await readInbox(h, 'x')).length, 0);
    assert.equal((await h.call('GET', '/healthz')).status, 200);
  });
});
