// Hostile input to the email provider routes (issue 35): what a request may hold that costs the
// server more than its size (quadratic parsing, deep nesting) or hides a message's headers. Raw
// requests against a real server on port 0, each answered in its provider's own error shape; the
// SDKs never send such input. No timing is asserted: a large input must get its right answer, and
// the file's mocha timeout bounds it.
import assert from 'node:assert/strict';
import { type ProviderHarness, PROVIDER_KEY, readInbox, startProviders } from './providers-harness';

describe('provider routes: hostile input (server, real HTTP)', () => {
  let h: ProviderHarness;
  beforeEach(async () => {
    h = await startProviders();
  });
  afterEach(() => h.close());

  const resend = (body: unknown) => h.call('POST', '/emails', { body, headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
  const postmark = (body: unknown) => h.call('POST', '/email', { body, headers: { 'x-postmark-server-token': PROVIDER_KEY, accept: 'application/json' } });

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
