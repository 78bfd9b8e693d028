// GET /api/v2/search on a real server: one query table, run on the Maildir store by `mocha`
// and on the PostgreSQL store by `npm run test:node:postgres` (TEST_INBOX_TEST_STORE=postgres),
// so both stores answer the same results. Mail arrives over real SMTP (nodemailer), the inject
// route and the store, as in use.
import { strict as assert } from 'node:assert';
import http from 'node:http';
import MailComposer from 'nodemailer/lib/mail-composer';
import nodemailer from 'nodemailer';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import { searchCounters } from '../../src/server/http/api/search';
import { createSmtpServer, type InboxSmtpServer } from '../../src/server/smtp/smtp';
import { API_TOKEN, DOMAIN, type Harness, startApi, STORE_KIND } from './api-harness';
import { multipartEmail } from '../support/messages';

const OTHER = 'other.test';
const PHONE = '15551234567';

/** The messages of the table, by name, in the order they arrive (so newest first is the reverse). */
type Name = 'welcome' | 'order' | 'reset' | 'sms' | 'cafe' | 'fox';
const ARRIVAL: Name[] = ['welcome', 'order', 'reset', 'sms', 'cafe', 'fox'];

/** Each query and the messages it must find. */
const TABLE: Array<[string, Name[]]> = [
  // free words: sender, recipient, subject, text; every word; case; phrases; exclusion
  ['acme', ['sms', 'welcome']],
  ['ACME', ['sms', 'welcome']],
  ['joe', ['reset', 'welcome']],
  ['482913', ['welcome']],
  ['tracking zx-99', ['order']],
  ['tracking nothing-here', []],
  ['"quick brown fox"', ['fox']],
  ['"brown quick"', []],
  ['shop -reset', ['order']],
  ['-acme -shop', ['fox', 'cafe']],
  ['café', ['cafe']],
  ['Über', ['cafe']],
  ['über', []],
  // operators
  ['from:acme', ['welcome']],
  ['from:"acme support"', ['welcome']],
  ['from:no-reply@shop.test', ['reset']],
  ['-from:shop', ['fox', 'cafe', 'sms', 'welcome']],
  ['to:ann', ['order']],
  [`to:@${OTHER}`, ['reset']],
  ['subject:welcome', ['welcome']],
  ['subject:"password reset"', ['reset']],
  [`domain:${OTHER}`, ['reset']],
  [`-domain:${DOMAIN}`, ['reset']],
  ['inbox:joe', ['reset', 'welcome']],
  [`inbox:joe domain:${DOMAIN}`, ['welcome']],
  ['inbox:JOE', ['reset', 'welcome']],
  ['code:482913', ['welcome']],
  ['code:771204', ['sms']],
  ['code:000000', []],
  ['-code:482913 has:code', ['sms']],
  ['has:code', ['sms', 'welcome']],
  ['-has:code', ['fox', 'cafe', 'reset', 'order']],
  ['has:attachment', ['welcome']],
  ['-has:attachment inbox:joe', ['reset']],
  ['has:link', ['reset', 'order', 'welcome']],
  ['-has:link', ['fox', 'cafe', 'sms']],
  ['is:sms', ['sms']],
  ['is:email code:771204', []],
  ['is:email has:code', ['welcome']],
  ['after:2000-01-01', ['fox', 'cafe', 'sms', 'reset', 'order', 'welcome']],
  ['before:2000-01-01T00:00Z', []],
  ['after:1h', ['fox', 'cafe', 'sms', 'reset', 'order', 'welcome']],
  ['before:1h', []],
  ['after:2000-01-01 before:2999-12-31 from:bob', ['order']],
  ['has:link password', ['reset', 'order']],
];

