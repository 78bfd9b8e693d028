// Resend's API on the local server, driven by the official `resend` SDK (its documented
// `baseUrl` option) against a real server on port 0; raw requests for what the SDK never sends.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import PostalMime from 'postal-mime';
import { Resend } from 'resend';
import { mimeJobsDone } from '../../src/server/workers/pool';
import { API_TOKEN, probeHealthz, WEBHOOK_TOKEN } from './api-harness';
import { DOMAIN, header, onlyMessage, PIXEL, PROVIDER_KEY, type ProviderHarness, readInbox, startProviders } from './providers-harness';

describe('Resend API (server, real HTTP, official SDK)', () => {
  let h: ProviderHarness;
  let resend: Resend;
  beforeEach(async () => {
    h = await startProviders({ twilioAuthToken: 'twilio-token-0f0e0d0c0b' });
    resend = new Resend(PROVIDER_KEY, { baseUrl: h.base });
  });
  afterEach(() => h.close());

  const post = (path: string, body: unknown, headers: Record<string, string | undefined> = {}) =>
    h.call('POST', path, { body, headers: { authorization: `Bearer ${PROVIDER_KEY}`, ...headers } });

  it('sends HTML, text and an attachment with an inline image; every recipient inbox gets one message, bcc not in its headers', async () => {
    const { data, error } = await resend.emails.send({
      from: 'Acme <no-reply@acme.test>',
      to: ['ann@inbox.test'],
      cc: 'carl@inbox.test',
      bcc: ['bea@other.test'],
      replyTo: 'help@acme.test',
      subject: 'Your code is 481516',
      html: '<p>Your code is <b>481516</b> <img src="cid:logo"></p>',
      text: 'Your code is 481516',
      attachments: [
        { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 hello') },
        { filename: 'logo.png', content: PIXEL.toString('base64'), contentType: 'image/png', contentId: 'logo' },
      ],
      tags: [{ name: 'category', value: 'signup' }],
      headers: { 'X-Entity-Ref-ID': 'ref-42' },
    });
    assert.equal(error, null);
    assert.match(data!.id, /^[0-9a-f-]{36}$/);
    const ann = await onlyMessage(h, 'ann');
    assert.equal(ann.json.subject, 'Your code is 481516');
    assert.equal(ann.json.fromfull, 'Acme <no-reply@acme.test>');
    assert.equal(header(ann, 'X-Test-Inbox-Api'), 'Resend (POST /emails)');
    assert.equal(header(ann, 'X-Test-Inbox-Provider-Id'), data!.id);
    assert.equal(header(ann, 'X-Resend-Tag'), 'category=signup');
    assert.equal(header(ann, 'X-Entity-Ref-ID'), 'ref-42');
    assert.match(header(ann, 'reply-to') ?? '', /help@acme\.test/);
    assert.match(header(ann, 'cc') ?? '', /carl@inbox\.test/);
    assert.doesNotMatch(ann.raw, /bea@other\.test/i, 'bcc is not in the stored message');
    assert.ok(ann.json.parts.some((p) => p.body.includes('<b>481516</b>')), 'the HTML part');
    assert.ok(ann.json.parts.some((p) => p.body.trim() === 'Your code is 481516'), 'the text part');
    const names = ann.attachments.map((a) => a.filename).sort();
    assert.deepEqual(names, ['invoice.pdf', 'logo.png']);
    assert.equal(ann.attachments.find((a) => a.filename === 'invoice.pdf')!.size, '%PDF-1.4 hello'.length);
    const list = await h.call('GET', '/api/v2/domains/inbox.test/inboxes/ann');
    assert.equal(list.json.msgs[0].code, '481516', 'the code comes from the core like any message');
    // cc and bcc inboxes hold the same message.
    assert.equal((await onlyMessage(h, 'carl')).json.subject, 'Your code is 481516');
    const bea = await onlyMessage(h, 'bea', 'other.test');
    assert.equal(header(bea, 'X-Test-Inbox-Provider-Id'), data!.id);
  });

  it('a batch answers one id per email; permissive validation stores the valid ones and names the others', async () => {
    const { data, error } = await resend.batch.send([
      { from: 'a@acme.test', to: 'one@inbox.test', subject: 'First', text: 'one' },
      { from: 'a@acme.test', to: 'two@inbox.test', subject: 'Second', html: '<p>two</p>' },
    ]);
    assert.equal(error, null);
    assert.equal(data!.data.length, 2);
    assert.equal(header(await onlyMessage(h, 'one'), 'X-Test-Inbox-Provider-Id'), data!.data[0].id);
    assert.equal(header(await onlyMessage(h, 'two'), 'X-Test-Inbox-Api'), 'Resend (POST /emails/batch)');

    const strict = await resend.batch.send([
      { from: 'a@acme.test', to: 'three@inbox.test', subject: 'ok', text: 'x' },
      { from: 'a@acme.test', to: 'not an address', subject: 'bad', text: 'x' },
    ]);
    assert.equal(strict.data, null);
    assert.equal(strict.error!.name, 'validation_error');
    assert.match(strict.error!.message, /emails\[1\].*`to`/);
    assert.equal((await readInbox(h, 'three')).length, 0, 'strict: nothing stored');

    const permissive = await resend.batch.send(
      [
        { from: 'a@acme.test', to: 'four@inbox.test', subject: 'ok', text: 'x' },
        { from: 'a@acme.test', to: 'four@inbox.test', subject: 'bad' } as never,
        { from: 'a@acme.test', to: 'bad@', subject: 'bad', text: 'x' },
      ],
      { batchValidation: 'permissive' },
    );
    assert.equal(permissive.error, null);
    assert.equal(permissive.data!.data.length, 2);
    const errors = (permissive.data as unknown as { errors: Array<{ index: number; message: string }> }).errors;
    assert.deepEqual(errors.map((e) => e.index), [2]);
    assert.equal((await readInbox(h, 'four')).length, 2, 'an email without a body is still an email');
  });

  it('an Idempotency-Key repeated with the same body answers the first id and stores nothing; with another body, 409', async () => {
    const email = { from: 'a@acme.test', to: 'idem@inbox.test', subject: 'Once', text: 'once' };
    const first = await resend.emails.send(email, { idempotencyKey: 'welcome-user/1' });
    const again = await resend.emails.send(email, { idempotencyKey: 'welcome-user/1' });
    assert.equal(again.data!.id, first.data!.id);
    assert.equal((await readInbox(h, 'idem')).length, 1);
    const other = await resend.emails.send({ ...email, subject: 'Twice' }, { idempotencyKey: 'welcome-user/1' });
    assert.equal(other.error!.name, 'invalid_idempotent_request');
    assert.equal(other.error!.statusCode, 409);
    assert.equal((await readInbox(h, 'idem')).length, 1);
    const long = await post('/emails', email, { 'idempotency-key': 'k'.repeat(257) });
    assert.equal(long.status, 400);
    assert.equal(long.json.name, 'invalid_idempotency_key');
  });

  it('wrong or missing credentials get Resend 401s; no other token of the server opens the route', async () => {
    const wrong = await new Resend('re_wrong', { baseUrl: h.base }).emails.send({ from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't' });
    assert.deepEqual(wrong.error, { statusCode: 401, name: 'validation_error', message: 'API key is invalid' });
    for (const token of [API_TOKEN, WEBHOOK_TOKEN, 'twilio-token-0f0e0d0c0b']) {
      const r = await post('/emails', { from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't' }, { authorization: `Bearer ${token}` });
      assert.equal(r.status, 401, token);
    }
    const missing = await post('/emails', { from: 'a@acme.test', to: 'x@inbox.test', subject: 's' }, { authorization: undefined });
    assert.equal(missing.status, 401);
    assert.equal(missing.json.name, 'missing_api_key');
    // The provider key opens nothing of the server's own API.
    const list = await h.call('GET', '/api/v2/domains/inbox.test/inboxes/x', { headers: { authorization: PROVIDER_KEY } });
    assert.equal(list.status, 403);
    assert.equal((await readInbox(h, 'x')).length, 0);
  });

  it('bad input gets Resend 4xx errors and stores nothing; the server stays up', async () => {
    const cases: Array<[unknown, number, string, RegExp]> = [
      [{ to: 'x@inbox.test', subject: 's', text: 't' }, 422, 'missing_required_field', /`from`/],
      [{ from: 'a@acme.test', subject: 's', text: 't' }, 422, 'missing_required_field', /`to`/],
      [{ from: 'a@acme.test', to: 'x@inbox.test', text: 't' }, 422, 'missing_required_field', /`subject`/],
      [{ from: 'a@acme.test', to: 'not-an-address', subject: 's', text: 't' }, 422, 'validation_error', /`to`/],
      [{ from: 'a@acme.test', to: Array.from({ length: 51 }, (_, i) => `r${i}@inbox.test`), subject: 's', text: 't' }, 422, 'validation_error', /at most 50/],
      [{ from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't', colour: 'red' }, 422, 'validation_error', /Unknown field `colour`/],
      [{ from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't', attachments: [{ filename: 'a.pdf', path: 'https://example.com/a.pdf' }] }, 422, 'invalid_attachment', /never fetches a URL/],
      [{ from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't', scheduled_at: 'in 1 min' }, 422, 'validation_error', /Scheduled sending is not supported/],
      [{ from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't', scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }, 422, 'validation_error', /Scheduled sending/],
      [[1, 2], 422, 'validation_error', /JSON object/],
    ];
    for (const [body, status, name, message] of cases) {
      const r = await post('/emails', body);
      assert.equal(r.status, status, JSON.stringify(body).slice(0, 80));
      assert.equal(r.json.name, name);
      assert.equal(r.json.statusCode, status);
      assert.match(r.json.message, message);
    }
    const notJson = await post('/emails', '{"from":', { 'content-type': 'application/json' });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.name, 'validation_error');
    const method = await h.call('GET', '/emails', { headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
    assert.equal(method.status, 405);
    assert.equal(method.json.name, 'method_not_allowed');
    // An endpoint of Resend's that is not implemented (retrieving an email) answers in Resend's shape, not the server's.
    const unknown = await h.call('GET', '/emails/36202859-8a1c-4b4e-9f0e-2f1b1d3e4a55', { headers: { authorization: `Bearer ${PROVIDER_KEY}` } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.statusCode, 404);
    assert.equal(unknown.json.name, 'not_found');
    assert.equal(unknown.json.message, 'The requested endpoint does not exist.');
    assert.equal((await readInbox(h, 'x')).length, 0);
    // A send in the past is a send now.
    const past = await post('/emails', { from: 'a@acme.test', to: 'x@inbox.test', subject: 's', text: 't', scheduled_at: '2020-01-01T00:00:00Z' });
    assert.equal(past.status, 200);
    assert.equal((await h.call('GET', '/healthz')).status, 200);
  });

  it('a template send is stored with its id and variables as text, marked not rendered', async () => {
    const r = await post('/emails', { from: 'a@acme.test', to: 'tpl@inbox.test', subject: 'Welcome', template: { id: 'welcome-v2', variables: { code: '775533', link: 'https://app.test/verify?t=abc' } } });
    assert.equal(r.status, 200, r.text);
    const m = await onlyMessage(h, 'tpl');
    assert.match(header(m, 'X-Test-Inbox-Template') ?? '', /welcome-v2.*not rendered/);
    assert.match(m.json.parts[0].body, /code: 775533/);
    assert.match(m.json.parts[0].body, /https:\/\/app\.test\/verify\?t=abc/);
    const list = await h.call('GET', `/api/v2/domains/${DOMAIN}/inboxes/tpl`);
    assert.equal(list.json.msgs[0].code, '775533');
  });

  it('a message past 256 KB goes through the spool and is stored whole; one over the server\'s SMTP size or Resend\'s request limit gets a 413 in Resend\'s shape', async () => {
    const big = Buffer.alloc(700 * 1024, 7);
    const r = await post('/emails', { from: 'a@acme.test', to: 'big@inbox.test', subject: 'Big', text: 'big', attachments: [{ filename: 'big.bin', content: big.toString('base64') }] });
    assert.equal(r.status, 200, r.text);
    const m = await onlyMessage(h, 'big');
    assert.equal(m.attachments[0].size, big.length);
    const file = await h.call('GET', `/api/v2/domains/${DOMAIN}/inboxes/big/messages/${m.id}/attachments/${m.attachments[0].attachment_id}`);
    assert.ok(file.bytes.equals(big));
    await h.close();

    h = await startProviders({ maxMessageBytes: 200 * 1024 });
    const over = await post('/emails', { from: 'a@acme.test', to: 'big@inbox.test', subject: 'Big', text: 'big', attachments: [{ filename: 'big.bin', content: big.toString('base64') }] });
    assert.equal(over.status, 413);
    assert.equal(over.json.statusCode, 413);
    assert.equal(over.json.name, 'validation_error');
    assert.match(over.json.message, /more than this server's limit of 204800 bytes/);
    assert.equal((await readInbox(h, 'big')).length, 0);
    // Declared larger than Resend's 40 MB: refused before a byte of it is read.
    const declared = await h.call('POST', '/emails', { body: '{}', headers: { authorization: `Bearer ${PROVIDER_KEY}`, 'content-length': String(41 * 1024 * 1024) } });
    assert.equal(declared.status, 413);
    assert.equal(declared.json.name, 'validation_error');
    assert.equal((await h.call('GET', '/healthz')).status, 200);
  });
  it('a 20 MB text is composed on a MIME worker, not the event loop: /healthz answers meanwhile and the message is stored intact (issue 35 G5)', async function () {
    this.timeout(180_000);
    await h.close();
    const spool = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-g5-spool-'));
    // Quoted-printable makes ~28 MB of it: past the default 25 MB SMTP size.
    h = await startProviders({ spoolDir: spool, maxMessageBytes: 64 * 1024 * 1024 });
    resend = new Resend(PROVIDER_KEY, { baseUrl: h.base });
    // Lines of varied text, non-ASCII included, so quoted-printable has work to do.
    const line = 'Grüße, the quick brown fox = jumps over the lazy dog 0123456789 — ';
    const text = Array.from({ length: Math.ceil((20 * 1024 * 1024) / (line.length + 8)) }, (_, i) => `${i} ${line}`).join('\n');
    const composedBefore = mimeJobsDone.composeMail ?? 0;
    const prober = probeHealthz(h, 5);
    const t0 = performance.now();
    const sent = await resend.emails.send({ from: 'a@acme.test', to: 'huge@inbox.test', subject: 'Huge', text });
    const sendMs = performance.now() - t0;
    const health = await prober.stop();
    assert.equal(sent.error, null, JSON.stringify(sent.error));
    assert.equal((mimeJobsDone.composeMail ?? 0) - composedBefore, 1, 'the message was composed by a worker thread');
    console.log(`      20 MB Resend text: send ${sendMs.toFixed(0)} ms; /healthz meanwhile n=${health.length}, max ${(health[health.length - 1] ?? NaN).toFixed(1)} ms (load ${os.loadavg()[0].toFixed(2)})`);

    const list = await h.call('GET', `/api/v2/domains/${DOMAIN}/inboxes/huge`);
    assert.equal(list.json.msgs.length, 1);
    const raw = await h.call('GET', `/api/v2/domains/${DOMAIN}/inboxes/huge/messages/${list.json.msgs[0].id}/raw`);
    const parsed = await PostalMime.parse(raw.bytes);
    assert.equal(parsed.subject, 'Huge');
    assert.equal(parsed.text?.replace(/\r\n/g, '\n').replace(/\n$/, ''), text);
    // Nothing is left in the spool once the message is stored.
    assert.deepEqual(await fs.readdir(spool), []);
    await fs.rm(spool, { recursive: true, force: true });
  });
});
