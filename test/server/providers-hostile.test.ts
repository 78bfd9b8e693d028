// Hostile input to the email provider routes (issue 35): what a request may hold that costs the
// server more than its size (quadratic parsing, deep nesting) or hides a message's headers. Raw
// requests against a real server on port 0, each answered in its provider's own error shape; the
// SDKs never send such input. No timing is asserted: a large input must get its right answer, and
// the file's mocha timeout bounds it.
import assert from 'node:assert/strict';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { type ProviderHarness, PROVIDER_KEY, readInbox, startProviders } from './providers-harness';

describe('provider routes: hostile input (server, real HTTP)', () => {
  let h: ProviderHarness;
  beforeEach(async () => {
    h = await startProviders();
  });
  afterEach(() => h.close());

  const resend = (body: unknown) => h.call('POST', '/emails', { body, headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
  const postmark = (body: unknown) => h.call('POST', '/email', { body, headers: { 'x-postmark-server-token': PROVIDER_KEY, accept: 'application/json' } });
  const sendgrid = (body: unknown) => h.call('POST', '/v3/mail/send', { body, headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
  const basic = `Basic ${Buffer.from(`api:${PROVIDER_KEY}`).toString('base64')}`;
  const mailgun = (fields: Array<[string, string]>) =>
    h.call('POST', '/v3/mg.acme.test/messages', { body: new URLSearchParams(fields).toString(), headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' } });
  const ses = () => new SESv2Client({ region: 'eu-west-1', endpoint: h.base, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: PROVIDER_KEY }, maxAttempts: 1 });

  it("G2: an address field longer than the provider's recipients can be is refused in its shape before it is parsed", async () => {
    // One address with a display name as long as 50 whole addresses may be (50 × 998 characters): one character too many.
    const long = (n: number) => `"${'n'.repeat(n * 998)}" <long@inbox.test>`;
    const r = await resend({ from: 'a@acme.test', to: long(50), subject: 's', text: 't' });
    assert.equal(r.status, 422, r.text.slice(0, 200));
    assert.equal(r.json.name, 'validation_error');
    assert.match(r.json.message, /^The `to` field is \d+ characters long, more than 50 addresses can be \(49900 characters\)\.$/);
    const list = await resend({ from: 'a@acme.test', to: Array.from({ length: 2 }, () => long(25)), subject: 's', text: 't' });
    assert.equal(list.status, 422, 'an array is bounded as a whole');
    const p = await postmark({ From: 'a@acme.test', To: long(50), TextBody: 't' });
    assert.equal(p.status, 422, p.text.slice(0, 200));
    assert.equal(p.json.ErrorCode, 300);
    assert.match(p.json.Message, /^Error parsing 'To': the field is \d+ characters long/);
    const m = await mailgun([['from', 'a@mg.acme.test'], ['to', long(1000)], ['text', 't']]);
    assert.equal(m.status, 400, m.text.slice(0, 200));
    assert.match(m.json.message, /^'to' parameter is \d+ characters long, more than 1000 addresses can be/);
    const split = await mailgun([['from', 'a@mg.acme.test'], ['to', long(500)], ['to', long(500)], ['text', 't']]);
    assert.equal(split.status, 400, 'every value of a parameter is bounded together');
    // Each SES address is one mailbox; so is a From.
    await assert.rejects(
      ses().send(new SendEmailCommand({ FromEmailAddress: 'a@acme.test', Destination: { ToAddresses: [long(1)] }, Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } } })),
      (e: { name: string; message: string; $metadata: { httpStatusCode: number } }) => {
        assert.equal(e.$metadata.httpStatusCode, 400);
        assert.equal(e.name, 'MessageRejected');
        assert.match(e.message, /more than one address can be \(998 characters\)/);
        return true;
      },
    );
    const from = await resend({ from: long(1), to: 'long@inbox.test', subject: 's', text: 't' });
    assert.equal(from.status, 422);
    assert.match(from.json.message, /more than one address can be/);
    assert.equal((await readInbox(h, 'long')).length, 0);
    // At the bound, taken: a long display name is not refused for its length alone.
    const taken = await resend({ from: 'a@acme.test', to: `"${'n'.repeat(900)}" <long@inbox.test>`, subject: 's', text: 't' });
    assert.equal(taken.status, 200, taken.text.slice(0, 200));
  });

  it('G2: an address list within the bound is parsed in linear time (addressparser had been quadratic in the number of addresses)', async () => {
    // 300 KB of one-letter "addresses", within Mailgun's bound of 1,000 × 998 characters: the whole
    // list went to addressparser in one call, which took most of a minute for it.
    const many = 'a,'.repeat(150_000);
    const m = await mailgun([['from', 'a@mg.acme.test'], ['to', many], ['text', 't']]);
    assert.equal(m.status, 400, m.text.slice(0, 200));
    assert.match(m.json.message, /'to' parameter is not a valid address/);
    // Real addresses, as many as the bound holds, parse and are then counted.
    const real = Array.from({ length: 50_000 }, (_, i) => `r${i}@inbox.test`).join(',');
    const counted = await mailgun([['from', 'a@mg.acme.test'], ['to', real], ['text', 't']]);
    assert.equal(counted.status, 400);
    assert.match(counted.json.message, /Too many recipients/);
    // A comma inside quotes or angle brackets does not split a mailbox; a group's members are read.
    const quoted = await postmark({ From: 'a@acme.test', To: '"Doe, Jane" <jane@inbox.test>, Team: kim@inbox.test, lee@inbox.test;', TextBody: 't' });
    assert.equal(quoted.status, 200, quoted.text.slice(0, 200));
    assert.equal(quoted.json.To, 'jane@inbox.test, kim@inbox.test, lee@inbox.test');
  });

  it('G9: a header name that is no RFC 5322 field-name is refused in SendGrid `headers` and Mailgun `h:`; the index skips one bad line of a message', async () => {
    const base = { personalizations: [{ to: [{ email: 'hdr@inbox.test' }] }], from: { email: 'a@acme.test' }, subject: 'Hidden 5512', content: [{ type: 'text/plain', value: 't' }] };
    for (const name of ['X Bad', 'X-Bad:', 'X-Bäd', '']) {
      const r = await sendgrid({ ...base, headers: { [name]: 'v' } });
      assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.text}`);
      assert.equal(r.json.errors[0].field, 'headers');
      assert.match(r.json.errors[0].message, /header name .* is not valid/);
    }
    const p = await sendgrid({ ...base, personalizations: [{ to: [{ email: 'hdr@inbox.test' }], headers: { 'X Bad': 'v' } }] });
    assert.equal(p.status, 400);
    assert.equal(p.json.errors[0].field, 'personalizations.0.headers');
    const m = await mailgun([['from', 'a@mg.acme.test'], ['to', 'hdr@inbox.test'], ['subject', 'Hidden 5512'], ['text', 't'], ['h:X Bad', 'v']]);
    assert.equal(m.status, 400, m.text);
    assert.match(m.json.message, /'h:X Bad' does not name a valid header/);
    assert.equal((await readInbox(h, 'hdr')).length, 0);
    const ok = await sendgrid({ ...base, headers: { 'X-Good_1.2': 'v' } });
    assert.equal(ok.status, 202, ok.text);

    // A message that arrives with such a line anyway (SMTP, messages.mime) still lists its sender and subject.
    await h.deliver('smtp-hdr', Buffer.from('X Bad: 1\r\nFrom: Ann <ann@acme.test>\r\nSubject: Shown 7781\r\n\r\nbody\r\n'));
    const list = await h.call('GET', '/api/v2/domains/inbox.test/inboxes/smtp-hdr');
    assert.equal(list.json.msgs[0].subject, 'Shown 7781');
    assert.match(list.json.msgs[0].from, /ann@acme\.test/);
    const found = await h.call('GET', `/api/v2/search?q=${encodeURIComponent('subject:"shown 7781" from:ann')}`);
    assert.equal(found.status, 200, found.text);
    assert.equal(found.json.msgs.length, 1);
  });

  it('G10: template data nested deeper than any template needs gets a 4xx in the provider\'s shape, not a 500', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const data = deep(10_000);
    const r = await resend(`{"from":"a@acme.test","to":"deep@inbox.test","subject":"s","template":{"id":"t","variables":${data}}}`);
    assert.equal(r.status, 422, r.text.slice(0, 200));
    assert.equal(r.json.name, 'validation_error');
    assert.match(r.json.message, /nested more than 64 levels deep/);
    const g = await sendgrid(`{"personalizations":[{"to":[{"email":"deep@inbox.test"}],"dynamic_template_data":${data}}],"from":{"email":"a@acme.test"},"template_id":"d-1"}`);
    assert.equal(g.status, 400, g.text.slice(0, 200));
    assert.match(g.json.errors[0].message, /nested more than 64 levels deep/);
    const pt = await h.call('POST', '/email/withTemplate', { body: `{"From":"a@acme.test","To":"deep@inbox.test","TemplateAlias":"t","TemplateModel":${data}}`, headers: { 'x-postmark-server-token': PROVIDER_KEY } });
    assert.equal(pt.status, 422, pt.text.slice(0, 200));
    assert.equal(pt.json.ErrorCode, 403);
    assert.match(pt.json.Message, /nested more than 64 levels deep/);
    const m = await mailgun([['from', 'a@mg.acme.test'], ['to', 'deep@inbox.test'], ['template', 't'], ['t:variables', data]]);
    assert.equal(m.status, 400, m.text.slice(0, 200));
    assert.match(m.json.message, /'t:variables' .*nested more than 64 levels deep/);
    await assert.rejects(
      ses().send(new SendEmailCommand({ FromEmailAddress: 'a@acme.test', Destination: { ToAddresses: ['deep@inbox.test'] }, Content: { Template: { TemplateName: 't', TemplateData: data } } })),
      (e: { name: string; message: string; $metadata: { httpStatusCode: number } }) => {
        assert.equal(e.$metadata.httpStatusCode, 400);
        assert.equal(e.name, 'BadRequestException');
        assert.match(e.message, /nested more than 64 levels deep/);
        return true;
      },
    );
    assert.equal((await readInbox(h, 'deep')).length, 0);
    // Data as deep as a real template's is taken.
    const ok = await resend(`{"from":"a@acme.test","to":"deep@inbox.test","subject":"s","template":{"id":"t","variables":${deep(40)}}}`);
    assert.equal(ok.status, 200, ok.text.slice(0, 200));
  });

  it('G3: base64 attachment content is validated in one pass: 160 KB of blanks and one bad character is refused, 1 MB of wrapped base64 is taken', async () => {
    // The old check backtracked over the blanks once per blank: most of a minute for this input.
    const blanks = `${' '.repeat(160 * 1024)}!`;
    const r = await resend({ from: 'a@acme.test', to: 'b64@inbox.test', subject: 's', text: 't', attachments: [{ filename: 'a.bin', content: blanks }] });
    assert.equal(r.status, 422, r.text.slice(0, 200));
    assert.equal(r.json.name, 'invalid_attachment');
    assert.match(r.json.message, /not base64/);
    const p = await postmark({ From: 'a@acme.test', To: 'b64@inbox.test', TextBody: 't', Attachments: [{ Name: 'a.bin', Content: ' \r\n!', ContentType: 'application/octet-stream' }] });
    assert.equal(p.status, 422, p.text.slice(0, 200));
    assert.match(p.json.Message, /not base64/);
    for (const bad of ['QUJD=A', 'QUJD===', 'QU=JD', 'QUJD= =', 'QUJD*']) {
      const x = await resend({ from: 'a@acme.test', to: 'b64@inbox.test', subject: 's', text: 't', attachments: [{ filename: 'a.bin', content: bad }] });
      assert.equal(x.status, 422, bad);
    }
    assert.equal((await readInbox(h, 'b64')).length, 0);

    const bytes = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff;
    const wrapped = `${bytes.toString('base64').replace(/.{76}/g, '$&\r\n')}\r\n`;
    const ok = await resend({ from: 'a@acme.test', to: 'b64@inbox.test', subject: 's', text: 't', attachments: [{ filename: 'a.bin', content: wrapped }] });
    assert.equal(ok.status, 200, ok.text.slice(0, 200));
    const [m] = await readInbox(h, 'b64');
    assert.equal(m.attachments[0].size, bytes.length);
    const file = await h.call('GET', `/api/v2/domains/inbox.test/inboxes/b64/messages/${m.id}/attachments/${m.attachments[0].attachment_id}`);
    assert.ok(file.bytes.equals(bytes));
  });
});
