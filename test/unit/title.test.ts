import assert from 'node:assert/strict';
import { isPlaceholderSmsSubject, messageSender, messageTitle, NO_SUBJECT } from '../../src/core/title';

describe('core/title: what a message is called on every surface', () => {
  const email = { subject: '  Welcome to Acme ', from: 'Acme <no-reply@acme.test>', to: 'alice' };
  const sms = { subject: 'Your code is 123456', from: '+15550100000', to: '15551234567' };

  it('an email: its subject, trimmed, or NO_SUBJECT', () => {
    assert.equal(messageTitle(email), 'Welcome to Acme');
    assert.equal(messageTitle({ ...email, subject: ' ' }), NO_SUBJECT);
    assert.equal(NO_SUBJECT, '(no subject)');
  });

  it('an SMS (a phone inbox, or a caller that says so): its first words, from its text where at hand', () => {
    assert.equal(messageTitle(sms), 'Your code is 123456');
    assert.equal(messageTitle({ ...sms, smsText: 'Your Acme code: 7731. Do not share it.' }), 'Your Acme code: 7731. Do not share it.');
    assert.equal(messageTitle({ ...email, sms: true, subject: 'SMS', smsText: 'hi there' }), 'hi there');
    const long = messageTitle({ ...sms, subject: 'Your Acme login code is 604219. Do not share it with anyone, not even us.' });
    assert.equal(long, 'Your Acme login code is 604219. Do not share…');
  });

  it('an SMS that says nothing is named by its sender: the placeholders "SMS", "" and NO_SUBJECT', () => {
    for (const subject of ['SMS', 'sms', ' ', '', NO_SUBJECT]) {
      assert.ok(isPlaceholderSmsSubject(subject), subject);
      assert.equal(messageTitle({ ...sms, subject }), 'SMS from +15550100000', subject);
    }
    assert.equal(messageTitle({ ...sms, subject: 'SMS', from: '"Acme Support" <help@acme.test>' }), 'SMS from Acme Support');
    assert.equal(messageTitle({ ...sms, subject: 'SMS', from: ' ' }), 'SMS from unknown sender');
    assert.ok(!isPlaceholderSmsSubject('Your code is 123456'));
  });

  it('an email to an inbox of digits that the caller says is an email stays titled by its subject', () => {
    assert.equal(messageTitle({ ...sms, sms: false, subject: '' }), NO_SUBJECT);
  });

  it('names the sender by display name, else address, from whichever field has it (hosted listings)', () => {
    assert.equal(messageSender({ from: 'WOMANIZER', fromfull: 'news@mail.womanizer.com' }), 'WOMANIZER');
    assert.equal(messageSender({ from: '<x@y.test>' }), 'x@y.test');
  });
});
