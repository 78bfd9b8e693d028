import assert from 'node:assert/strict';
import { codeOf, codeSource, contentOf } from '../../src/core/message';
import { buildViewContent } from '../../src/webview-ui/viewContent';
import { emailPart, fetchedEmail, fetchedSms } from '../support/messages';

/** An email of these parts whose subject is "Hello" and whose headers are empty. */
const emailOf = (parts: Array<{ type: string; body: string; disposition?: string }>) => fetchedEmail({ subject: 'Hello', headers: {}, parts: parts.map((p) => emailPart(p.type, p.body, p.disposition)) });


describe('message texts for code extraction', () => {
  it('finds the sole number of a long SMS, which is an SMS whatever its length', () => {
    const filler = 'Thanks for joining the Acme rewards programme, we are glad to have you with us. '.repeat(5);
    const sms = fetchedSms({ parts: [{ body: `${filler}Use 583920 to finish signing in.` }] });
    assert.ok(sms.kind === 'sms' && sms.parts[0].body.length > 320);
    assert.equal(codeOf(contentOf(sms)), '583920');
  });

  it('separates the text and HTML parts of an email and ignores attachments', () => {
    const texts = codeSource(contentOf(
      emailOf([
        { type: 'text/plain; charset=utf-8', body: 'plain' },
        { type: 'text/html; charset=utf-8', body: '<p>html</p>' },
        { type: 'application/pdf', body: 'JVBERi0=' },
      ]),
    ));
    assert.deepEqual(texts, { subject: 'Hello', text: 'plain', html: '<p>html</p>' });
  });

  it('still finds the sole number of a short plain-text email, such as an injected test message', () => {
    assert.equal(codeOf(contentOf(emailOf([{ type: 'text/plain', body: 'Use 4821 to log in' }]))), '4821');
  });

  it('skips a text part marked as an attachment, for Copy One-Time Code and the message view alike', () => {
    const m = emailOf([
      { type: 'text/plain', body: 'Your verification code is 482913.' },
      { type: 'text/plain; name="invoice.txt"', disposition: 'attachment; filename="invoice.txt"', body: 'Your code is 777111' },
    ]);
    assert.deepEqual(codeSource(contentOf(m)), { subject: 'Hello', text: 'Your verification code is 482913.', html: '' });
    assert.equal(codeOf(contentOf(m)), '482913');
    assert.equal(buildViewContent({ domain: 'inbox.test', message: m, allowRemoteImages: false }).code?.code, '482913');
    // Without the attachment marking the same part would be a body and change the answer.
    const unmarked = emailOf([
      { type: 'text/plain', body: 'Use the number below.' },
      { type: 'text/plain', body: 'Your code is 777111' },
    ]);
    assert.equal(codeOf(contentOf(unmarked)), '777111');
  });

  it('the SMS view content carries the segment count and encoding by the standard rules', () => {
    const gsm = buildViewContent({ domain: 'inbox.test', message: fetchedSms({ parts: [{ body: 'a'.repeat(161) }] }), allowRemoteImages: false });
    assert.deepEqual([gsm.sms?.segments, gsm.sms?.encoding], [2, 'GSM-7']);
    const ucs = buildViewContent({ domain: 'inbox.test', message: fetchedSms({ parts: [{ body: 'Código 123456 😀' }] }), allowRemoteImages: false });
    assert.deepEqual([ucs.sms?.segments, ucs.sms?.encoding], [1, 'UCS-2']);
  });
});
