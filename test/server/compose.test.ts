import assert from 'node:assert/strict';
import fc from 'fast-check';
import PostalMime from 'postal-mime';
import MailComposer from 'nodemailer/lib/mail-composer';
import { ComposeError, composeMessage, dummyFrom, leafMessage } from '../../src/server/http/compose';
import { NO_SUBJECT } from '../../src/core/title';

const aMessage = (over: Partial<Parameters<typeof composeMessage>[0]> = {}) =>
  composeMessage({ from: 'Acme <no-reply@acme.test>', subject: 'Your code', text: 'Code: 123456', inbox: 'joe', domain: 'inbox.test', source: 'inject', ...over });

function headerBlock(raw: Buffer): string {
  const s = raw.toString('utf8');
  return s.slice(0, s.indexOf('\r\n\r\n'));
}

function bodyOf(raw: Buffer): string {
  const s = raw.toString('utf8');
  return s.slice(s.indexOf('\r\n\r\n') + 4);
}

describe('compose', () => {
  it('writes From, To, Subject, Date, Message-ID and a text/plain utf-8 quoted-printable body', async () => {
    const raw = await aMessage({ date: new Date(Date.UTC(2026, 10, 22, 1, 2, 3)) });
    // Each header exactly once, each a whole line (their order is not significant, RFC 5322 3.6).
    const lines = headerBlock(raw).split('\r\n');
    const expected = [
      /^From: Acme <no-reply@acme\.test>$/,
      /^To: joe@inbox\.test$/,
      /^Subject: Your code$/,
      /^Date: Sun, 22 Nov 2026 01:02:03 \+0000$/,
      /^Message-ID: <[0-9a-f-]{36}@inbox\.test>$/,
      /^MIME-Version: 1\.0$/,
      /^Content-Type: text\/plain; charset=utf-8$/,
      /^Content-Transfer-Encoding: quoted-printable$/,
    ];
    assert.equal(lines.length, expected.length, lines.join('\n'));
    for (const re of expected) assert.equal(lines.filter((l) => re.test(l)).length, 1, `${String(re)} in\n${lines.join('\n')}`);
    const parsed = await PostalMime.parse(raw);
    assert.equal(parsed.subject, 'Your code');
    assert.deepEqual(parsed.from, { address: 'no-reply@acme.test', name: 'Acme' });
    assert.equal(parsed.text?.trimEnd(), 'Code: 123456');
  });

  it('uses only CRLF line endings, whatever the text uses', async () => {
    const s = (await aMessage({ text: 'a\nb\rc\r\nd' })).toString('utf8');
    assert.equal(/\r(?!\n)|(?<!\r)\n/.test(s), false);
    assert.match(s, /\r\n\r\na\r\nb\r\nc\r\nd\r\n$/);
  });

  it('inserts a dummy sender and subject when the payload has none (docs/api.md §4.5 rule 4)', async () => {
    const parsed = await PostalMime.parse(await composeMessage({ inbox: 'joe', domain: 'inbox.test', source: 'webhook' }));
    assert.equal(parsed.from?.address, dummyFrom('webhook', 'inbox.test'));
    assert.equal(parsed.from?.address, 'webhook@inbox.test');
    assert.equal(parsed.subject, NO_SUBJECT);
    const injected = await PostalMime.parse(await composeMessage({ from: '  ', subject: '', inbox: 'joe', domain: 'x.test', source: 'inject' }));
    assert.equal(injected.from?.address, 'inject@x.test');
    assert.equal(injected.subject, '(no subject)');
  });

  it('encodes a non-ASCII or long subject as RFC 2047 words on lines of at most 78 characters', async () => {
    const subject = 'Zoë’s verification code 🎉 ' + 'é'.repeat(120);
    const raw = await aMessage({ subject });
    for (const line of headerBlock(raw).split('\r\n')) assert.ok(line.length <= 78, line);
    assert.match(headerBlock(raw), /Subject: =\?UTF-8\?[BQ]\?/);
    assert.equal((await PostalMime.parse(raw)).subject, subject);
  });

  it('folds a long ASCII subject at spaces instead of encoding it, and encodes a word too long for a line', async () => {
    const subject = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const raw = await aMessage({ subject });
    assert.doesNotMatch(headerBlock(raw), /=\?UTF-8\?/);
    for (const line of headerBlock(raw).split('\r\n')) assert.ok(line.length <= 78, line);
    assert.equal((await PostalMime.parse(raw)).subject, subject);
    const unbreakable = 'x'.repeat(1200);
    const raw2 = await aMessage({ subject: unbreakable });
    assert.match(headerBlock(raw2), /Subject: =\?UTF-8\?[BQ]\?/);
    assert.equal((await PostalMime.parse(raw2)).subject, unbreakable);
  });

  it('cannot be made to add headers through the subject', async () => {
    const raw = await aMessage({ subject: 'hi\r\nBcc: victim@evil.test' });
    const parsed = await PostalMime.parse(raw);
    assert.equal(parsed.headers.some((h) => h.key === 'bcc'), false);
    assert.equal(parsed.subject, 'hi\r\nBcc: victim@evil.test');
  });

  it('refuses a sender with line breaks or control characters with a typed error', async () => {
    await assert.rejects(
      aMessage({ from: 'a@b.test\r\nBcc: victim@evil.test' }),
      (err: unknown) => ComposeError.is(err) && err.code === 'bad_from' && /line breaks/.test(err.message),
    );
  });

  it('writes senders as address, name and address, or free text such as a phone number', async () => {
    const cases: Array<[string, { name: string; address: string }]> = [
      ['a@b.test', { name: '', address: 'a@b.test' }],
      ['"Doe, John" <j@x.test>', { name: 'Doe, John', address: 'j@x.test' }],
      ['Zoë Ünal <zoe@x.test>', { name: 'Zoë Ünal', address: 'zoe@x.test' }],
      ['+14155550100', { name: '+14155550100', address: '' }],
      ['Twilio (SMS)', { name: 'Twilio (SMS)', address: '' }],
    ];
    for (const [from, expected] of cases) {
      const parsed = await PostalMime.parse(await aMessage({ from }));
      assert.deepEqual(parsed.from, expected, from);
    }
  });

  it('formats dates as RFC 5322 date-time in UTC', async () => {
    const raw = await aMessage({ date: new Date(Date.UTC(2026, 0, 5, 9, 8, 7)) });
    assert.match(headerBlock(raw), /(^|\r\n)Date: Mon, 0?5 Jan 2026 09:08:07 \+0000(\r\n|$)/);
    assert.equal((await PostalMime.parse(raw)).date, '2026-01-05T09:08:07.000Z');
  });

  it('quoted-printable keeps lines within 76 characters and escapes =, trailing blanks and 8-bit bytes', async () => {
    const text = 'a=b \n' + 'x'.repeat(200) + '\nü\t';
    const raw = await aMessage({ text });
    const qp = bodyOf(raw);
    for (const line of qp.split('\r\n')) assert.ok(line.length <= 76, line);
    assert.match(qp, /^a=3Db=20\r\n/);
    assert.match(qp, /=C3=BC=09(\r\n)?$/);
    assert.equal((await PostalMime.parse(raw)).text?.replace(/\n$/, ''), text);
  });

  it('writes the very bytes nodemailer\'s own build() writes, without its streams (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 400 }),
        fc.string({ unit: 'grapheme', maxLength: 80 }),
        fc.constantFrom('Acme <no-reply@acme.test>', 'Jürgen "J" Ä <j@b.test>', 'x@y.test'),
        fc.dictionary(fc.constantFrom('X-Twilio-Sid', 'X-From-Number'), fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((v) => v.replace(/[\r\n]/g, ' '))),
        async (text, subject, from, extra) => {
          const make = () =>
            new MailComposer({
              from,
              to: 'joe@inbox.test',
              subject,
              date: new Date(1_700_000_000_000),
              textEncoding: 'quoted-printable',
              messageId: '<fixed@inbox.test>',
              headers: { ...extra, 'Content-Transfer-Encoding': 'quoted-printable' },
              text: text.replace(/\r\n|\r|\n/g, '\r\n'),
            }).compile();
          assert.deepEqual(leafMessage(make()).toString('latin1'), (await make().build()).toString('latin1'));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('any text reads back unchanged after composing and parsing (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 120 }), async (text, subject) => {
        const clean = text.replace(/[\u0000\r]/g, '');
        const raw = await composeMessage({ text: clean, subject, inbox: 'joe', domain: 'inbox.test', source: 'inject' });
        const parsed = await PostalMime.parse(raw);
        assert.equal((parsed.text ?? '').replace(/\n$/, ''), clean.replace(/\n$/, ''));
        // Blanks at the ends of an unstructured header are not significant (RFC 5322 3.2.2).
        assert.equal(parsed.subject, subject.trim() === '' ? NO_SUBJECT : subject.trim());
      }),
      { numRuns: 100 },
    );
  });
});
