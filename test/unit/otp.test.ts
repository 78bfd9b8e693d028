import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { bestCode, extractCodes, originBoundCode, type CodeSource } from '../../src/core/otp';

interface CorpusCase extends CodeSource {
  name: string;
  kind: 'email' | 'sms';
  expected: string | null;
}

const CORPUS_DIR = path.join(__dirname, '..', 'fixtures', 'otp');

function loadCorpus(): Array<CorpusCase & { file: string }> {
  const cases: Array<CorpusCase & { file: string }> = [];
  for (const file of fs.readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.json')).sort()) {
    const parsed = JSON.parse(fs.readFileSync(path.join(CORPUS_DIR, file), 'utf8')) as CorpusCase[];
    for (const c of parsed) cases.push({ ...c, file });
  }
  return cases;
}

describe('one-time code corpus', () => {
  const corpus = loadCorpus();
  const tally = { truePositive: 0, falsePositive: 0, falseNegative: 0, trueNegative: 0 };

  it('holds at least 80 messages in at least eight languages, email and SMS, with distractor-only messages', () => {
    assert.ok(corpus.length >= 80, `only ${corpus.length} cases`);
    assert.ok(corpus.some((c) => c.kind === 'sms') && corpus.some((c) => c.kind === 'email'));
    assert.ok(corpus.some((c) => c.html !== undefined), 'some HTML emails');
    assert.ok(corpus.filter((c) => c.expected === null).length >= 15, 'messages without a code');
    const all = corpus.map((c) => `${c.subject ?? ''} ${c.text ?? ''} ${c.html ?? ''}`).join('\n');
    for (const [lang, re] of Object.entries({ de: /Bestätigungscode|lautet/, fr: /vérification/, es: /código de/, pt: /código de verificação/, zh: /验证码/, ja: /認証/, ko: /인증번호/ })) {
      assert.match(all, re, `a ${lang} message`);
    }
    assert.equal(new Set(corpus.map((c) => c.name)).size, corpus.length, 'case names are unique');
  });

  for (const c of loadCorpus()) {
    it(`${c.kind} · ${c.name} → ${c.expected ?? 'no code'}`, () => {
      const got = bestCode(c) ?? null;
      if (c.expected === null) {
        if (got === null) tally.trueNegative++;
        else tally.falsePositive++;
      } else if (got === c.expected) tally.truePositive++;
      else if (got === null) tally.falseNegative++;
      else { tally.falsePositive++; tally.falseNegative++; }
      assert.equal(got, c.expected, JSON.stringify(extractCodes(c)));
    });
  }

  after(() => {
    const { truePositive: tp, falsePositive: fp, falseNegative: fn, trueNegative: tn } = tally;
    const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
    const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
    console.log(
      `      OTP corpus: ${corpus.length} messages, ${tp} codes found, ${tn} correctly without code, ${fp} wrong, ${fn} missed; ` +
        `precision ${(precision * 100).toFixed(1)} %, recall ${(recall * 100).toFixed(1)} %`,
    );
  });
});

