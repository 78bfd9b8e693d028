import assert from 'node:assert/strict';
import type { Message } from '../../src/api/types';
import { bestCode } from '../../src/core/otp';
import { messageTexts } from '../../src/extension/messageText';

function anSms(body: string): Message {
  return { kind: 'sms', id: '15555550123-1795313258-3', fromfull: '15555550100', subject: 'SMS', parts: [{ body }], to: '15555550123', time: 1795313258219, seconds_ago: 1 };
}

function anEmail(parts: Array<{ type: string; body: string }>): Message {
  return {
    kind: 'email',
    id: 'joe-1795313258-4',
    fromfull: 'Acme <no-reply@acme.test>',
    from: 'Acme',
    headers: {},
    subject: 'Hello',
    parts: parts.map((p) => ({ headers: { 'content-type': p.type }, body: p.body })),
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
    assert.equal(bestCode(messageTexts(sms)), '583920');
  });

  it('separates the text and HTML parts of an email and ignores attachments', () => {
    const texts = messageTexts(
      anEmail([
        { type: 'text/plain; charset=utf-8', body: 'plain' },
        { type: 'text/html; charset=utf-8', body: '<p>html</p>' },
        { type: 'application/pdf', body: 'JVBERi0=' },
      ]),
    );
    assert.deepEqual(texts, { subject: 'Hello', text: 'plain', html: '<p>html</p>' });
  });

  it('still finds the sole number of a short plain-text email, such as an injected test message', () => {
    assert.equal(bestCode(messageTexts(anEmail([{ type: 'text/plain', body: 'Use 4821 to log in' }]))), '4821');
  });
});
