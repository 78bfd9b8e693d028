// SendGrid's v3 Mail Send on the local server, driven by the official `@sendgrid/mail` SDK (its
// client's documented `baseUrl` default request setting) against a real server on port 0.
import assert from 'node:assert/strict';
import { Client } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import { API_TOKEN } from './api-harness';
import { header, onlyMessage, PIXEL, PROVIDER_KEY, type ProviderHarness, readInbox, startProviders } from './providers-harness';

function sendgridFor(base: string, key: string): MailService {
  const client = new Client();
  client.setApiKey(key);
  client.setDefaultRequest('baseUrl', base);
  const mail = new MailService();
  mail.setClient(client);
  return mail;
}

describe('SendGrid v3 Mail Send (server, real HTTP, official SDK)', () => {
  let h: ProviderHarness;
  let sg: MailService;
  beforeEach(async () => {
    h = await startProviders();
    sg = sendgridFor(h.base, PROVIDER_KEY);
  });
  afterEach(() => h.close());

  const post = (body: unknown, headers: Record<string, string | undefined> = {}) =>
    h.call('POST', '/v3/mail/send', { body, headers: { authorization: `Bearer ${PROVIDER_KEY}`, ...headers } });

  it('sends HTML, text and attachments; answers 202 with X-Message-Id; each personalization is its own message, bcc not in headers', async () => {
    const [response] = await sg.send({
      personalizations: [
        { to: [{ email: 'ann@inbox.test', name: 'Ann' }], bcc: [{ email: 'audit@inbox.test' }], customArgs: { user: '42' } },
        { to: [{ email: 'bob@inbox.test' }], subject: 'Welcome, Bob' },
      ],
      from: { email: 'no-reply@acme.test', name: 'Acme' },
      replyTo: 'help@acme.test',
      subject: 'Your code is 135790',
      text: 'Your code is 135790',
      html: '<p>Your code is <b>135790</b></p><img src="cid:logo">',
      attachments: [
        { content: Buffer.from('col1,col2\n').toString('base64'), filename: 'report.csv', type: 'text/csv' },
        { content: PIXEL.toString('base64'), filename: 'logo.png', type: 'image/png', disposition: 'inline', contentId: 'logo' },
      ],
      categories: ['signup'],
      headers: { 'X-Campaign': 'spring' },
    });
    assert.equal(response.statusCode, 202);
    const messageId = response.headers['x-message-id'] as string;
    assert.match(messageId, /^[A-Za-z0-9_-]{22}$/);
    const ann = await onlyMessage(h, 'ann');
    assert.equal(ann.json.subject, 'Your code is 135790');
    assert.equal(header(ann, 'X-Test-Inbox-Api'), 'SendGrid (POST /v3/mail/send)');
    assert.equal(header(ann, 'X-Test-Inbox-Provider-Id'), messageId);
    assert.equal(header(ann, 'X-SendGrid-Custom-Arg'), 'user=42');
    assert.equal(header(ann, 'X-SendGrid-Category'), 'signup');
    assert.equal(header(ann, 'X-Campaign'), 'spring');
    assert.match(header(ann, 'to') ?? '', /Ann <ann@inbox\.test>/);
    assert.doesNotMatch(ann.raw, /audit@inbox\.test/);
    assert.ok(ann.json.parts.some((p) => p.body.includes('<b>135790</b>')));
    assert.ok(ann.json.parts.some((p) => p.body.trim() === 'Your code is 135790'));
    assert.deepEqual(ann.attachments.map((a) => a.filename).sort(), ['logo.png', 'report.csv']);
    assert.equal((await onlyMessage(h, 'audit')).json.subject, 'Your code is 135790');
    const bob = await onlyMessage(h, 'bob');
    assert.equal(bob.json.subject, 'Welcome, Bob');
    assert.doesNotMatch(bob.raw, /ann@inbox\.test/, 'personalizations are separate messages');
    const list = await h.call('GET', '/api/v2/domains/inbox.test/inboxes/bob');
    assert.equal(list.json.msgs[0].code, '135790', "the core's code of the stored message");
  });

  it('sandbox mode answers 200 and still stores the message, marked by a header', async () => {
    const [response] = await sg.send({ to: 'sandbox@inbox.test', from: 'a@acme.test', subject: 'Sandboxed', text: 'hi', mailSettings: { sandboxMode: { enable: true } } });
    assert.equal(response.statusCode, 200);
    assert.match(header(await onlyMessage(h, 'sandbox'), 'X-Test-Inbox-Test-Mode') ?? '', /sandbox_mode/);
  });

  it('a dynamic template send is stored with its id and data as text', async () => {
    const [response] = await sg.send({ to: 'tpl@inbox.test', from: 'a@acme.test', templateId: 'd-0123456789abcdef', dynamicTemplateData: { code: '908172', name: 'Ann' } });
    assert.equal(response.statusCode, 202);
    const m = await onlyMessage(h, 'tpl');
    assert.match(header(m, 'X-Test-Inbox-Template') ?? '', /d-0123456789abcdef/);
    assert.match(m.json.parts[0].body, /code: 908172/);
  });

  it('a wrong key gets SendGrid 401; no other token opens the route', async () => {
    await assert.rejects(sendgridFor(h.base, 'SG.wrong.key').send({ to: 'x@inbox.test', from: 'a@acme.test', subject: 's', text: 't' }), (e: { code: number; response: { body: unknown } }) => {
      assert.equal(e.code, 401);
      assert.deepEqual(e.response.body, { errors: [{ message: 'The provided authorization grant is invalid, expired, or revoked', field: null, help: null }] });
      return true;
    });
    const api = await post({}, { authorization: `Bearer ${API_TOKEN}` });
    assert.equal(api.status, 401);
    const none = await post({}, { authorization: undefined });
    assert.equal(none.status, 401);
    assert.equal(none.json.errors[0].message, 'authorization required');
    assert.equal((await readInbox(h, 'x')).length, 0);
  });

  it('bad input gets SendGrid 400s naming the field; nothing is stored', async () => {
    const base = { personalizations: [{ to: [{ email: 'x@inbox.test' }] }], from: { email: 'a@acme.test' }, subject: 's', content: [{ type: 'text/plain', value: 't' }] };
    const cases: Array<[unknown, string | null, RegExp]> = [
      [{ ...base, from: undefined }, 'from', /from object must be provided/],
      [{ ...base, personalizations: [] }, 'personalizations', /at least one personalization/],
      [{ ...base, personalizations: [{ to: [{ email: 'nope' }] }] }, 'personalizations.0.to.0.email', /valid address/],
      [{ ...base, subject: undefined }, 'subject', /subject is required/],
      [{ ...base, content: undefined }, 'content', /content parameter is required/],
      [{ ...base, send_at: Math.floor(Date.now() / 1000) + 3600 }, 'send_at', /Scheduled sending is not supported/],
      [{ ...base, personalizations: [{ to: Array.from({ length: 1001 }, (_, i) => ({ email: `r${i}@inbox.test` })) }] }, 'personalizations', /no more than 1000/],
      [{ ...base, attachments: [{ filename: 'a.txt' }] }, 'attachments.0.content', /content is required/],
      [{ ...base, colour: 'red' }, 'colour', /Unknown field/],
    ];
    for (const [body, field, message] of cases) {
      const r = await post(body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 100));
      assert.equal(r.json.errors[0].field, field);
      assert.match(r.json.errors[0].message, message);
    }
    const broken = await post('{"personalizations": [', { 'content-type': 'application/json' });
    assert.equal(broken.status, 400);
    assert.ok(Array.isArray(broken.json.errors));
    assert.equal((await readInbox(h, 'x')).length, 0);
  });
  it('G4: substitutions may add at most max(10,000 bytes, the template) to a personalization; past that a 400 in SendGrid shape, nothing stored', async () => {
    // A 10 KB template of one key 2,000 times, each replaced by 40 bytes: 80 KB out of a request of ~10 KB
    // (the SDK writes each key as {{key}}).
    const template = '{{k}}'.repeat(2000);
    const amplified = { to: 'amp@inbox.test', from: 'a@acme.test', subject: 'Amplified', text: template, substitutions: { k: 'x'.repeat(40) } };
    await assert.rejects(sg.send(amplified), (e: { code: number; response: { body: { errors: Array<{ message: string; field: string | null; help: unknown }> } } }) => {
      assert.equal(e.code, 400);
      const [err] = e.response.body.errors;
      assert.equal(err.field, 'personalizations.0.substitutions');
      assert.match(err.message, /substitutions would add \d+ bytes to the content, more than the 10000 they may add/);
      assert.equal(err.help, null);
      return true;
    });
    // A key whose value grows the text a step at a time is stopped at the step that passes the bound, one personalization of many.
    const chained = {
      personalizations: [
        { to: [{ email: 'amp@inbox.test' }], substitutions: { '{{k}}': 'Ann' } },
        { to: [{ email: 'amp2@inbox.test' }], substitutions: { '{{k}}': '-a--a-', '-a-': '-b--b-', '-b-': '-c--c-', '-c-': 'yyyyyyyyyy' } },
      ],
      from: { email: 'a@acme.test' },
      subject: 's',
      content: [{ type: 'text/plain', value: template }],
    };
    const r = await post(chained);
    assert.equal(r.status, 400, r.text.slice(0, 200));
    assert.equal(r.json.errors[0].field, 'personalizations.1.substitutions');
    assert.equal((await readInbox(h, 'amp')).length, 0, 'nothing is stored when one personalization is refused');
    assert.equal((await readInbox(h, 'amp2')).length, 0);
    // Within the bound: each personalization its own text; a big template may double.
    const [ok] = await sg.send({
      personalizations: [
        { to: [{ email: 'amp@inbox.test' }], substitutions: { k: 'Ann' } },
        { to: [{ email: 'amp2@inbox.test' }], substitutions: { k: '{{k}}{{k}}' } },
      ],
      from: 'a@acme.test',
      subject: 'Hello',
      text: `Hello {{k}}, ${template}`,
    });
    assert.equal(ok.statusCode, 202);
    assert.ok((await onlyMessage(h, 'amp')).json.parts[0].body.startsWith('Hello Ann, AnnAnn'));
    assert.ok((await onlyMessage(h, 'amp2')).json.parts[0].body.startsWith('Hello {{k}}{{k}}, {{k}}{{k}}{{k}}{{k}}'));
  });
});
