import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { buildMessage } from '../../bench/lib/smtp-load';
import { createSmtpServer, type InboxSmtpServer, STORED_REPLY_PREFIX } from '../../src/server/smtp/smtp';
import { ByteBudget } from '../../src/server/budget';
import { SPOOL_THRESHOLD_BYTES } from '../../src/server/spool';
import type { Store } from '../../src/server/store/types';
import { makeStore, ON_MAILDIR } from './api-harness';

const all = { limit: 1000, skip: 0, sort: 'descending' as const };

/** A minimal SMTP client speaking the dialogue line by line, to check exact reply codes. */
class RawSmtp {
  private buf = '';
  private waiters: Array<() => void> = [];
  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buf += d;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async connect(port: number): Promise<{ client: RawSmtp; greeting: string }> {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new RawSmtp(socket);
    return { client, greeting: await client.reply() };
  }

  /** The next complete (possibly multi-line) reply. */
  async reply(): Promise<string> {
    for (;;) {
      const m = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(this.buf);
      if (m) {
        this.buf = this.buf.slice(m[0].length);
        return m[0];
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async send(line: string): Promise<string> {
    this.socket.write(line + '\r\n');
    return this.reply();
  }

  /** Sends bytes without waiting for a reply (a message body, say). */
  write(text: string): void {
    this.socket.write(text);
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('SMTP ingest', () => {
  let dir: string;
  let store: Store;
  let smtp: InboxSmtpServer;
  let port: number;

  async function start(maxMessageBytes?: number, spoolDir?: string): Promise<void> {
    store = await makeStore(dir, () => undefined);
    await store.open();
    smtp = createSmtpServer({ store, host: '127.0.0.1', port: 0, maxMessageBytes, ...(spoolDir ? { spoolDir } : {}) });
    port = (await smtp.start()).port;
  }

  function transport(extra: Record<string, unknown> = {}) {
    return nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, ...extra });
  }

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-smtp-'));
  });

  afterEach(async () => {
    await smtp?.stop();
    await store?.close();
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it('delivers each recipient name@domain into inbox name of that domain and answers with the stored ids', async () => {
    await start();
    const info = await transport().sendMail({
      from: 'Acme <no-reply@acme.test>',
      to: ['Joe@Inbox.TEST', 'ann@other.test'],
      subject: 'Your code',
      text: 'Your code is 123456',
    });
    const joe = (await store.list('inbox.test', 'joe', all)).msgs;
    const ann = (await store.list('other.test', 'ann', all)).msgs;
    assert.equal(joe.length, 1);
    assert.equal(ann.length, 1);
    assert.equal(joe[0].subject, 'Your code');
    assert.equal(joe[0].from, 'Acme <no-reply@acme.test>');
    assert.equal(joe[0].source, 'smtp');
    assert.match(info.response, new RegExp(`^250 ${STORED_REPLY_PREFIX} `));
    assert.ok(info.response.includes(joe[0].id) && info.response.includes(ann[0].id));
    const raw = (await store.readRaw(joe[0].id)).toString();
    assert.match(raw, /Your code is 123456/);
  });

  it('stores one copy per recipient inbox when the same address is given twice', async () => {
    await start();
    await transport().sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', cc: 'JOE@inbox.test', bcc: 'ann@inbox.test', subject: 's', text: 't' });
    assert.equal((await store.list('inbox.test', 'joe', all)).total, 1);
    assert.equal((await store.list('inbox.test', 'ann', all)).total, 1);
  });

  it('a client that leaves in the middle of a message leaves no bytes held, no spool file and nothing stored', async () => {
    const spoolDir = path.join(dir, 'spool');
    store = await makeStore(dir, () => undefined);
    await store.open();
    const budget = new ByteBudget();
    smtp = createSmtpServer({ store, host: '127.0.0.1', port: 0, spoolDir, budget });
    port = (await smtp.start()).port;
    for (const bytes of [2_000, SPOOL_THRESHOLD_BYTES * 2]) {
      const { client } = await RawSmtp.connect(port);
      assert.match(await client.send('EHLO test.local'), /^250/);
      assert.match(await client.send('MAIL FROM:<a@acme.test>'), /^250/);
      assert.match(await client.send('RCPT TO:<joe@inbox.test>'), /^250/);
      assert.match(await client.send('DATA'), /^354/);
      client.write(`Subject: half\r\n\r\n${'x'.repeat(bytes)}\r\n`);
      // Until the server has the bytes (held in memory, or in a spool file).
      for (let i = 0; i < 200 && budget.inUse === 0 && (await fs.readdir(spoolDir).catch(() => [])).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      client.close();
      for (let i = 0; i < 200 && (budget.inUse > 0 || (await fs.readdir(spoolDir).catch(() => [])).length > 0); i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(budget.inUse, 0, `no bytes held after a ${bytes}-byte half message`);
      assert.deepEqual(await fs.readdir(spoolDir).catch(() => []), [], 'no spool file left');
    }
    assert.equal((await store.list('inbox.test', 'joe', all)).total, 0, 'nothing stored');
    // And the server goes on.
    await transport().sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'after', text: 'still here' });
    assert.equal((await store.list('inbox.test', 'joe', all)).total, 1);
  });

  it('refuses a recipient whose inbox name is not acceptable with 550 and says why', async () => {
    await start();
    const { client } = await RawSmtp.connect(port);
    try {
      assert.match(await client.send('EHLO test.local'), /^250/);
      assert.match(await client.send('MAIL FROM:<a@acme.test>'), /^250/);
      assert.match(await client.send('RCPT TO:<x/y@inbox.test>'), /^550 .*must not be a path/);
      assert.match(await client.send('RCPT TO:<*@inbox.test>'), /^550 .*cannot receive/);
      assert.match(await client.send(`RCPT TO:<${'x'.repeat(65)}@inbox.test>`), /^550 .*longer than 64/);
      assert.match(await client.send('RCPT TO:<joe@[127.0.0.1]>'), /^550 .*host name/);
      assert.match(await client.send('RCPT TO:<postmaster>'), /^550 .*name@domain/);
      assert.match(await client.send('RCPT TO:<joe@inbox.test>'), /^250/);
      assert.match(await client.send('DATA'), /^354/);
      const reply = await client.send('From: a@acme.test\r\nSubject: mixed\r\n\r\nbody\r\n.');
      assert.match(reply, /^250 /);
    } finally {
      client.close();
    }
    assert.deepEqual((await store.inboxes(undefined)).map((i) => i.inbox), ['joe']);
  });

  it('advertises the size limit and answers 552 to a message over it, storing nothing', async () => {
    await start(2000);
    const { client } = await RawSmtp.connect(port);
    try {
      const ehlo = await client.send('EHLO test.local');
      assert.match(ehlo, /SIZE 2000/);
      assert.doesNotMatch(ehlo, /STARTTLS/);
      assert.match(await client.send('MAIL FROM:<a@acme.test> SIZE=5000'), /^552/);
    } finally {
      client.close();
    }
    await assert.rejects(
      transport().sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'big', text: 'x'.repeat(5000) }),
      (e: { responseCode?: number }) => e.responseCode === 552,
    );
    assert.equal((await store.list(undefined, '*', all)).total, 0);
    // The connection stays usable for a message within the limit.
    await transport().sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'small', text: 'ok' });
    assert.equal((await store.list(undefined, '*', all)).total, 1);
  });

