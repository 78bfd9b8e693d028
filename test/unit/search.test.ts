// The search language (src/core/search.ts): parsing, its errors, and the matching rules.
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { describeTerm, foldCase, isMetaTerm, matchesAll, parseSearchQuery, parseSearchTime, SearchQueryError, type SearchableMeta, type SearchTerm, searchText } from '../../src/core/search';

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

const meta = (over: Partial<SearchableMeta> = {}): SearchableMeta => ({
  domain: 'inbox.test',
  inbox: 'joe',
  time: NOW - 60_000,
  from: 'Acme Support <support@acme.test>',
  subject: 'Welcome, Joe',
  ...over,
});

function parseError(q: string): string {
  try {
    parseSearchQuery(q, NOW);
  } catch (e) {
    assert.ok(e instanceof SearchQueryError, String(e));
    return e.message;
  }
  assert.fail(`${JSON.stringify(q)} parsed`);
}

describe('search query: parsing', () => {
  it('reads words, phrases, negation and every operator', () => {
    const terms = parseSearchQuery('Hello "Quick   Brown" -spam from:Bob to:ann subject:"Your Order" domain:Example.COM inbox:JOE code:A1b2 has:code has:attachment -has:link is:SMS is:email after:2026-11-01 before:1h', NOW);
    assert.deepEqual(terms, [
      { field: 'text', value: 'hello', negated: false },
      { field: 'text', value: 'quick brown', negated: false },
      { field: 'text', value: 'spam', negated: true },
      { field: 'from', value: 'bob', negated: false },
      { field: 'to', value: 'ann', negated: false },
      { field: 'subject', value: 'your order', negated: false },
      { field: 'domain', value: 'example.com', negated: false },
      { field: 'inbox', value: 'joe', negated: false },
      { field: 'code', value: 'A1b2', negated: false },
      { field: 'has', value: 'code', negated: false },
      { field: 'has', value: 'attachment', negated: false },
      { field: 'has', value: 'link', negated: true },
      { field: 'is', value: 'sms', negated: false },
      { field: 'is', value: 'email', negated: false },
      { field: 'after', value: Date.UTC(2026, 10, 1), negated: false },
      { field: 'before', value: NOW - 3_600_000, negated: false },
    ]);
  });

  it('reads UTC dates and times, and durations back from now', () => {
    assert.equal(parseSearchTime('2026-11-26', NOW), Date.UTC(2026, 10, 26));
    assert.equal(parseSearchTime('2026-11-26T14:30', NOW), Date.UTC(2026, 10, 26, 14, 30));
    assert.equal(parseSearchTime('2026-11-26T14:30:05Z', NOW), Date.UTC(2026, 10, 26, 14, 30, 5));
    assert.equal(parseSearchTime('2026-11-26T14:30:05.25Z', NOW), Date.UTC(2026, 10, 26, 14, 30, 5, 250));
    assert.equal(parseSearchTime('30m', NOW), NOW - 30 * 60_000);
    assert.equal(parseSearchTime('7d', NOW), NOW - 7 * 86_400_000);
    for (const bad of ['2026-02-30', '2026-13-01', '2026-11-26T24:00', '2026-11-26T10:60', '90', 'yesterday', '2026/11/26', '1y']) assert.equal(parseSearchTime(bad, NOW), undefined, bad);
  });

  it('names what is wrong with a malformed query', () => {
    assert.match(parseError(''), /empty/);
    assert.match(parseError('  \t '), /empty/);
    assert.match(parseError('a "b c'), /quote at character 3 is never closed/);
    assert.match(parseError('"" x'), /hold no text/);
    assert.match(parseError('"a"b'), /closing quote must be followed by a space/);
    assert.match(parseError('ab"c'), /quote inside a word/);
    assert.match(parseError('size:10'), /unknown operator "size:"; the operators are from: to: subject: domain: inbox: code: has: is: after: before:/);
    assert.match(parseError('https://x.test'), /unknown operator "https:".*quotes/);
    assert.match(parseError('from: bob'), /from: needs a value, as in from:alice@example.com/);
    assert.match(parseError('has:pony'), /has:pony is not known; use has:code, has:attachment, has:link/);
    assert.match(parseError('is:fax'), /is:fax is not known; use is:sms, is:email/);
    assert.match(parseError('after:monday'), /after:monday is not a time; give a UTC date/);
    assert.match(parseError('a - b'), /"-" at character 3 negates nothing/);
    assert.match(parseError('x'.repeat(1001)), /longer than 1000 characters/);
    assert.match(parseError(Array.from({ length: 33 }, () => 'w').join(' ')), /33 terms; at most 32/);
  });

  it('keeps words with a colon after digits (times) and quoted colons as text', () => {
    assert.deepEqual(parseSearchQuery('12:30 "see: here"', NOW), [
      { field: 'text', value: '12:30', negated: false },
      { field: 'text', value: 'see: here', negated: false },
    ]);
  });

  it('folds case for A-Z only, as the PostgreSQL store does under the "C" collation', () => {
    assert.equal(foldCase('ÜBER CAFÉ ABC'), 'Über cafÉ abc');
    assert.equal(searchText('  A\r\n\tB  '), 'a b');
  });

  // Property: any query either parses or throws SearchQueryError (never anything else), and a
  // parse gives at most MAX terms, each text value already folded and collapsed.
  it('never throws anything but SearchQueryError, and its text values are normalized (property)', () => {
    const alphabet = fc.constantFrom(...'ab:-" \tfromtoisha1Z'.split(''), 'from:', 'has:', 'after:', 'is:', '"', '-');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 40 }).map((a) => a.join('')), (q) => {
        let terms: SearchTerm[];
        try {
          terms = parseSearchQuery(q, NOW);
        } catch (e) {
          return e instanceof SearchQueryError && e.message.length > 0;
        }
        assert.ok(terms.length >= 1 && terms.length <= 32);
        for (const t of terms) if (typeof t.value === 'string' && (t.field === 'text' || t.field === 'from' || t.field === 'to' || t.field === 'subject')) assert.equal(t.value, searchText(t.value));
        return true;
      }),
      { numRuns: 2000 },
    );
  });

  // Property: a word in the subject is always found, and its negation always excludes the message.
  it('a word of the subject is found by itself and excluded by its negation (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{1,12}$/), fc.stringMatching(/^[ A-Za-z0-9]{0,20}$/), (word, rest) => {
        const m = meta({ subject: `${rest} ${word} ${rest}` });
        assert.equal(matchesAll(parseSearchQuery(word, NOW), m), true);
        assert.equal(matchesAll(parseSearchQuery(`subject:${word}`, NOW), m), true);
        assert.equal(matchesAll(parseSearchQuery(`-${word}`, NOW), m), false);
      }),
    );
  });
});

