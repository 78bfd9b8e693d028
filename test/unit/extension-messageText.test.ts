import assert from 'node:assert/strict';
import type { Message } from '../../src/core/wire';
import { codeOf, codeSource, contentOf } from '../../src/core/message';
import { buildViewState } from '../../src/webview-ui/viewState';

function anSms(body: string): Message {
  return { kind: 'sms', id: '15555550123-1795313258-3', fromfull: '15555550100', subject: 'SMS', parts: [{ body }], to: '15555550123', time: 1795313258219, seconds_ago: 1 };
}

function anEmail(parts: Array<{ type: string; body: string; disposition?: string }>): Message {
  return {
    kind: 'email',
    id: 'joe-1795313258-4',
    fromfull: 'Acme <no-reply@acme.test>',
    from: 'Acme',
    headers: {},
    subject: 'Hello',
    parts: parts.map((p) => ({ headers: { 'content-type': p.type, ...(p.disposition ? { 'content-disposition': p.disposition } : {}) }, body: p.body })),
    to: 'joe',
    time: 1795313258219,
    seconds_ago: 1,
  };
}

describe('message texts for code extraction', () => {
  it('finds the sole number of a long SMS, which is an SMS whatever its length', () => {
    const filler = 'Thanks for joining the Acme rewards programme, we are glad to have you with us. '.repeat(5);
    const sms = anSms(`${filler}Use 583920 to finish signing in.`);
    assert.ok(sms.kind === 'sms' && sms.parts[0].body.length > 320);
    assert.equal(codeOf(contentOf(sms)), '583920');
  });

  it('separates the text and HTML parts of an email and ignores attachments', () => {
    const texts = codeSource(contentOf(
      anEmail([
        { type: 'text/plain; charset=utf-8', body: 'plain' },
        { type: 'text/html; charset=utf-8', body: '<p>html</p>' },
        { type: 'application/pdf', body: 'JVBERi0=' },
      ]),
    ));
    assert.deepEqual(texts, { subject: 'Hello', text: 'plain', html: '<p>html</p>' });
  });

  it('still finds the sole number of a short plain-text email, such as an injected test message', () => {
    assert.equal(codeOf(contentOf(anEmail([{ type: 'text/plain', body: 'Use 4821 to log in' }]))), '4821');
  });

  it('skips a text part marked as an attachment, for Copy One-Time Code and the message view alike', () => {
    const m = anEmail([
      { type: 'text/plain', body: 'Your verification code is 482913.' },
      { type: 'text/plain; name="invoice.txt"', disposition: 'attachment; filename="invoice.txt"', body: 'Your code is 777111' },
    ]);
    assert.deepEqual(codeSource(contentOf(m)), { subject: 'Hello', text: 'Your verification code is 482913.', html: '' });
    assert.equal(codeOf(contentOf(m)), '482913');
    assert.equal(buildViewState({ domain: 'inbox.test', message: m, allowRemoteImages: false }).code?.code, '482913');
    // Without the attachment marking the same part would be a body and change the answer.
    const unmarked = anEmail([
      { type: 'text/plain', body: 'Use the number below.' },
      { type: 'text/plain', body: 'Your code is 777111' },
    ]);
    assert.equal(codeOf(contentOf(unmarked)), '777111');
  });

  it('the SMS view state carries the segment count and encoding by the standard rules', () => {
    const gsm = buildViewState({ domain: 'inbox.test', message: anSms('a'.repeat(161)), allowRemoteImages: false });
    assert.deepEqual([gsm.sms?.segments, gsm.sms?.encoding], [2, 'GSM-7']);
    const ucs = buildViewState({ domain: 'inbox.test', message: anSms('Código 123456 😀'), allowRemoteImages: false });
    assert.deepEqual([ucs.sms?.segments, ucs.sms?.encoding], [1, 'UCS-2']);
  });
});