  it('stores a body spooled to a file byte for byte in every recipient inbox, indexed from its head, and removes the spool file', async () => {
    const spoolDir = path.join(dir, 'spool');
    await start(undefined, spoolDir);
    // Well past the spool threshold and not a whole number of the PostgreSQL store's 256 KB pieces.
    const raw = buildMessage(12 * SPOOL_THRESHOLD_BYTES + 12_345, 'big@acme.test', 'joe@inbox.test', 'Spooled one');
    const info = await transport().sendMail({ envelope: { from: 'big@acme.test', to: ['joe@inbox.test', 'ann@other.test'] }, raw });
    assert.match(info.response, /^250 /);
    const metas = [...(await store.list('inbox.test', 'joe', all)).msgs, ...(await store.list('other.test', 'ann', all)).msgs];
    assert.equal(metas.length, 2);
    for (const m of metas) {
      assert.equal(m.size, raw.length);
      assert.equal(m.subject, 'Spooled one');
      assert.equal(m.code, '482913');
      assert.ok((await store.readRaw(m.id)).equals(raw), `${m.inbox}'s copy is the message byte for byte`);
    }
    assert.deepEqual(await fs.readdir(spoolDir), [], 'no spool file is left');
  });

  it('answers 451 when the store cannot keep the message and leaves no partial copy', async function () {
    // The fault is a Maildir's (PostgreSQL's lost database is test/server/team.test.ts).
    if (!ON_MAILDIR) this.skip();
    await start();
    await fs.writeFile(path.join(dir, 'mail', 'blocked.test'), 'a file where a domain directory would go');
    await assert.rejects(
      transport().sendMail({ from: 'a@acme.test', to: ['joe@ok.test', 'ann@blocked.test'], subject: 's', text: 't' }),
      (e: { responseCode?: number }) => e.responseCode === 451,
    );
    assert.equal((await store.list(undefined, '*', all)).total, 0);
    assert.deepEqual(await fs.readdir(path.join(dir, 'mail', 'ok.test', 'joe', 'new')), []);
  });

  it('accepts any AUTH credentials, and no AUTH at all', async () => {
    await start();
    await transport({ auth: { user: 'whoever', pass: 'anything' } }).sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'with auth', text: 't' });
    await transport().sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'without auth', text: 't' });
    assert.deepEqual((await store.list('inbox.test', 'joe', all)).msgs.map((m) => m.subject).sort(), ['with auth', 'without auth']);
  });

  it('stores every message sent over several pooled connections, each with its own id', async () => {
    await start();
    const pool = transport({ pool: true, maxConnections: 8 });
    try {
      const infos = await Promise.all(
        Array.from({ length: 60 }, (_, i) => pool.sendMail({ from: 'a@acme.test', to: `u${i % 5}@inbox.test`, subject: `m${i}`, text: 'x'.repeat(4096) })),
      );
      assert.equal(infos.length, 60);
    } finally {
      pool.close();
    }
    const msgs = (await store.list('inbox.test', '*', all)).msgs;
    assert.equal(msgs.length, 60);
    assert.deepEqual(new Set(msgs.map((m) => m.subject)).size, 60);
  });
});