describe('search query: matching', () => {
  const q = (s: string): SearchTerm[] => parseSearchQuery(s, NOW);

  it('decides field terms from the index and leaves body terms undecided until the body is read', () => {
    assert.equal(matchesAll(q('from:acme inbox:joe'), meta()), true);
    assert.equal(matchesAll(q('from:bob'), meta()), false);
    assert.equal(matchesAll(q('welcome'), meta()), true, 'a word of the subject');
    assert.equal(matchesAll(q('invoice'), meta()), undefined, 'a word only the body can hold');
    assert.equal(matchesAll(q('-invoice'), meta()), undefined);
    assert.equal(matchesAll(q('-welcome'), meta()), false);
    assert.equal(matchesAll(q('has:attachment'), meta()), undefined);
    const body = { text: 'your invoice is attached', attachment: true, link: false };
    assert.equal(matchesAll(q('invoice has:attachment -has:link'), meta(), body), true);
    assert.equal(matchesAll(q('-invoice'), meta(), body), false);
    assert.equal(matchesAll(q('has:link'), meta(), body), false);
  });

  it('reads the recipient as inbox@domain, phone inboxes as SMS, and times as after >= and before <', () => {
    assert.equal(matchesAll(q('to:joe@inbox.test'), meta()), true);
    assert.equal(matchesAll(q('is:sms'), meta({ inbox: '15551234567' })), true);
    assert.equal(matchesAll(q('is:email'), meta({ inbox: '15551234567' })), false);
    const at = Date.UTC(2026, 10, 26);
    assert.equal(matchesAll(q('after:2026-11-26'), meta({ time: at })), true);
    assert.equal(matchesAll(q('before:2026-11-26'), meta({ time: at })), false);
    assert.equal(matchesAll(q('code:123456'), meta({ code: '123456' })), true);
    assert.equal(matchesAll(q('-code:123456'), meta()), true, 'a message without a code is not that code');
  });

  it('says which terms the index decides', () => {
    assert.deepEqual(q('a from:b has:code has:link has:attachment is:sms').map(isMetaTerm), [false, true, true, false, false, true]);
    assert.equal(q('-subject:"a b" after:2026-01-01').map(describeTerm).join(' '), '-subject:"a b" after:2026-01-01T00:00:00.000Z');
  });
});
