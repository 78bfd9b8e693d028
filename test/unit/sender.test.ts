import assert from 'node:assert/strict';
import { senderLine } from '../../src/core/sender';

describe('senderLine', () => {
  it('shows a from that already has the address in angle brackets as it is (local server, hosted docs)', () => {
    assert.equal(senderLine({ from: 'Our Qa Tester <qatester@company.example>' }), 'Our Qa Tester <qatester@company.example>');
    assert.equal(senderLine({ from: 'Acme', fromfull: 'Acme <no-reply@acme.test>' }), 'Acme <no-reply@acme.test>');
  });

  it('prefers the received From (origfrom) of a real hosted answer', () => {
    assert.equal(senderLine({ from: 'WOMANIZER', fromfull: 'news@mail.example', origfrom: 'WOMANIZER <news@mail.example>' }), 'WOMANIZER <news@mail.example>');
  });

  it('joins a display-name-only from with the bare address of fromfull', () => {
    assert.equal(senderLine({ from: 'Nora', fromfull: 'noreply@mailer.example' }), 'Nora <noreply@mailer.example>');
    assert.equal(senderLine({ from: 'noreply@mailer.example', fromfull: 'noreply@mailer.example' }), 'noreply@mailer.example');
    assert.equal(senderLine({ from: '', fromfull: 'a@b.example' }), 'a@b.example');
  });

  it('falls back to whatever the server sent', () => {
    assert.equal(senderLine({ from: 'Billing' }), 'Billing');
    assert.equal(senderLine({ from: '', fromfull: '' }), '');
    assert.equal(senderLine({ from: '  ', fromfull: '+14155550100' }), '+14155550100');
  });
});
