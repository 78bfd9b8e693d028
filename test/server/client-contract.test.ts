// Contract tests: the API client against the REAL local server as `test-inbox serve` composes
// it (startInboxServer: Maildir store in a temp dir, HTTP API and SMTP on port 0), with mail
// sent over SMTP by nodemailer. Every method of InboxApi is exercised here.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import type { Message } from '../../src/core/wire';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import type { InboxApi, StreamState } from '../../src/api/types';
import { webhookUrls } from '../../src/api/webhooks';
import { parseMessageId } from '../../src/core/ids';
import type { StreamEvent } from '../../src/core/wire';
import { startInboxServer, type InboxServer } from '../../src/server/server';

const API_TOKEN = 'contract-api-token-5b2e9f';
const WEBHOOK_TOKEN = 'contract-wh-token-7c1d3a';
const DOMAIN = 'inbox.test';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const PDF = Buffer.from('%PDF-1.4 not really a pdf, but exact bytes matter');

async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    assert.ok(ApiError.is(e), `expected an ApiError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the call to fail');
}

describe('API client against the local server', () => {
  let dir: string;
  let server: InboxServer;
  let base: string;
  let client: InboxApi;
  const logs: string[] = [];

  function sendMail(to: string, over: Partial<nodemailer.SendMailOptions> = {}): Promise<unknown> {
    const transport = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    return transport.sendMail({
      from: '"Acme Support" <support@acme.test>',
      to,
      subject: 'Welcome, Joe',
      text: 'Hello Joe,\nyour code is 482913.\nhttps://acme.test/verify?c=482913',
      html: '<p>Your code is <b>482913</b>. <a href="https://acme.test/verify?c=482913">Verify</a></p>',
      attachments: [
        { filename: 'invoice.pdf', content: PDF, contentType: 'application/pdf' },
        { filename: 'logo.png', content: PNG, contentType: 'image/png' },
      ],
      ...over,
    });
  }

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-client-contract-'));
    server = await startInboxServer({
      host: '127.0.0.1',
      httpPort: 0,
      smtpPort: 0,
      dataDir: dir,
      apiToken: API_TOKEN,
      webhookToken: WEBHOOK_TOKEN,
      defaultDomain: DOMAIN,
      log: (_l, m) => logs.push(m),
    });
    base = server.httpUrl;
    client = createClient({ baseUrl: base, apiToken: API_TOKEN, log: (_l, m) => logs.push(m), stream: { initialDelayMs: 50, maxDelayMs: 500 } });
  });

  after(async () => {
    await client?.dispose();
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
    for (const l of logs) assert.ok(!l.includes(API_TOKEN) && !l.includes(WEBHOOK_TOKEN), `token in a log line: ${l}`);
  });

  it('reads the health of the server', async () => {
    const h = await client.health();
    assert.equal(h.service, 'test-inbox');
    assert.equal(h.status, 'ok');
    assert.match(h.version, /^\d+\.\d+\.\d+/);
  });

  it('lists, fetches, links, attachments and raw of a mail sent over SMTP', async () => {
    await sendMail(`joe@${DOMAIN}`);
    const listing = await client.listInbox('private', 'joe');
    assert.equal(listing.to, 'joe');
    assert.equal(listing.msgs.length, 1);
    const summary = listing.msgs[0];
    assert.equal(summary.subject, 'Welcome, Joe');
    assert.equal(summary.to, 'joe');
    assert.equal(summary.domain, DOMAIN);
    assert.match(summary.from, /support@acme\.test/);
    assert.equal(parseMessageId(summary.id)?.inbox, 'joe');

    const msg = await client.getMessage('private', 'joe', summary.id);
    assert.equal(msg.kind, 'email');
    if (msg.kind !== 'email') return;
    assert.equal(msg.id, summary.id);
    assert.equal(msg.subject, 'Welcome, Joe');
    assert.match(msg.fromfull, /support@acme\.test/);
    assert.ok(msg.headers['content-type'], 'headers carry content-type');
    assert.ok(msg.parts.some((p) => p.body.includes('482913')));

    const links = await client.getLinks(DOMAIN, 'joe', summary.id);
    assert.ok(links.includes('https://acme.test/verify?c=482913'), JSON.stringify(links));

    const atts = await client.listAttachments(DOMAIN, 'joe', summary.id);
    assert.deepEqual(
      atts.map((a) => a.filename),
      ['invoice.pdf', 'logo.png'],
    );
    const pdf = atts.find((a) => a.filename === 'invoice.pdf')!;
    assert.equal(pdf.size, PDF.length);
    const file = await client.downloadAttachment(DOMAIN, 'joe', summary.id, pdf.attachment_id);
    assert.deepEqual(Buffer.from(file.bytes), PDF);
    assert.equal(file.filename, 'invoice.pdf');
    assert.match(file.contentType, /^application\/pdf/);
    const png = await client.downloadAttachment(DOMAIN, 'joe', summary.id, atts.find((a) => a.filename === 'logo.png')!.attachment_id);
    assert.deepEqual(Buffer.from(png.bytes), PNG);

    const raw = await client.getRaw(DOMAIN, 'joe', summary.id);
    assert.match(raw, /^Subject: Welcome, Joe\r?$/m);
  });

  it('lists the domains with their counts', async () => {
    const { domains } = await client.listDomains();
    const d = domains.find((x) => x.name === DOMAIN);
    assert.ok(d, JSON.stringify(domains));
    assert.ok(d.inboxes >= 1 && d.messages >= 1);
  });

  it('injects messages and pages through them with limit, skip, sort and cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await client.inject('private', 'pager', { from: 'ci@acme.test', subject: `n${i}`, text: `body ${i}` });
      assert.equal(r.status, 'ok');
      assert.equal(parseMessageId(r.id)?.inbox, 'pager');
      ids.push(r.id);
    }
    const newest = await client.listInbox('private', 'pager', { limit: 2 });
    assert.deepEqual(
      newest.msgs.map((m) => m.subject),
      ['n4', 'n3'],
    );
    assert.ok(newest.cursor, 'a cursor when there is a next page');
    const next = await client.listInbox('private', 'pager', { limit: 2, cursor: newest.cursor });
    assert.deepEqual(
      next.msgs.map((m) => m.subject),
      ['n2', 'n1'],
    );
    const oldest = await client.listInbox(DOMAIN, 'pager', { sort: 'ascending', skip: 1, limit: 2 });
    assert.deepEqual(
      oldest.msgs.map((m) => m.subject),
      ['n1', 'n2'],
    );
    const all = await client.listInbox(DOMAIN, 'pager', { limit: 500 });
    assert.equal(all.msgs.length, 5);
    assert.equal(all.cursor, undefined, 'no cursor on the last page');
    const injected = await client.getMessage('private', 'pager', ids[0]);
    assert.equal(injected.kind, 'email');
    assert.ok(injected.parts.some((p) => p.body.includes('body 0')));
  });

  it('reads every inbox of a domain through the * inbox', async () => {
    const listing = await client.listInbox(DOMAIN, '*', { limit: 500 });
    const inboxes = new Set(listing.msgs.map((m) => m.to));
    assert.ok(inboxes.has('joe') && inboxes.has('pager'), [...inboxes].join(','));
  });

  it('returns an SMS inbox message as kind sms', async () => {
    const r = await client.inject('private', '14155550100', { from: '12025550143', subject: 'OTP', text: 'Your code is 902114' });
    const msg: Message = await client.getMessage('private', '14155550100', r.id);
    assert.equal(msg.kind, 'sms');
    assert.equal(msg.id, r.id);
    assert.equal(msg.to, '14155550100');
    assert.ok(msg.parts.some((p) => p.body.includes('902114')));
  });

  it('delivers a webhook through each of the four URL forms', async () => {
    const urls = webhookUrls(base, { token: WEBHOOK_TOKEN, domain: DOMAIN, inbox: 'hooks' });
    assert.equal(urls.length, 4);
    for (const u of urls) {
      const r = await client.deliverWebhook(u.url, { from: 'twilio', subject: u.form, text: `via ${u.form}`, to: 'hooks' });
      assert.equal(r.status, 'ok', u.form);
      assert.ok(r.id, `the local server names the delivered message (${u.form})`);
      const msg = await client.getMessage('private', 'hooks', r.id);
      assert.equal(msg.subject, u.form);
    }
    const listing = await client.listInbox(DOMAIN, 'hooks');
    assert.equal(listing.msgs.length, 4);
  });

  it('lets the path inbox of a webhook override the payload to (docs/api.md §4.5 rule 3)', async () => {
    const [tokenInPath] = webhookUrls(base, { token: WEBHOOK_TOKEN, inbox: 'override' });
    const r = await client.deliverWebhook(tokenInPath.url, { text: 'x', to: 'elsewhere' });
    assert.ok(r.id, 'the local server names the delivered message');
    assert.equal(parseMessageId(r.id)?.inbox, 'override');
    const msg = await client.getMessage('private', 'override', r.id);
    assert.ok(msg.subject.length > 0, 'a dummy subject is inserted');
  });

  it('reports a wrong webhook token as unauthorized', async () => {
    const [u] = webhookUrls(base, { token: 'not-the-webhook-token', inbox: 'hooks' });
    const err = await rejection(client.deliverWebhook(u.url, { text: 'x' }));
    assert.equal(err.code, 'unauthorized');
    assert.ok(!err.message.includes('not-the-webhook-token'));
  });

  it('deletes a message and then reports it as not found', async () => {
    const r = await client.inject('private', 'deleteme', { subject: 'bye', text: 'x' });
    const res = await client.deleteMessage('private', 'deleteme', r.id);
    assert.deepEqual(res, { status: 'ok', count: 1 });
    const err = await rejection(client.getMessage('private', 'deleteme', r.id));
    assert.equal(err.code, 'not_found');
    assert.equal((await rejection(client.deleteMessage('private', 'deleteme', r.id))).code, 'not_found');
  });

  it('clears an inbox and says how many messages went', async () => {
    for (let i = 0; i < 3; i++) await client.inject('private', 'clearme', { text: `m${i}` });
    const res = await client.clearInbox(DOMAIN, 'clearme');
    assert.deepEqual(res, { status: 'ok', count: 3 });
    assert.equal((await client.listInbox(DOMAIN, 'clearme')).msgs.length, 0);
  });

  it('long-polls with wait until a message arrives', async () => {
    const waiting = client.listInbox('private', 'latecomer', { wait: 10 });
    await new Promise((r) => setTimeout(r, 200));
    await client.inject('private', 'latecomer', { subject: 'finally', text: 'x' });
    const listing = await waiting;
    assert.deepEqual(
      listing.msgs.map((m) => m.subject),
      ['finally'],
    );
  });

  it('pushes message and delete events on the stream', async () => {
    const events: StreamEvent[] = [];
    const states: StreamState[] = [];
    const sub = client.subscribe(DOMAIN, 'streamed', { onEvent: (e) => events.push(e), onState: (s) => states.push(s) });
    try {
      await until(() => sub.state === 'open', 'the stream to open');
      const r = await client.inject('private', 'streamed', { subject: 'pushed', text: 'x' });
      await client.inject('private', 'not-this-one', { subject: 'other inbox', text: 'x' });
      await until(() => events.some((e) => e.type === 'message'), 'a message event');
      const ev = events.find((e) => e.type === 'message')!;
      assert.equal(ev.msg?.id, r.id);
      assert.equal(ev.msg?.subject, 'pushed');
      await client.deleteMessage('private', 'streamed', r.id);
      await until(() => events.some((e) => e.type === 'delete'), 'a delete event');
      assert.deepEqual(events.find((e) => e.type === 'delete')!.ids, [r.id]);
      assert.ok(events.every((e) => e.inbox === 'streamed'), 'only the subscribed inbox');
      assert.deepEqual(states, ['connecting', 'open']);
    } finally {
      sub.dispose();
    }
  });

  it('rejects a wrong or missing API token as unauthorized', async () => {
    const wrong = createClient({ baseUrl: base, apiToken: 'wrong-token' });
    const none = createClient({ baseUrl: base });
    try {
      const e1 = await rejection(wrong.listInbox('private', 'joe'));
      assert.equal(e1.code, 'unauthorized');
      assert.match(e1.message, /Set a valid token/);
      const e2 = await rejection(none.listInbox('private', 'joe'));
      assert.equal(e2.code, 'unauthorized');
      assert.match(e2.message, /Set the API token/);
      let closedWith: Error | undefined;
      const sub = wrong.subscribe(DOMAIN, undefined, {
        onEvent: () => undefined,
        onState: (s, err) => {
          if (s === 'closed') closedWith = err;
        },
      });
      await until(() => sub.state === 'closed', 'the stream to close');
      assert.ok(ApiError.is(closedWith, 'unauthorized'));
    } finally {
      await wrong.dispose();
      await none.dispose();
    }
  });

  it('reports an unknown message id as notFound', async () => {
    const err = await rejection(client.getMessage('private', 'joe', 'joe-1000000000-999999'));
    assert.equal(err.code, 'not_found');
  });
});

describe('API client across a local server restart', () => {
  it('reconnects the push stream when the server comes back on the same port, keeping the data', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-client-restart-'));
    const options = { host: '127.0.0.1', smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, defaultDomain: DOMAIN };
    let server = await startInboxServer({ ...options, httpPort: 0 });
    const client = createClient({ baseUrl: server.httpUrl, apiToken: API_TOKEN, stream: { initialDelayMs: 50, maxDelayMs: 300 } });
    const states: StreamState[] = [];
    const events: StreamEvent[] = [];
    const sub = client.subscribe(DOMAIN, 'restart', { onEvent: (e) => events.push(e), onState: (s) => states.push(s) });
    try {
      await until(() => sub.state === 'open', 'the stream to open');
      const before = await client.inject('private', 'restart', { subject: 'before', text: 'x' });
      await server.close();
      await until(() => sub.state === 'reconnecting', 'the stream to notice the restart');
      server = await startInboxServer({ ...options, httpPort: server.httpPort });
      await until(() => sub.state === 'open', 'the stream to reopen');
      const after = await client.inject('private', 'restart', { subject: 'after', text: 'x' });
      await until(() => events.some((e) => e.msg?.id === after.id), 'the event after the restart');
      assert.deepEqual(states.slice(0, 3), ['connecting', 'open', 'reconnecting']);
      assert.equal(states.at(-1), 'open');
      const listing = await client.listInbox(DOMAIN, 'restart');
      assert.deepEqual(
        listing.msgs.map((m) => m.id),
        [after.id, before.id],
      );
    } finally {
      sub.dispose();
      await client.dispose();
      await server.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