describe('extractCodes rules', () => {
  it('takes the origin-bound last line over everything else', () => {
    const text = 'Acme: use 4821 as your login PIN.\n\n@login.acme.example #739204';
    const codes = extractCodes({ text });
    assert.deepEqual(codes[0], { code: '739204', score: 100, reason: 'origin-bound' });
    assert.ok(codes.some((c) => c.code === '4821' && c.reason === 'keyword'));
  });

  it('reads origin-bound lines with an embedded origin or the Apple % suffix, and only on the last line', () => {
    assert.equal(originBoundCode('x\n@bank.example #A1b2C3 @pay.example'), 'A1b2C3');
    assert.equal(originBoundCode('x\n\n@apple.com #118452 %apple.com\n'), '118452');
    assert.equal(originBoundCode('@acme.example #123456\nmore text'), undefined);
    assert.equal(originBoundCode('email me @acme.example #123456 today'), undefined);
  });

  it('finds a code right after a keyword in eight languages', () => {
    const cases: Array<[string, string]> = [
      ['Your verification code is 583920.', '583920'],
      ['Ihr Bestätigungscode lautet 583920.', '583920'],
      ['Votre code de vérification : 583920', '583920'],
      ['Tu código de verificación es 583920', '583920'],
      ['Seu código de verificação é 583920', '583920'],
      ['您的验证码为583920，请勿泄露。', '583920'],
      ['認証コード：583920', '583920'],
      ['인증번호 [583920]를 입력해주세요.', '583920'],
    ];
    for (const [text, code] of cases) assert.equal(bestCode({ text }), code, text);
  });

  it('finds a code written before its keyword', () => {
    assert.equal(bestCode({ text: '583920 is your Acme verification code.' }), '583920');
    assert.equal(bestCode({ text: '583920 est votre code Acme.' }), '583920');
    assert.equal(bestCode({ text: '583920 は、お客様の Acme ワンタイムパスワードです。' }), '583920');
  });

  it('finds a code standing alone on its line below the keyword line', () => {
    const text = 'Hello!\n\nPlease enter the code below in the Acme app to finish signing in:\n\n  583920  \n\nIt expires in 10 minutes.\nSupport: 1 (800) 555-0100';
    assert.deepEqual(extractCodes({ text })[0], { code: '583920', score: 86, reason: 'keyword' });
  });

  it('joins grouped codes and keeps leading zeros', () => {
    assert.equal(bestCode({ text: 'Your code: 012 345' }), '012345');
    assert.equal(bestCode({ text: 'Your code: 01 23 45' }), '012345');
    assert.equal(bestCode({ text: 'Your code: 012-345' }), '012345');
    assert.equal(bestCode({ text: 'Your code: 0123 4567' }), '01234567');
    assert.equal(bestCode({ text: 'Your code is 0042' }), '0042');
  });

  it('accepts an alphanumeric code only next to a keyword', () => {
    assert.equal(bestCode({ text: 'Your verification code: K7Q9XM' }), 'K7Q9XM');
    assert.equal(bestCode({ text: 'Your code is A7K-9PX' }), 'A7K9PX');
    assert.equal(bestCode({ text: 'Thanks for visiting booth B12C at the fair.' }), undefined);
    assert.equal(bestCode({ subject: 'Welcome', text: 'Your member profile XK42PZ is ready. Log in any time to manage it.' }), undefined);
  });

  it('joins a 3+4 or 4+3 digit pair only right after a keyword', () => {
    assert.equal(bestCode({ text: 'Your Acme login code: 482-9137' }), '4829137');
    assert.equal(bestCode({ text: 'Acme PIN 9137 482' }), '9137482');
    // Written anywhere else the pair is a local phone number.
    assert.equal(bestCode({ text: 'Acme code questions? Ring 482-9137 any day.' }), undefined);
    assert.equal(bestCode({ text: 'Acme: ring 9137-482', kind: 'sms' }), undefined);
  });

  it('takes the digits of equal hyphen groups running into letters after a keyword', () => {
    assert.equal(bestCode({ text: 'Acme security code: 2046-5519QZ' }), '20465519');
    assert.equal(bestCode({ text: 'Acme security code: 204-551ab' }), '204551');
  });

  it('does not take a brand of letters and digits before the keyword for the code', () => {
    assert.equal(bestCode({ text: '604118 is your K9cloud login code.' }), '604118');
    assert.equal(bestCode({ text: 'Your 3Dpay security code is 771620' }), '771620');
  });

  it('accepts a code of letters only as the value of a keyword label', () => {
    assert.equal(bestCode({ text: 'Acme remote desk verification code: PLVXRT' }), 'PLVXRT');
    assert.equal(bestCode({ text: 'Acme 安全码： KWZMPA' }), 'KWZMPA');
    assert.equal(bestCode({ text: 'Acme Bank one-time password: HHJQWZRT Valid until: MON Mar 03' }), 'HHJQWZRT');
    assert.equal(bestCode({ text: 'ACME BRANCH PASSCODE: zobrit' }), 'zobrit');
    // Prose after the label, a word of mixed case, or letters with more than a colon between are not codes.
    assert.equal(bestCode({ text: 'Your verification code: expired' }), undefined);
    assert.equal(bestCode({ text: 'Your verification code: Pending' }), undefined);
    assert.equal(bestCode({ text: 'Your verification code is NEEDED' }), undefined);
    assert.equal(bestCode({ text: 'Acme account check\nVerification: PASSED\n2FA: ENABLED' }), undefined);
    assert.equal(bestCode({ text: 'Thanks for joining ACME today.' }), undefined);
  });

  it('reads French "code d\'authentification" with a code of letters and digits', () => {
    assert.equal(bestCode({ text: "Acme - Code d'authentification : KR7P2Q" }), 'KR7P2Q');
  });

  it('lets a Latin keyword touch Chinese or Japanese text', () => {
    assert.equal(bestCode({ text: '【Acme銀行】OTP密碼7720931請勿告知他人' }), '7720931');
    assert.deepEqual(extractCodes({ text: 'AcmeのPINは4419です' })[0], { code: '4419', score: 92, reason: 'keyword' });
  });

  it('joins a code written character by character after a keyword', () => {
    assert.equal(bestCode({ text: 'Your Acme code: 5 0 9 3 1 7' }), '509317');
    assert.equal(bestCode({ text: 'Acme signature check k 2 z P TAN q 4 w 9 x e Please confirm' }), 'q4w9xe');
    assert.equal(bestCode({ text: 'PIN 8-1-5-5' }), '8155');
    // Away from a keyword, spaced characters are just text.
    assert.equal(bestCode({ text: 'Row 5 0 9 3 1 7 is ready, see you.' }), undefined);
  });

  it('uses the subject when the body has no bound code', () => {
    assert.deepEqual(extractCodes({ subject: '583920', text: 'Enter the number above in the app. Sent 14 Mar 2025.' + ' More text.'.repeat(40) }), [
      { code: '583920', score: 40, reason: 'subject' },
    ]);
  });

  it('uses the only 4–8 digit number of a short message without keyword', () => {
    assert.deepEqual(extractCodes({ text: 'Acme: 583920. Expires in 5 minutes.' }), [{ code: '583920', score: 30, reason: 'sole-number' }]);
  });

  it('finds no code without a keyword when there are several numbers', () => {
    assert.deepEqual(extractCodes({ text: 'Acme: 583920 or 771204, your choice.' }), []);
  });

  it('uses the sole-number rule for an SMS of any length but never for an email', () => {
    const text = 'Acme: 583920. Expires in 5 minutes.';
    assert.equal(bestCode({ text, kind: 'email' }), undefined);
    assert.equal(bestCode({ text: `${text} ${'Thanks for using Acme. '.repeat(20)}`, kind: 'sms' }), '583920');
  });

  it('skips a sole number named as something else by a noun that merely contains a keyword', () => {
    for (const text of ['Your zipcode is 94107', 'My shortcode is: 73920.', 'some hotpot is 7731', '50281 is your barcode.', '61044 is the opcode']) {
      assert.deepEqual(extractCodes({ text, kind: 'sms' }), [], text);
    }
    // A noun of no known language, or a compound of a verification word, may still name a code.
    assert.equal(bestCode({ text: 'Jouw verificatiekode is: 482913', kind: 'sms' }), '482913');
    assert.equal(bestCode({ text: 'Acme: 583920 is valid for 5 minutes.', kind: 'sms' }), '583920');
  });

  it('skips a sole number right after a word that merely contains a keyword, but not after a label colon', () => {
    assert.deepEqual(extractCodes({ text: 'Promocode 55120', kind: 'sms' }), []);
    assert.deepEqual(extractCodes({ text: 'בנקודות 48213', kind: 'sms' }), []);
    assert.equal(bestCode({ text: 'Acme PassKode: 55120', kind: 'sms' }), '55120');
    assert.equal(bestCode({ text: 'AuthCode 771904', kind: 'sms' }), '771904');
  });

  it('takes a short message that is nothing but one word of letters and digits in one case', () => {
    assert.deepEqual(extractCodes({ text: ' 7K4QW2\n', kind: 'sms' }), [{ code: '7K4QW2', score: 30, reason: 'sole-number' }]);
    assert.equal(bestCode({ text: 'q8rt2m' }), 'q8rt2m');
    for (const text of ['Hello2you', 'WELCOME', 'Acme 7K4QW2', 'R2D2 says hi']) assert.equal(bestCode({ text }), undefined, text);
    assert.equal(bestCode({ text: '7K4QW2', kind: 'email' }), undefined);
  });

  it('ignores purchase and gift-card codes', () => {
    assert.equal(bestCode({ text: 'Your Purchase Code is 7TQ2W' }), undefined);
    assert.equal(bestCode({ text: 'Gift card code: QWRTZPLK' }), undefined);
  });

  it('does not take a fragment of a longer hyphenated number for a code', () => {
    assert.deepEqual(extractCodes({ text: '552-918-', kind: 'sms' }), []);
    assert.deepEqual(extractCodes({ text: 'Ring -552-918 back', kind: 'sms' }), []);
  });

  it('reads Persian, Arabic and Hebrew password and code keywords', () => {
    const persian = 'بانک نمونه\nخرید از فروشگاه\nمبلغ 250,000 ریال\nرمز پویا 82746193\nاعتبار تا 14:05';
    assert.deepEqual(extractCodes({ text: persian, kind: 'sms' })[0], { code: '82746193', score: 92, reason: 'keyword' });
    assert.equal(bestCode({ text: 'کارت: 4410\nرمزدوم: 3308172\nاعتبار: 14:05', kind: 'sms' }), '3308172');
    assert.equal(extractCodes({ text: 'הקוד שלך: 604219. מוקד 3301', kind: 'sms' })[0].reason, 'keyword');
    assert.equal(bestCode({ text: 'رمز التحقق 915533 صالح لمدة 5 دقائق', kind: 'sms' }), '915533');
  });

  it('accepts a 9–10 digit code only right after a keyword', () => {
    assert.equal(bestCode({ text: 'Acme Bank one-time password: 7719026614' }), '7719026614');
    assert.equal(bestCode({ text: 'رمز 604417725\nاعتبار 2 دقیقه', kind: 'sms' }), '604417725');
    assert.equal(bestCode({ text: 'Your code was sent to 4155550123' }), undefined);
    assert.equal(bestCode({ text: 'Acme: 4155550123', kind: 'sms' }), undefined);
    // A 10-digit account number is not a number the sole-number rule weighs.
    assert.equal(bestCode({ text: 'Account 5839201746: transfer 662190', kind: 'sms' }), '662190');
  });

  it('rejects the visible head of a masked card, digits glued to a word, and labelled Persian numbers', () => {
    assert.equal(bestCode({ text: 'Card 603799*4411 charged 52,000. Code 771902', kind: 'sms' }), '771902');
    assert.deepEqual(extractCodes({ text: 'بانک نمونه شعبه5521', kind: 'sms' }), []);
    assert.deepEqual(extractCodes({ text: 'מספר ב4821 נשמר', kind: 'sms' }), []);
    assert.deepEqual(extractCodes({ text: 'بانک نمونه\nبرداشت از حساب 1200\nمستند : 48213', kind: 'sms' }), []);
  });

  it('does not use the sole-number rule for a long message of unknown kind', () => {
    assert.deepEqual(extractCodes({ text: `Acme news: ${'We have news for you. '.repeat(30)} 583920 people read it.` }), []);
  });

  it('rejects years, dates, times, phone numbers and money', () => {
    for (const text of [
      'Your code expires on 2025-03-14.',
      'Code sent on 14/03/2025 at 10:42.',
      'Your code: call +1 415 555 0199 for help',
      'Verification code charge: $1250.00',
      'Code fee 4821 EUR',
      'Verification fee: €4821',
      'Code valid since 2024.',
      'Security code © 2025 Acme',
    ]) {
      assert.deepEqual(extractCodes({ text }).filter((c) => c.reason === 'keyword'), [], text);
    }
  });

  it('still accepts a year-like code bound to its keyword', () => {
    assert.equal(bestCode({ text: 'Your PIN is 1987' }), '1987');
  });

  it('rejects order, invoice, ticket and card-ending numbers near a keyword', () => {
    for (const text of [
      'Verification of order 48291733 complete.',
      'Your code for invoice 583920 is ready soon.',
      'Security code needed. Ticket #58392',
      'Security code requested for card ending in 4821.',
      'Código para tu tarjeta •••• 4821',
      '验证码已发送至尾号4821的手机',
    ]) {
      assert.ok(!extractCodes({ text }).some((c) => ['48291733', '583920', '58392', '4821'].includes(c.code)), text);
    }
  });

  it('keeps a code followed by a bracketed time but rejects bracketed phone numbers', () => {
    assert.equal(bestCode({ text: 'Your code is 482913 (valid until 10:45).' }), '482913');
    assert.equal(bestCode({ text: 'Your code is 482913 - valid for 10 minutes.' }), '482913');
    assert.equal(bestCode({ text: 'Code questions? Call 1 (800) 555-0100 or (617) 555-0123.' }), undefined);
  });

  it('lets a label name only the number right after it', () => {
    assert.equal(bestCode({ text: 'Your verification code for order 12345 is 482913.' }), '482913');
    assert.equal(bestCode({ text: 'Tu código de WhatsApp es 482-913.' }), '482913');
    assert.equal(bestCode({ text: 'Dear Member, 4829 is your one time password.' }), '4829');
    assert.equal(bestCode({ text: 'Verification for customer number 104829 is pending.' }), undefined);
  });

  it('does not take the digit tail of an identifier for a code, but keeps G-123456', () => {
    assert.equal(bestCode({ subject: 'Your sign-in code e2e-1171283', text: 'Hello,\n\nYour verification code is 165819.\n' }), '165819');
    assert.equal(bestCode({ text: 'Your code for build2_583920 is 771204.' }), '771204');
    assert.equal(bestCode({ text: 'Verification code: run_583920' }), undefined);
    assert.equal(bestCode({ kind: 'sms', text: 'G-284619 is your Google verification code.' }), '284619');
    assert.equal(bestCode({ text: 'Your code is 482913-A.' }), '482913');
  });

  it('rejects postcodes and street numbers', () => {
    for (const text of [
      'Verification team, 1600 Amphitheatre Parkway, Mountain View, CA 94043',
      'Code support: Hauptstraße 5, 80331 München',
    ]) {
      assert.deepEqual(extractCodes({ text }), [], text);
    }
  });

  it('ignores digits in URLs, e-mail addresses, CSS colours and HTML attributes', () => {
    assert.deepEqual(extractCodes({ text: 'Verify: https://acme.example/v?code=583920 or write to code583920@acme.example' }), []);
    assert.deepEqual(extractCodes({ text: 'Code colour #583920' }), []);
    const html = '<div style="color:#583920" data-code="771204"><a href="https://x.example/c/440918">Verify your code</a></div><img src="https://t.example/o/583920.gif" width="1" height="1">';
    assert.deepEqual(extractCodes({ html }), []);
  });

  it('reads only the visible text of HTML', () => {
    const html = '<html><head><title>Code 111111</title><style>.c{color:#222222} /* 333333 */</style></head><body><!-- code 444444 --><p>Your code is <b>583920</b></p><script>var code = 555555</script></body></html>';
    assert.deepEqual(extractCodes({ html }).map((c) => c.code), ['583920']);
  });

  it('ignores promo and postal codes', () => {
    assert.equal(bestCode({ text: 'Use promo code SAVE4821 for 20% off!' }), undefined);
    assert.equal(bestCode({ text: 'Gib beim Checkout den Gutscheincode X7K2M9 ein.' }), undefined);
    assert.equal(bestCode({ text: 'Código postal 28020, Madrid' }), undefined);
  });

  it('ranks a bound code above a number merely near a keyword', () => {
    const codes = extractCodes({ text: 'Use the code we sent earlier. Reference 5839 is not it.\nYour new verification code is 771204.' });
    assert.equal(codes[0].code, '771204');
  });

  it('returns nothing for empty input', () => {
    assert.deepEqual(extractCodes({}), []);
    assert.deepEqual(extractCodes({ subject: '', text: '', html: '' }), []);
  });
});