describe(`HTTP API: search (${STORE_KIND} store)`, () => {
  let h: Harness;
  let smtp: InboxSmtpServer;
  let smtpPort: number;

  beforeEach(async () => {
    h = await startApi();
    smtp = createSmtpServer({ store: h.store, host: '127.0.0.1', port: 0 });
    smtpPort = (await smtp.start()).port;
  });

  afterEach(async () => {
    await smtp.stop();
    await h.close();
  });

  async function smtpSend(raw: Buffer, to: string): Promise<void> {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ envelope: { from: 'sender@example.test', to: [to] }, raw });
    transport.close();
  }

  const compose = (mail: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> => new MailComposer(mail).compile().build();

  /** Sends the table's messages one after the other; resolves their ids by name. */
  async function sendTable(): Promise<Record<Name, string>> {
    const ids = {} as Record<Name, string>;
    const newest = async (): Promise<string> => (await h.store.search([], { limit: 1, skip: 0, count: false })).msgs[0].id;
    for (const name of ARRIVAL) {
      switch (name) {
        case 'welcome':
          await smtpSend(await multipartEmail(), `joe@${DOMAIN}`);
          break;
        case 'order':
          await smtpSend(
            await compose({
              from: 'Bob <bob@shop.test>',
              to: `ann@${DOMAIN}`,
              subject: 'Your order shipped',
              html: '<p>Tracking number <b>ZX-99</b>. Thanks for shopping.</p><p>Forgot your password? <a href="https://shop.test/reset-password?t=9">Choose a new one</a></p>',
            }),
            `ann@${DOMAIN}`,
          );
          break;
        case 'reset':
          await smtpSend(await compose({ from: 'Shop <no-reply@shop.test>', to: `joe@${OTHER}`, subject: 'Password reset', text: 'Someone asked to reset your password.\nhttps://shop.test/reset-password?token=abc\n' }), `joe@${OTHER}`);
          break;
        case 'sms': {
          const r = await h.call('POST', `/api/v2/domains/${DOMAIN}/inboxes/${PHONE}`, { body: { from: '+1 555 000 1111', text: 'Your Acme code is 771204' } });
          assert.equal(r.status, 200, r.text);
          break;
        }
        case 'cafe':
          await smtpSend(await compose({ from: 'Zoë <zoe@cafe.test>', to: `mia@${DOMAIN}`, subject: 'Über café', text: 'See you there.' }), `mia@${DOMAIN}`);
          break;
        case 'fox':
          await smtpSend(await compose({ from: 'Fox <fox@woods.test>', to: `kit@${DOMAIN}`, subject: 'Pangram', text: 'The quick brown\r\n   fox jumps over the lazy dog.' }), `kit@${DOMAIN}`);
          break;
      }
      ids[name] = await newest();
    }
    return ids;
  }

  const search = (q: string, extra = ''): ReturnType<Harness['call']> => h.call('GET', `/api/v2/search?q=${encodeURIComponent(q)}${extra}`);

  it('answers the query table, newest first, with the total and the list route’s summaries', async () => {
    const ids = await sendTable();
    const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
    for (const [q, want] of TABLE) {
      const r = await search(q);
      assert.equal(r.status, 200, `${q}: ${r.text}`);
      assert.equal(r.json.q, q);
      const got = (r.json.msgs as Array<{ id: string }>).map((m) => byId.get(m.id) ?? m.id);
      assert.deepEqual(got, want, `q=${q}`);
      assert.equal(r.json.total, want.length, `total of q=${q}`);
      assert.equal(r.json.partial, undefined, q);
    }
    // A summary is the list route's, field for field.
    const listed = await h.call('GET', `/api/v2/domains/${DOMAIN}/inboxes/joe`);
    const found = await search('code:482913');
    const { seconds_ago: _a, ...fromList } = listed.json.msgs[0];
    const { seconds_ago: _b, ...fromSearch } = found.json.msgs[0];
    assert.deepEqual(fromSearch, fromList);
  });

  it('pages with limit and skip, the total counting every match', async () => {
    const ids = await sendTable();
    for (const q of ['is:email', 'e']) {
      const all = await search(q, '&limit=500');
      assert.equal(all.status, 200, all.text);
      const n = all.json.total as number;
      assert.ok(n >= 3, `${q} finds ${n}`);
      const first = await search(q, '&limit=2');
      const second = await search(q, '&limit=2&skip=2');
      assert.equal(first.json.total, n);
      assert.equal(second.json.total, n);
      assert.deepEqual([...first.json.msgs, ...second.json.msgs].map((m: { id: string }) => m.id), all.json.msgs.slice(0, 4).map((m: { id: string }) => m.id));
    }
    assert.equal((await search('is:email')).json.msgs[0].id, ids.fox);
  });

  it('finds a message the moment it is acknowledged', async () => {
    const r = await h.call('POST', `/api/v2/domains/${DOMAIN}/inboxes/zed`, { body: { subject: 'Fresh', text: 'brand new words here' } });
    assert.equal(r.status, 200, r.text);
    const found = await search('"new words"');
    assert.deepEqual(found.json.msgs.map((m: { id: string }) => m.id), [r.json.id]);
  });

  it('wait answers as soon as a matching message arrives, not for one that does not match', async () => {
    await sendTable();
    const pending = search('"late arrival" inbox:lou', '&wait=30');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Neither of these matches: the search keeps waiting.
    await h.call('POST', `/api/v2/domains/${DOMAIN}/inboxes/lou`, { body: { subject: 'Early', text: 'nothing to see' } });
    await h.call('POST', `/api/v2/domains/${DOMAIN}/inboxes/sam`, { body: { subject: 'Early', text: 'a late arrival elsewhere' } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sent = await h.call('POST', `/api/v2/domains/${DOMAIN}/inboxes/lou`, { body: { subject: 'Hello', text: 'the late   arrival' } });
    const r = await pending;
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.msgs.map((m: { id: string }) => m.id), [sent.json.id]);
    assert.equal(r.json.total, 1);
  });

  it('wait with nothing arriving answers an empty result', async () => {
    const r = await search('nobody-has-this', '&wait=1');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.msgs, []);
    assert.equal(r.json.total, 0);
  });

  it('G11: a term holding U+0000 matches no message, on every store (200, not a 500); negated, every message', async () => {
    await h.deliver('nul', Buffer.from('From: a\u0000b@nul.test\r\nSubject: x\u0000y\r\n\r\nbody\r\n'));
    await h.deliver('plain', Buffer.from('From: ann@acme.test\r\nSubject: hello\r\n\r\nbody\r\n'));
    for (const q of ['from:a\u0000b', 'subject:x\u0000y', 'subject:\u0000', 'to:\u0000', 'inbox:\u0000', 'domain:\u0000', 'code:\u0000', 'a\u0000b', '"x\u0000y"', 'from:ann subject:"hel\u0000"']) {
      const r = await search(q);
      assert.equal(r.status, 200, `${JSON.stringify(q)}: ${r.text}`);
      assert.deepEqual(r.json.msgs, [], JSON.stringify(q));
      assert.equal(r.json.total, 0, JSON.stringify(q));
    }
    const all = await search('-from:\u0000 -subject:a\u0000b');
    assert.equal(all.status, 200, all.text);
    assert.equal(all.json.total, 2);
  });

  it('a malformed query gets 400 naming what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['   ', /empty/],
      ['"unclosed', /never closed/],
      ['foo:bar', /unknown operator "foo:"/],
      ['from:', /from: needs a value/],
      ['has:pony', /has:pony is not known; use has:code, has:attachment, has:link/],
      ['is:fax', /is:fax is not known/],
      ['after:yesterday', /after:yesterday is not a time/],
      ['before:2026-02-30', /before:2026-02-30 is not a time/],
      ['after:5', /after:5 is not a time/],
      ['hello -', /negates nothing/],
      ['x'.repeat(1001), /longer than 1000/],
      [Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '), /33 terms; at most 32/],
    ];
    for (const [q, message] of cases) {
      const r = await search(q);
      assert.equal(r.status, 400, `${JSON.stringify(q)}: ${r.text}`);
      assert.equal(r.json.status, 'error');
      assert.match(r.json.message, /^bad query: /, q);
      assert.match(r.json.message, message, q);
    }
    const missing = await h.call('GET', '/api/v2/search');
    assert.equal(missing.status, 400);
    assert.match(missing.json.message, /q is missing/);
    for (const extra of ['&limit=0', '&limit=501', '&skip=-1', '&wait=soon']) {
      const r = await search('x', extra);
      assert.equal(r.status, 400, extra);
      assert.match(r.json.message, /limit|skip|wait/);
    }
  });

  it('the client (src/api) searches, and a malformed query is its badRequest naming the problem', async () => {
    const ids = await sendTable();
    const client = createClient({ baseUrl: `http://127.0.0.1:${h.port}`, apiToken: API_TOKEN });
    try {
      const r = await client.search('inbox:joe', { limit: 1 });
      assert.equal(r.q, 'inbox:joe');
      assert.equal(r.total, 2);
      assert.deepEqual(r.msgs.map((m) => m.id), [ids.reset]);
      assert.equal(r.msgs[0].domain, OTHER);
      await assert.rejects(client.search('has:pony'), (e: unknown) => ApiError.is(e, 'bad_request') && /has:pony is not known/.test((e as Error).message));
      await assert.rejects(client.search('  '), (e: unknown) => ApiError.is(e, 'invalid_input'));
    } finally {
      await client.dispose();
    }
  });

  it('needs the API token, and answers GET only', async () => {
    assert.equal((await h.call('GET', '/api/v2/search?q=x', { anonymous: true })).status, 401);
    assert.equal((await h.call('GET', '/api/v2/search?q=x', { headers: { authorization: 'wrong-token' } })).status, 403);
    const post = await h.call('POST', '/api/v2/search?q=x', { body: {} });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });

  it('stops reading bodies when the client leaves, and keeps the event loop free meanwhile', async function () {
    this.timeout(180_000);
    // Many messages whose text must be read: no word of the query is in their headers.
    const filler = 'lorem ipsum dolor sit amet '.repeat(80);
    const N = 1500;
    for (let i = 0; i < N; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, N - i) }, (_, k) =>
          h.store.add([{ domain: DOMAIN, inbox: `bulk${(i + k) % 7}` }], Buffer.from(`From: a@b.test\r\nTo: x@${DOMAIN}\r\nSubject: n${i + k}\r\n\r\n${filler}\r\n`), 'smtp'),
        ),
      );
    }
    const before = searchCounters.bodiesRead;
    let answered = false;
    const req = http.request({ host: '127.0.0.1', port: h.port, path: `/api/v2/search?q=${encodeURIComponent('absent-word-xyz')}`, headers: { authorization: API_TOKEN, host: `127.0.0.1:${h.port}` } });
    req.on('response', () => (answered = true));
    req.on('error', () => undefined);
    req.end();
    while (searchCounters.bodiesRead - before < 20) await new Promise((resolve) => setTimeout(resolve, 2));
    // The server answers another request while the search reads bodies.
    const health = await h.call('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.equal(answered, false, 'the search was still running');
    req.destroy();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stopped = searchCounters.bodiesRead;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(searchCounters.bodiesRead, stopped, 'no body is read after the client left');
    assert.ok(stopped - before < N, `read ${stopped - before} of ${N} bodies`);
    assert.equal(answered, false);
    // And the same search, run to the end, reads them all (so the counter does count reads).
    const r = await search('absent-word-xyz');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.total, 0);
    assert.ok(searchCounters.bodiesRead - before >= N, `read ${searchCounters.bodiesRead - before}`);
  });
});
