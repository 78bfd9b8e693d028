// Postmark's Email API on the local server, driven by the official `postmark` SDK (its
// documented `requestHost` and `useHttps` options) against a real server on port 0.
import assert from 'node:assert/strict';
import { ServerClient } from 'postmark';
import { API_TOKEN } from './api-harness';
import { header, onlyMessage, PIXEL, PROVIDER_KEY, type ProviderHarness, readInbox, startProviders } from './providers-harness';

describe('Postmark Email API (server, real HTTP, official SDK)', () => {
  let h: ProviderHarness;
  let pm: ServerClient;
  beforeEach(async () => {
    h = await startProviders();
    pm = new ServerClient(PROVIDER_KEY, { useHttps: false, requestHost: `127.0.0.1:${h.port}` });
  });
  afterEach(() => h.close());

  const post = (path: string, body: unknown, headers: Record<string, string | undefined> = {}) =>
    h.call('POST', path, { body, headers: { 'x-postmark-server-token': PROVIDER_KEY, accept: 'application/json', ...headers } });

  it('sends HTML, text and attachments; answers {To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}; metadata kept as X-PM headers', async () => {
    const sent = await pm.sendEmail({
      From: 'Acme <no-reply@acme.test>',
      To: 'ann@inbox.test, Carl <carl@inbox.test>',
      Bcc: 'audit@inbox.test',
      ReplyTo: 'help@acme.test',
      Subject: 'Your code is 112358',
      TextBody: 'Your code is 112358',
      HtmlBody: '<p>Your code is <b>112358</b><img src="cid:logo.png"></p>',
      Tag: 'signup',
      MessageStream: 'outbound',
      Metadata: { user: '42' },
      Headers: [{ Name: 'X-Campaign', Value: 'spring' }],
      Attachments: [
        { Name: 'notes.txt', Content: Buffer.from('hello').toString('base64'), ContentType: 'text/plain', ContentID: null },
        { Name: 'logo.png', Content: PIXEL.toString('base64'), ContentType: 'image/png', ContentID: 'cid:logo.png' },
      ],
    });
    assert.equal(sent.ErrorCode, 0);
    assert.equal(sent.Message, 'OK');
    assert.equal(sent.To, 'ann@inbox.test, carl@inbox.test');
    assert.match(sent.MessageID, /^[0-9a-f-]{36}$/);
    assert.ok(Number.isFinite(Date.parse(sent.SubmittedAt)));
    const ann = await onlyMessage(h, 'ann');
    assert.equal(header(ann, 'X-Test-Inbox-Api'), 'Postmark (POST /email)');
    assert.equal(header(ann, 'X-Test-Inbox-Provider-Id'), sent.MessageID);
    assert.equal(header(ann, 'X-PM-Tag'), 'signup');
    assert.equal(header(ann, 'X-PM-Message-Stream'), 'outbound');
    assert.equal(header(ann, 'X-PM-Metadata-user'), '42');
    assert.equal(header(ann, 'X-Campaign'), 'spring');
    assert.doesNotMatch(ann.raw, /audit@inbox\.test/);
    assert.ok(ann.json.parts.some((p) => p.body.includes('<b>112358</b>')));
    assert.ok(ann.json.parts.some((p) => p.body.trim() === 'Your code is 112358'));
    assert.deepEqual(ann.attachments.map((a) => a.filename).sort(), ['logo.png', 'notes.txt']);
    assert.equal((await onlyMessage(h, 'audit')).json.subject, 'Your code is 112358');
    assert.equal((await onlyMessage(h, 'carl')).json.subject, 'Your code is 112358');
  });

  it('a batch answers each message on its own: the good ones are stored, a bad one gets its ErrorCode', async () => {
    const answers = await pm.sendEmailBatch([
      { From: 'a@acme.test', To: 'b1@inbox.test', Subject: 'One', TextBody: 'one' },
      { From: 'a@acme.test', To: 'not an address', Subject: 'Two', TextBody: 'two' },
      { From: 'a@acme.test', To: 'b3@inbox.test', Subject: 'Three', HtmlBody: '<p>three</p>' },
    ]);
    assert.deepEqual(answers.map((a) => a.ErrorCode), [0, 300, 0]);
    assert.match(answers[1].Message, /Illegal email address/);
    assert.equal(header(await onlyMessage(h, 'b1'), 'X-Test-Inbox-Api'), 'Postmark (POST /email/batch)');
    assert.equal((await onlyMessage(h, 'b3')).json.subject, 'Three');
  });

  it('a template send is stored with its alias and model as text, marked not rendered', async () => {
    const sent = await pm.sendEmailWithTemplate({ From: 'a@acme.test', To: 'tpl@inbox.test', TemplateAlias: 'welcome', TemplateModel: { code: '606060', action_url: 'https://app.test/confirm?t=1' } });
    assert.equal(sent.ErrorCode, 0);
    const m = await onlyMessage(h, 'tpl');
    assert.match(header(m, 'X-Test-Inbox-Template') ?? '', /welcome.*not rendered/);
    assert.match(m.json.parts[0].body, /code: 606060/);
    const batch = await pm.sendEmailBatchWithTemplates([{ From: 'a@acme.test', To: 'tpl2@inbox.test', TemplateId: 1234, TemplateModel: { name: 'Bo' } }]);
    assert.equal(batch[0].ErrorCode, 0);
    assert.match((await onlyMessage(h, 'tpl2')).json.parts[0].body, /template 1234/);
  });

  it('a wrong token gets Postmark 401 (ErrorCode 10); the API token does not open the route', async () => {
    const wrong = new ServerClient('wrong-token', { useHttps: false, requestHost: `127.0.0.1:${h.port}` });
    await assert.rejects(wrong.sendEmail({ From: 'a@acme.test', To: 'x@inbox.test', Subject: 's', TextBody: 't' }), (e: { name: string; code: number; statusCode: number }) => {
      assert.equal(e.name, 'InvalidAPIKeyError');
      assert.equal(e.code, 10);
      assert.equal(e.statusCode, 401);
      return true;
    });
    assert.equal((await post('/email', {}, { 'x-postmark-server-token': API_TOKEN })).status, 401);
    const none = await post('/email', {}, { 'x-postmark-server-token': undefined });
    assert.equal(none.json.ErrorCode, 10);
    assert.equal((await readInbox(h, 'x')).length, 0);
  });

  it('bad input gets Postmark 422s with its error codes; nothing is stored', async () => {
    const base = { From: 'a@acme.test', To: 'x@inbox.test', Subject: 's', TextBody: 't' };
    const cases: Array<[unknown, number, RegExp]> = [
      [{ ...base, From: undefined }, 300, /Invalid 'From' address/],
      [{ ...base, To: undefined }, 300, /Zero recipients/],
      [{ ...base, To: 'x@' }, 300, /Illegal email address/],
      [{ ...base, TextBody: undefined }, 300, /TextBody or HtmlBody/],
      [{ ...base, To: Array.from({ length: 51 }, (_, i) => `r${i}@inbox.test`).join(',') }, 300, /Maximum of 50 recipients/],
      [{ ...base, Colour: 'red' }, 403, /unknown field 'Colour'/],
      [{ ...base, Subject: 5 }, 403, /'Subject' must be a string/],
    ];
    for (const [body, code, message] of cases) {
      const r = await post('/email', body);
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal(r.json.ErrorCode, code);
      assert.match(r.json.Message, message);
    }
    const broken = await post('/email', '{"From": ', { 'content-type': 'application/json' });
    assert.equal(broken.status, 422);
    assert.equal(broken.json.ErrorCode, 402);
    const tooMany = await post('/email/batch', Array.from({ length: 501 }, () => base));
    assert.equal(tooMany.json.ErrorCode, 410);
    assert.equal((await readInbox(h, 'x')).length, 0);
  });
});