describe('extractCodes properties', () => {
  it('extracts a random 6-digit code after "Your verification code is" exactly, leading zeros kept', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{6}$/), fc.constantFrom('', '.', ' ', '\n', '. It expires in 10 minutes.'), (code, tail) => {
        assert.equal(bestCode({ text: `Your verification code is ${code}${tail}` }), code);
      }),
      { numRuns: 500 },
    );
  });

  it('extracts a random 4–8 digit code in any corpus language template', () => {
    const templates = [
      (c: string) => `Ihr Sicherheitscode lautet: ${c}`,
      (c: string) => `【Acme】您的验证码是${c}，5分钟内有效。`,
      (c: string) => `[Acme] 인증번호 [${c}]를 입력해주세요.`,
      (c: string) => `認証コード：${c}\nこのコードは10分間有効です。`,
      (c: string) => `${c} is your Acme code. Don't share it.`,
    ];
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{4,8}$/), fc.integer({ min: 0, max: templates.length - 1 }), (code, t) => {
        assert.equal(bestCode({ text: templates[t](code) }), code);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws and always returns a well-formed ranking on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (subject, text, html) => {
        const codes = extractCodes({ subject, text, html });
        for (let i = 1; i < codes.length; i++) assert.ok(codes[i - 1].score >= codes[i].score);
        assert.equal(new Set(codes.map((c) => c.code)).size, codes.length);
      }),
      { numRuns: 300 },
    );
  });

  it('returns on large hostile input (no catastrophic backtracking)', function () {
    // Linear work finishes in well under a second per input; a quadratic path would take minutes.
    this.timeout(120_000);
    const n = 50_000;
    for (const text of [
      'code 1234 '.repeat(n / 10),
      '1 '.repeat(n),
      '1-'.repeat(n),
      'a'.repeat(n),
      ('https://x.example/' + '1'.repeat(50) + ' ').repeat(n / 70),
      'Order '.repeat(n / 6) + ' 123456',
      '验证码'.repeat(n / 3),
      '@'.repeat(n) + '.com',
      '\n'.repeat(n) + '@a.b #1234',
    ]) {
      assert.ok(Array.isArray(extractCodes({ subject: text.slice(0, 1000), text, html: text })));
    }
  });
});
