import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import { createSmtpServer } from '../../src/server/smtp/smtp';
import { DOMAIN, ID_SHAPE, startApi, type Harness } from './api-harness';
import { PNG, multipartEmail } from '../support/messages';

const SUMMARY_KEYS = ['domain', 'from', 'id', 'seconds_ago', 'subject', 'time', 'to'];
const EMAIL_KEYS = ['from', 'fromfull', 'headers', 'id', 'parts', 'seconds_ago', 'subject', 'time', 'to'];

describe('HTTP API: reading (docs/api.md §4.1–4.3 and extras)', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(async () => {
    await h.close();
  });

  async function inject(inbox: string, body: Record<string, unknown>, domain = 'private'): Promise<string> {
    const r = await h.call('POST', `/api/v2/domains/${domain}/inboxes/${inbox}/`, { body });
    assert.equal(r.status, 200, r.text);
    return r.json.id as string;
  }

  it('answers /healthz without a token with the service name, version, default domain and the number of active fault rules', async () => {
    const r = await h.call('GET', '/healthz', { anonymous: true });
    assert.equal(r.status, 200);
    const { now, ...rest } = r.json as { now: unknown };
    assert.deepEqual(rest, { service: 'test-inbox', version: '9.9.9-test', status: 'ok', defaultDomain: DOMAIN, chaosRules: 0 });
    // The server's clock, which `since: "now"` resolves against (api/queries.ts resolveSince).
    assert.ok(typeof now === 'number' && Math.abs(now - Date.now()) < 60_000, `now: ${String(now)}`);
  });

  it('lists an inbox (4.1) as docs/api.md §2.1 with summaries of §2.2, newest first', async () => {
    const before = Date.now();
    const first = await inject('joe', { from: 'Acme <no-reply@acme.test>', subject: 'first', text: 'one' });
    const second = await inject('joe', { from: 'Acme <no-reply@acme.test>', subject: 'second', text: 'two' });
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/joe');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(Object.keys(r.json).sort(), ['domain', 'msgs', 'to']);
    assert.equal(r.json.domain, 'private');
    assert.equal(r.json.to, 'joe');
    assert.deepEqual(
      r.json.msgs.map((m: { id: string }) => m.id),
      [second, first],
    );
    for (const m of r.json.msgs) {
      assert.deepEqual(Object.keys(m).sort(), SUMMARY_KEYS);
      assert.match(m.id, ID_SHAPE);
      assert.equal(m.domain, DOMAIN);
      assert.equal(m.to, 'joe');
      assert.equal(m.from, 'Acme <no-reply@acme.test>');
      assert.ok(Number.isInteger(m.time) && m.time >= before && m.time <= Date.now(), String(m.time));
      assert.ok(Number.isInteger(m.seconds_ago) && m.seconds_ago >= 0);
    }
    assert.equal(r.json.msgs[0].subject, 'second');
  });

  it('adds the one-time code found at ingest to summaries that have one (a local extra, docs/api.md §2.2)', async () => {
    const withCode = await inject('kim', { from: 'Acme <no-reply@acme.test>', subject: 'Sign in', text: 'Your verification code is 482913.' });
    const without = await inject('kim', { from: 'Acme <no-reply@acme.test>', subject: 'Hello', text: 'Nothing here.' });
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/kim');
    const byId = new Map<string, Record<string, unknown>>(r.json.msgs.map((m: { id: string }) => [m.id, m]));
    assert.equal(byId.get(withCode)?.code, '482913');
    assert.deepEqual(Object.keys(byId.get(without) ?? {}).sort(), SUMMARY_KEYS, 'no code field when there is no code');
  });

  it('shapes ids as <inbox>-<number>-<number> with the inbox first', async () => {
    const id = await inject('sign-up.test+x', { text: 'x' });
    assert.match(id, /^sign-up\.test\+x-[0-9]+-[0-9]+$/);
  });

  it('accepts both path spellings (domain, domains) and an optional trailing slash on every read', async () => {
    const id = await inject('joe', { subject: 's', text: 't' });
    for (const p of ['/api/v2/domains/private/inboxes/joe', '/api/v2/domain/private/inboxes/joe/', '/api/v2/domains/inbox.test/inboxes/joe/']) {
      const r = await h.call('GET', p);
      assert.equal(r.status, 200, p);
      assert.equal(r.json.msgs[0].id, id, p);
    }
    for (const p of [
      `/api/v2/domain/private/inboxes/joe/messages/${id}`,
      `/api/v2/domains/private/inboxes/joe/messages/${id}/`,
      `/api/v2/domains/private/messages/${id}`,
      `/api/v2/domain/inbox.test/messages/${id}/`,
    ]) {
      const r = await h.call('GET', p);
      assert.equal(r.status, 200, p);
      assert.equal(r.json.id, id, p);
    }
  });

  it('reads private as every domain and a named domain as that domain only', async () => {
    await h.deliver('joe', await multipartEmail({ subject: 'to other' }), 'other.test');
    await inject('joe', { subject: 'to default' });
    const all = await h.call('GET', '/api/v2/domains/private/inboxes/joe');
    assert.deepEqual(all.json.msgs.map((m: { subject: string }) => m.subject).sort(), ['to default', 'to other']);
    const other = await h.call('GET', '/api/v2/domains/OTHER.test/inboxes/joe');
    assert.equal(other.json.domain, 'other.test');
    assert.deepEqual(
      other.json.msgs.map((m: { subject: string; domain: string }) => [m.subject, m.domain]),
      [['to other', 'other.test']],
    );
  });

  it('treats inbox names case-insensitively', async () => {
    const id = await inject('Joe.Bloggs', { text: 'x' });
    assert.match(id, /^joe\.bloggs-/);
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/JOE.BLOGGS');
    assert.equal(r.json.to, 'joe.bloggs');
    assert.equal(r.json.msgs[0].id, id);
  });

  it('pages with limit, skip, sort and cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await inject('pager', { subject: `m${i}` }));
    const newest = [...ids].reverse();
    const p1 = await h.call('GET', '/api/v2/domains/private/inboxes/pager?limit=2');
    assert.deepEqual(p1.json.msgs.map((m: { id: string }) => m.id), newest.slice(0, 2));
    assert.equal(p1.json.cursor, newest[1]);
    const p2 = await h.call('GET', `/api/v2/domains/private/inboxes/pager?limit=2&cursor=${p1.json.cursor}`);
    assert.deepEqual(p2.json.msgs.map((m: { id: string }) => m.id), newest.slice(2, 4));
    const p3 = await h.call('GET', `/api/v2/domains/private/inboxes/pager?limit=2&cursor=${p2.json.cursor}`);
    assert.deepEqual(p3.json.msgs.map((m: { id: string }) => m.id), newest.slice(4));
    assert.equal(p3.json.cursor, undefined);
    const asc = await h.call('GET', '/api/v2/domains/private/inboxes/pager?sort=ascending&skip=1&limit=3');
    assert.deepEqual(asc.json.msgs.map((m: { id: string }) => m.id), ids.slice(1, 4));
  });

  it('lists every inbox of the domain for inbox *', async () => {
    await inject('alice', { subject: 'a' });
    await inject('bob', { subject: 'b' });
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/*');
    assert.equal(r.status, 200);
    assert.equal(r.json.to, '*');
    assert.deepEqual(r.json.msgs.map((m: { to: string }) => m.to).sort(), ['alice', 'bob']);
  });

  it('fetches an email (4.2) as docs/api.md §2.3: lowercase headers, text, html and attachment parts', async () => {
    const meta = await h.deliver('joe', await multipartEmail());
    const r = await h.call('GET', `/api/v2/domain/private/inboxes/joe/messages/${meta.id}`);
    assert.equal(r.status, 200);
    const m = r.json;
    assert.deepEqual(Object.keys(m).sort(), EMAIL_KEYS);
    assert.equal(m.id, meta.id);
    assert.equal(m.fromfull, meta.from);
    assert.match(m.fromfull, /^"?Acme Support"? <support@acme\.test>$/);
    assert.equal(m.from, 'Acme Support');
    assert.equal(m.subject, 'Welcome, Joe');
    assert.equal(m.to, 'joe');
    assert.equal(m.time, meta.time);
    assert.ok(Number.isInteger(m.seconds_ago));
    for (const k of ['mime-version', 'date', 'subject', 'content-type']) assert.equal(typeof m.headers[k], 'string', k);
    for (const k of Object.keys(m.headers)) assert.equal(k, k.toLowerCase());
    const types = m.parts.map((p: { headers: Record<string, string> }) => p.headers['content-type']);
    assert.deepEqual(types.slice(0, 2), ['text/plain; charset=utf-8', 'text/html; charset=utf-8']);
    assert.deepEqual([...types.slice(2)].sort(), ['application/pdf', 'image/png']);
    assert.match(m.parts[0].body, /your code is 482913/);
    const png = m.parts.find((p: { headers: Record<string, string> }) => p.headers['content-type'] === 'image/png');
    assert.deepEqual(Buffer.from(png.body, 'base64'), PNG);
  });

  it('fetches an SMS of a phone inbox (4.3) as docs/api.md §2.4: parts carry only body', async () => {
    const id = await inject('14155550100', { from: '+14155550199', subject: 'SMS', text: 'Your code is 123456' });
    const r = await h.call('GET', `/api/v2/domain/private/inboxes/14155550100/messages/${id}`);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.json).sort(), ['fromfull', 'id', 'parts', 'seconds_ago', 'subject', 'time', 'to']);
    assert.equal(r.json.fromfull, '+14155550199');
    assert.equal(r.json.subject, 'SMS');
    assert.deepEqual(r.json.parts, [{ body: 'Your code is 123456' }]);
    assert.equal(r.json.to, '14155550100');
    assert.match(r.json.id, /^14155550100-[0-9]+-[0-9]+$/);
    const listed = await h.call('GET', '/api/v2/domains/private/inboxes/14155550100');
    assert.equal(listed.json.msgs[0].from, '+14155550199');
  });

  it('names an SMS injected without a subject by its first words; an email keeps "(no subject)"', async () => {
    await inject('14155550177', { from: '+14155550199', text: 'Your Acme login code is 604219. Do not share it with anyone, not even us.' });
    const sms = await h.call('GET', '/api/v2/domains/private/inboxes/14155550177');
    assert.equal(sms.json.msgs[0].subject, 'Your Acme login code is 604219. Do not share…');
    await inject('no-subject-mail', { from: 'a@b.test', text: 'Your Acme login code is 604219.' });
    const mail = await h.call('GET', '/api/v2/domains/private/inboxes/no-subject-mail');
    assert.equal(mail.json.msgs[0].subject, '(no subject)');
  });

  it('serves an email sent over real SMTP (nodemailer) through list, fetch, links and attachments', async () => {
    const smtp = createSmtpServer({ store: h.store, host: '127.0.0.1', port: 0 });
    const { port } = await smtp.start();
    try {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
      await transport.sendMail({
        from: 'Shop <orders@shop.test>',
        to: [`buyer@${DOMAIN}`, 'buyer@other.test'],
        subject: 'Order 1234 confirmed',
        text: 'Track it at https://shop.test/t/1234',
        html: '<p>Track it <a href="https://shop.test/t/1234">here</a></p>',
        attachments: [{ filename: 'receipt.txt', content: 'paid 12.00' }],
      });
      transport.close();
    } finally {
      await smtp.stop();
    }
    const list = await h.call('GET', '/api/v2/domains/private/inboxes/buyer');
    assert.deepEqual(list.json.msgs.map((m: { domain: string }) => m.domain).sort(), [DOMAIN, 'other.test']);
    const ours = list.json.msgs.find((m: { domain: string }) => m.domain === DOMAIN);
    assert.equal(ours.from, 'Shop <orders@shop.test>');
    assert.equal(ours.subject, 'Order 1234 confirmed');
    const m = (await h.call('GET', `/api/v2/domain/private/inboxes/buyer/messages/${ours.id}`)).json;
    assert.equal(m.from, 'Shop');
    assert.match(m.parts[0].body, /https:\/\/shop\.test\/t\/1234/);
    assert.deepEqual((await h.call('GET', `/api/v2/domains/${DOMAIN}/messages/${ours.id}/links`)).json, { links: ['https://shop.test/t/1234'] });
    const atts = (await h.call('GET', `/api/v2/domains/private/messages/${ours.id}/attachments`)).json.attachments;
    assert.deepEqual(atts.map((a: { filename: string }) => a.filename), ['receipt.txt']);
    const dl = await h.call('GET', `/api/v2/domains/private/messages/${ours.id}/attachments/${atts[0].attachment_id}`);
    assert.equal(dl.text, 'paid 12.00');
    assert.match(dl.headers['content-type'] ?? '', /^text\/plain/);
  });

  it('answers 404 for a message of another inbox or domain, and for an unknown id', async () => {
    const meta = await h.deliver('joe', await multipartEmail());
    for (const p of [
      `/api/v2/domains/private/inboxes/ann/messages/${meta.id}`,
      `/api/v2/domains/other.test/messages/${meta.id}`,
      '/api/v2/domains/private/inboxes/joe/messages/joe-1-999999',
    ]) {
      const r = await h.call('GET', p);
      assert.equal(r.status, 404, p);
      assert.equal(r.json.status, 'error');
      assert.match(r.json.message, /not found/);
    }
  });

  it('lists the links of a message (http and https only)', async () => {
    const meta = await h.deliver('joe', await multipartEmail());
    const r = await h.call('GET', `/api/v2/domains/private/inboxes/joe/messages/${meta.id}/links`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { links: ['https://acme.test/verify?c=482913', 'https://acme.test/help'] });
  });

  it('lists attachments and downloads each with its type and file name', async () => {
    const meta = await h.deliver('joe', await multipartEmail());
    const base = `/api/v2/domains/private/inboxes/joe/messages/${meta.id}/attachments`;
    const list = await h.call('GET', base);
    assert.equal(list.status, 200);
    const atts = list.json.attachments as Array<{ filename: string; 'content-type': string; size: number; attachment_id: number }>;
    assert.deepEqual(atts.map((a) => a.filename).sort(), ['invoice ü.pdf', 'logo.png']);
    const png = atts.find((a) => a.filename === 'logo.png');
    assert.ok(png);
    assert.equal(png.size, PNG.length);
    const dl = await h.call('GET', `${base}/${png.attachment_id}`);
    assert.equal(dl.status, 200);
    assert.equal(dl.headers['content-type'], 'image/png');
    assert.match(dl.headers['content-disposition'] ?? '', /^attachment; filename="logo\.png"/);
    assert.deepEqual(dl.bytes, PNG);
    const pdf = atts.find((a) => a.filename === 'invoice ü.pdf');
    const pdfDl = await h.call('GET', `/api/v2/domains/private/messages/${meta.id}/attachments/${pdf?.attachment_id}`);
    assert.equal(pdfDl.bytes.toString(), '%PDF-1.4 fake but bytes');
    assert.match(pdfDl.headers['content-disposition'] ?? '', /filename\*=UTF-8''invoice%20%C3%BC\.pdf/);
    const missing = await h.call('GET', `${base}/7`);
    assert.equal(missing.status, 404);
    assert.match(missing.json.message, /no attachment 7/);
  });

  it('returns the raw RFC 5322 source byte for byte', async () => {
    const raw = await multipartEmail();
    const meta = await h.deliver('joe', raw);
    const r = await h.call('GET', `/api/v2/domains/private/inboxes/joe/messages/${meta.id}/raw`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'message/rfc822');
    assert.deepEqual(r.bytes, raw);
  });

  it('deletes one message, then answers 404 for it', async () => {
    const keep = await inject('joe', { subject: 'keep' });
    const gone = await inject('joe', { subject: 'gone' });
    const del = await h.call('DELETE', `/api/v2/domains/private/inboxes/joe/messages/${gone}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.json, { status: 'ok', count: 1 });
    assert.equal((await h.call('GET', `/api/v2/domains/private/inboxes/joe/messages/${gone}`)).status, 404);
    assert.equal((await h.call('DELETE', `/api/v2/domains/private/messages/${gone}`)).status, 404);
    const list = await h.call('GET', '/api/v2/domains/private/inboxes/joe');
    assert.deepEqual(list.json.msgs.map((m: { id: string }) => m.id), [keep]);
  });

  it('clears an inbox and reports the count, leaving other inboxes alone', async () => {
    await inject('joe', { subject: '1' });
    await inject('joe', { subject: '2' });
    await inject('ann', { subject: '3' });
    const r = await h.call('DELETE', '/api/v2/domains/private/inboxes/joe');
    assert.deepEqual(r.json, { status: 'ok', count: 2 });
    assert.deepEqual((await h.call('GET', '/api/v2/domains/private/inboxes/joe')).json.msgs, []);
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes/ann')).json.msgs.length, 1);
    const all = await h.call('DELETE', '/api/v2/domain/private/inboxes/*/');
    assert.deepEqual(all.json, { status: 'ok', count: 1 });
  });

  it('clears every inbox of one domain with DELETE …/inboxes (Mailinator form)', async () => {
    await inject('joe', { subject: '1' });
    await inject('ann', { subject: '2' });
    await h.deliver('joe', await multipartEmail(), 'other.test');
    const r = await h.call('DELETE', `/api/v2/domains/${DOMAIN}/inboxes/`);
    assert.deepEqual(r.json, { status: 'ok', count: 2 });
    assert.deepEqual((await h.store.domains()).map((d) => [d.name, d.messages]), [['other.test', 1]]);
    assert.equal((await h.call('GET', '/api/v2/domains/private/inboxes')).status, 405);
  });

  it('lists domains with inbox and message counts, and names the default domain', async () => {
    await inject('joe', { subject: '1' });
    await inject('ann', { subject: '2' });
    await h.deliver('joe', await multipartEmail(), 'other.test');
    for (const p of ['/api/v2/domains', '/api/v2/domains/', '/api/v2/domain']) {
      const r = await h.call('GET', p);
      assert.equal(r.status, 200, p);
      assert.deepEqual(r.json, {
        domains: [
          { name: 'inbox.test', inboxes: 2, messages: 2 },
          { name: 'other.test', inboxes: 1, messages: 1 },
        ],
        defaultDomain: DOMAIN,
      });
    }
  });

  it('long-polls with wait: answers as soon as a message arrives for that inbox', async () => {
    const waiting = h.call('GET', '/api/v2/domains/private/inboxes/late?wait=30');
    await new Promise((r) => setTimeout(r, 100));
    await inject('other', { subject: 'not for late' });
    const id = await inject('late', { subject: 'arrived' });
    const r = await waiting;
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.msgs.map((m: { id: string }) => m.id), [id]);
  });

  it('long-polls with wait: answers an empty listing when nothing arrives', async () => {
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/nobody?wait=0.2');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { domain: 'private', to: 'nobody', msgs: [] });
  });

  it('long-polls with a duration: wait=300ms ends empty after about that long, wait=1m answers on arrival', async () => {
    const started = Date.now();
    const empty = await h.call('GET', '/api/v2/domains/private/inboxes/nobody?wait=300ms');
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.json.msgs, []);
    assert.ok(Date.now() - started >= 250, 'the wait lasted');
    const waiting = h.call('GET', '/api/v2/domains/private/inboxes/later?wait=1m');
    await new Promise((r) => setTimeout(r, 100));
    const id = await inject('later', { subject: 'arrived' });
    assert.deepEqual((await waiting).json.msgs.map((m: { id: string }) => m.id), [id]);
  });

  it('answers at once when wait is given and messages already match', async () => {
    const id = await inject('ready', { subject: 'x' });
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/ready?wait=60');
    assert.deepEqual(r.json.msgs.map((m: { id: string }) => m.id), [id]);
  });
});
