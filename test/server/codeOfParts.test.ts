// An injected or webhook message's code is read from its payload (code.ts codeOfParts) instead
// of parsing the MIME the server just composed (detectCode). The two must agree on every kind of
// payload, as an email and as an SMS, or listings would show a different code than before.
import assert from 'node:assert/strict';
import { composedSubject, composeMessage } from '../../src/server/http/compose';
import { codeOfParts, detectCode } from '../../src/server/store/code';

const payloads: Array<{ subject?: string; text?: string }> = [
  { subject: 'Your code is 482913', text: 'Welcome!' },
  { subject: 'Verify', text: 'Your verification code is 551 203.\nIt expires in 10 minutes.' },
  { subject: 'Sign in', text: 'Use G-749201 to sign in.\r\nNot you? Order #88812345 was not placed.' },
  { subject: '  Código de verificación: 3391  ', text: 'Hola,\n\nsu código es 3391.' },
  { subject: undefined, text: 'Your one-time password: 8F4K2Q' },
  { subject: '', text: '' },
  { subject: 'Invoice 2026-11-23', text: 'Total 1234.56 EUR, call +1 555 010 9999' },
  { subject: 'Long', text: `${'word '.repeat(40)}your code is 902117 ${'tail '.repeat(40)}` },
  { subject: 'Long line', text: `${'x'.repeat(70)} code: 663401 ${'y'.repeat(120)}` },
  { subject: '=?utf-8?Q?not_encoded?= 123456', text: 'PIN 0042' },
  { subject: '🔐 Login', text: '🔐 Your code: 771 882 🔐' },
];

describe('code of a composed message read from its parts', () => {
  for (const [i, p] of payloads.entries()) {
    for (const sms of [false, true]) {
      it(`agrees with parsing the composed MIME: payload ${i}${sms ? ' as an SMS' : ''}`, async () => {
        const inbox = sms ? '15550100' : 'joe';
        const raw = await composeMessage({ subject: p.subject, text: p.text, inbox, domain: 'inbox.test', source: 'inject' });
        const parsed = await detectCode(raw, sms);
        assert.equal(codeOfParts({ subject: composedSubject(p.subject), text: p.text ?? '' }, sms), parsed);
      });
    }
  }

  it('finds codes at all (the comparison above is not between two undefineds)', async () => {
    const found = await Promise.all(payloads.map((p) => codeOfParts({ subject: composedSubject(p.subject), text: p.text ?? '' }, false)));
    assert.ok(found.filter(Boolean).length >= 5, JSON.stringify(found));
  });
});
