import assert from 'node:assert/strict';
import { firstWords, phoneDigits, smsSegments, smsSubject } from '../../src/core/sms';

describe('core/sms: GSM-7 / UCS-2 segments', () => {
  it('plain GSM-7 text: 160 septets in one segment, then 153 per segment', () => {
    assert.deepEqual(smsSegments(''), { encoding: 'GSM-7', units: 0, segments: 1 });
    assert.deepEqual(smsSegments('Your code is 123456'), { encoding: 'GSM-7', units: 19, segments: 1 });
    assert.deepEqual(smsSegments('a'.repeat(160)), { encoding: 'GSM-7', units: 160, segments: 1 });
    assert.deepEqual(smsSegments('a'.repeat(161)), { encoding: 'GSM-7', units: 161, segments: 2 });
    assert.equal(smsSegments('a'.repeat(306)).segments, 2);
    assert.equal(smsSegments('a'.repeat(307)).segments, 3);
  });

  it('the basic set includes accented letters, Greek capitals and @£$¥; no UCS-2 for them', () => {
    const info = smsSegments('@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ¤¡ÄÖÑÜ§¿äöñüà\r\n');
    assert.equal(info.encoding, 'GSM-7');
    assert.equal(info.units, Array.from('@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ¤¡ÄÖÑÜ§¿äöñüà\r\n').length);
  });

  it('extension-table characters count two septets and an escape pair is never split', () => {
    assert.deepEqual(smsSegments('€'), { encoding: 'GSM-7', units: 2, segments: 1 });
    assert.equal(smsSegments('^{}\\[~]|€\f').units, 20);
    assert.deepEqual(smsSegments('€'.repeat(80)), { encoding: 'GSM-7', units: 160, segments: 1 });
    assert.equal(smsSegments('a'.repeat(159) + '€').segments, 2);
    // 152 septets then a two-septet character: it does not fit in the first 153, so it opens segment 2.
    const text = 'a'.repeat(152) + '€' + 'a'.repeat(152);
    assert.equal(smsSegments(text).units, 306);
    assert.equal(smsSegments(text).segments, 3);
  });

  it('any other character makes the whole text UCS-2: 70 units, then 67 per segment', () => {
    assert.deepEqual(smsSegments('Código: 123456 ç'), { encoding: 'UCS-2', units: 16, segments: 1 });
    assert.deepEqual(smsSegments('ü'.repeat(10) + '你'.repeat(60)), { encoding: 'UCS-2', units: 70, segments: 1 });
    assert.equal(smsSegments('你'.repeat(71)).segments, 2);
    assert.equal(smsSegments('你'.repeat(134)).segments, 2);
    assert.equal(smsSegments('你'.repeat(135)).segments, 3);
  });

  it('an emoji is two UTF-16 units and a surrogate pair is never split', () => {
    assert.deepEqual(smsSegments('😀'), { encoding: 'UCS-2', units: 2, segments: 1 });
    const text = 'x'.repeat(66) + '😀' + 'x'.repeat(66);
    assert.equal(smsSegments(text).units, 134);
    assert.equal(smsSegments(text).segments, 3);
  });

  it('a phone number names its inbox by its digits only', () => {
    assert.equal(phoneDigits('+1 (555) 010-0199'), '15550100199');
    assert.equal(phoneDigits('+44.20.7946.0000'), '442079460000');
    assert.equal(phoneDigits('abc'), '');
  });
});

describe('core/sms: titles', () => {
  it('keeps a short text whole, on one line', () => {
    assert.equal(firstWords('  Your code\n is   123456  '), 'Your code is 123456');
    assert.equal(firstWords(''), '');
  });

  it('cuts a long text at a word boundary with an ellipsis, within the limit', () => {
    const t = firstWords('Your Acme login code is 604219. Do not share it with anyone, not even us.');
    assert.equal(t, 'Your Acme login code is 604219. Do not share…');
    assert.ok(Array.from(t).length <= 48);
    assert.equal(firstWords('one two three four', 10), 'one two…');
  });

  it('cuts one overlong word mid-word, and counts characters, not UTF-16 units', () => {
    assert.equal(firstWords('x'.repeat(100), 10), `${'x'.repeat(9)}…`);
    const emoji = firstWords('🔐'.repeat(60), 10);
    assert.equal(Array.from(emoji).length, 10);
    assert.ok(!/[\ud800-\udbff]…$/.test(emoji), 'no lone surrogate before the ellipsis');
  });

  it('stores the first words as the subject, "SMS" for an empty text', () => {
    assert.equal(smsSubject('Your code is 123456'), 'Your code is 123456');
    assert.equal(smsSubject(''), 'SMS');
  });
});
