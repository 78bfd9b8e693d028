import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ApiError } from '../../src/api/errors';
import { SseParser, type SseEvent } from '../../src/api/sse';
import { parseListing, parseMessage, parseStreamEvent } from '../../src/api/validate';
import { filenameFromDisposition } from '../../src/api/client';

const inboxName = fc.stringMatching(/^[a-z0-9][a-z0-9._+-]{0,20}$/);
const summaryArb = fc.record({
  subject: fc.string({ maxLength: 40 }),
  domain: fc.constantFrom('inbox.test', 'qa.example.com'),
  from: fc.string({ maxLength: 40 }),
  id: fc.tuple(inboxName, fc.integer({ min: 0, max: 2_000_000_000 }), fc.nat(99999)).map(([i, s, c]) => `${i}-${s}-${c}`),
  to: inboxName,
  time: fc.integer({ min: 0, max: 4_000_000_000_000 }),
  seconds_ago: fc.nat(),
});
const listingArb = fc.record({ domain: fc.constantFrom('private', 'inbox.test'), to: inboxName, msgs: fc.array(summaryArb, { maxLength: 8 }) });

/** Values of a JSON type other than the one a field must have. */
const wrongFor = (kind: 'string' | 'integer'): fc.Arbitrary<unknown> =>
  kind === 'string'
    ? fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
    : fc.oneof(fc.string(), fc.double({ noInteger: true, noNaN: true }), fc.boolean(), fc.constant(null), fc.constant({}));

describe('response validators', () => {
  it('returns any well-formed listing unchanged (property)', () => {
    fc.assert(
      fc.property(listingArb, (listing) => {
        const plain = JSON.parse(JSON.stringify(listing)) as unknown;
        assert.deepEqual(parseListing(plain), plain);
      }),
    );
  });

  it('names the exact field when one summary field has the wrong type (property)', () => {
    const fields: Array<['from' | 'id' | 'to' | 'time' | 'seconds_ago', 'string' | 'integer']> = [
      ['from', 'string'],
      ['id', 'string'],
      ['to', 'string'],
      ['time', 'integer'],
      ['seconds_ago', 'integer'],
    ];
    const damage = fc.constantFrom(...fields).chain(([field, kind]) => fc.tuple(fc.constant(field), fc.constant(kind), wrongFor(kind)));
    fc.assert(
      fc.property(listingArb.filter((l) => l.msgs.length > 0), fc.nat(), damage, (listing, pick, [field, kind, bad]) => {
        const index = pick % listing.msgs.length;
        const damaged = JSON.parse(JSON.stringify(listing)) as { msgs: Array<Record<string, unknown>> };
        damaged.msgs[index][field] = bad;
        assert.throws(
          () => parseListing(damaged),
          (e: unknown) => ApiError.is(e, 'protocol') && e.field === `msgs[${index}].${field}` && e.message.includes(`msgs[${index}].${field}: expected ${kind}`),
        );
      }),
    );
  });

  it('reads the optional code of a summary and rejects one that is not a code', () => {
    const m = { subject: 's', domain: 'd', from: 'f', id: 'a-1-1', to: 'a', time: 1, seconds_ago: 0 };
    assert.equal(parseListing({ domain: 'd', to: 'a', msgs: [{ ...m, code: '482913' }] }).msgs[0].code, '482913');
    assert.equal('code' in parseListing({ domain: 'd', to: 'a', msgs: [m] }).msgs[0], false);
    for (const code of [42, '', 'has space', 'x'.repeat(33)]) {
      assert.throws(() => parseListing({ domain: 'd', to: 'a', msgs: [{ ...m, code }] }), (e: unknown) => ApiError.is(e, 'protocol') && /msgs\[0\]\.code|msgs\.0\.code/.test((e as Error).message), JSON.stringify(code));
    }
  });

  it('rejects a listing that is not an object, or whose msgs is not an array', () => {
    for (const v of [null, 42, 'x', [], { domain: 'd', to: 't', msgs: {} }]) {
      assert.throws(() => parseListing(v), (e: unknown) => ApiError.is(e, 'protocol'), JSON.stringify(v));
    }
  });

  it('decides email or SMS by the inbox first, then by the shape', () => {
    const email = { fromfull: 'a@b.test', headers: { subject: 's' }, subject: 's', parts: [{ headers: {}, body: 'x' }], from: 'A', to: 'joe', id: 'joe-1-1', time: 1, seconds_ago: 0 };
    assert.equal(parseMessage(email, { inbox: 'joe', id: 'joe-1-1' }).kind, 'email');
    const sms = { fromfull: '12025550143', subject: 's', parts: [{ body: 'code 1234' }], to: '14155550100', time: 1, seconds_ago: 0 };
    assert.equal(parseMessage(sms, { inbox: '14155550100', id: '14155550100-1-1' }).kind, 'sms');
    assert.equal(parseMessage(sms, { inbox: '*', id: 'x-1-1' }).kind, 'sms');
    // An email-shaped answer without `from` in an email inbox is a protocol error naming `from`.
    const { from: _from, ...noFrom } = email;
    assert.throws(
      () => parseMessage(noFrom, { inbox: 'joe', id: 'joe-1-1' }),
      (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'from',
    );
  });

  it('requires msg on message events and ids on delete events', () => {
    assert.throws(
      () => parseStreamEvent({ type: 'message', domain: 'd', inbox: 'i' }),
      (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'msg',
    );
    assert.throws(
      () => parseStreamEvent({ type: 'delete', domain: 'd', inbox: 'i', ids: [1] }),
      (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'ids[0]',
    );
    assert.throws(
      () => parseStreamEvent({ type: 'rename', domain: 'd', inbox: 'i' }),
      (e: unknown) => ApiError.is(e, 'protocol') && e.field === 'type',
    );
  });
});

describe('SSE parser chunking', () => {
  it('yields the same events however the bytes are split (property)', () => {
    const eventArb = fc.record({
      event: fc.constantFrom('message', 'delete', 'other'),
      data: fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, ' ')),
    });
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 6 }), fc.array(fc.nat(40), { maxLength: 20 }), fc.constantFrom('\n', '\r\n', '\r'), (events, cuts, eol) => {
        const text = events.map((e) => `: ping${eol}event: ${e.event}${eol}data: ${e.data}${eol}${eol}`).join('');
        const bytes = Buffer.from(text, 'utf8');
        const p = new SseParser();
        const got: SseEvent[] = [];
        let at = 0;
        for (const c of cuts) {
          const next = Math.min(bytes.length, at + c);
          got.push(...p.push(bytes.subarray(at, next)));
          at = next;
        }
        got.push(...p.push(bytes.subarray(at)));
        assert.deepEqual(got, events.map((e) => ({ ...e })));
      }),
    );
  });
});

describe('attachment file names', () => {
  it('reads filename* first, then a quoted or bare filename, and keeps only a base name', () => {
    assert.equal(filenameFromDisposition(`attachment; filename="a.pdf"; filename*=UTF-8''invoice%20%C3%BC.pdf`), 'invoice ü.pdf');
    assert.equal(filenameFromDisposition('attachment; filename="say \\"hi\\".txt"'), 'say "hi".txt');
    assert.equal(filenameFromDisposition('inline; filename=logo.png'), 'logo.png');
    assert.equal(filenameFromDisposition('attachment; filename="../../etc/passwd"'), 'passwd');
    assert.equal(filenameFromDisposition('attachment; filename=".."'), undefined);
    assert.equal(filenameFromDisposition('attachment'), undefined);
    assert.equal(filenameFromDisposition(undefined), undefined);
  });
});
