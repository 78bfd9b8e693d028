// Big messages on the real server in a child process:
// - ten 24 MB messages sent at once are all stored while the server's RSS stays within
//   150 MB of idle (bodies stream to spool files; one shared budget bounds what is in memory);
// - while …/links of an 18 MB HTML message with 200k links is being worked out (on a worker
//   thread), /healthz and an SMTP delivery both complete.
// Sizes and the RSS bound come from the issue; no time is asserted. With
// TEST_INBOX_TEST_STORE=postgres (npm run test:node:postgres) the server keeps its mail in a
// fresh database of the throwaway cluster: spooled bodies go in through large objects in pieces.
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { BIG_MESSAGE_BYTES, BIG_MESSAGES, HUGE_HTML_LINKS, hugeHtmlMessage } from '../../bench/harden';
import { buildMessage, sendOne } from '../../bench/lib/smtp-load';
import { sharedCluster } from '../support/postgres';
import { STORE_KIND } from './api-harness';
import { type Running, startCli } from './cliProcess';

const API = 'big-api-token-3e8a';
const WEBHOOK = 'big-webhook-token-6d1c';
/** The bound the issue allows a test to assert on the peak. */
const PEAK_RISE_MB = 150;
/** Before reads had a byte budget, 40 concurrent reads of one 20 MB message took the server from 102 MB to 1.7 GB. */
const CONCURRENT_READS = 40;
const READ_MESSAGE_MB = 20;
/** 15 MB of attachment is a 20 MB message in base64. */
const READ_ATTACHMENT_BYTES = 15 * 1024 * 1024;
/** Generous (measured ~300 MB: one read at a time, plus what the MIME workers keep; before the read budget ~1.5 GB). */
const READ_PEAK_RISE_MB = 600;

function rssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

describe('big messages on the real server', function () {
  this.timeout(300_000);
  let dataDir: string;
  let server: Running;
  let smtpPort: number;
  let http: string;

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-big-'));
    const store = STORE_KIND === 'postgres' ? ['--store', await (await sharedCluster()).createDatabase()] : [];
    server = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--api-token', API, '--webhook-token', WEBHOOK, '--max-messages', '0', ...store]);
    const ready = await server.ready;
    smtpPort = Number(ready.smtp.split(':').pop());
    http = ready.http;
  });
  after(async () => {
    await server?.stop();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it(`stores ${BIG_MESSAGES} concurrent 24 MB messages with RSS at most ${PEAK_RISE_MB} MB over idle`, async () => {
    const pid = server.child.pid!;
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = rssMb(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    const message = buildMessage(BIG_MESSAGE_BYTES, 'big@sender.test', 'big@inbox.test', 'big one');
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    try {
      const sent = await Promise.all(
        Array.from({ length: BIG_MESSAGES }, () => transport.sendMail({ envelope: { from: 'big@sender.test', to: ['big@inbox.test'] }, raw: message })),
      );
      for (const s of sent) assert.match(s.response, /^250 /);
    } finally {
      clearInterval(sampler);
      transport.close();
    }
    peak = Math.max(peak, rssMb(pid));
    assert.ok(peak - idle <= PEAK_RISE_MB, `RSS rose from ${idle.toFixed(0)} MB to ${peak.toFixed(0)} MB`);
    const list = (await (await fetch(`${http}/api/v2/domains/private/inboxes/big?limit=50`, { headers: { authorization: API } })).json()) as { msgs: Array<{ id: string }> };
    assert.equal(list.msgs.length, BIG_MESSAGES);
    const raw = await fetch(`${http}/api/v2/domains/private/inboxes/big/messages/${list.msgs[0].id}/raw`, { headers: { authorization: API } });
    assert.deepEqual(Buffer.from(await raw.arrayBuffer()), message);
    // Nothing is left in the spool once every message is stored.
    assert.deepEqual(await fs.readdir(path.join(dataDir, '.spool')).catch(() => []), []);
  });

  it('answers /healthz and an SMTP delivery while the links of an 18 MB HTML message are worked out', async () => {
    const to = 'huge@inbox.test';
    const stored = await sendOne('127.0.0.1', smtpPort, to, hugeHtmlMessage(to));
    assert.equal(stored.code, 250, stored.text);
    const id = /stored as (\S+)/.exec(stored.text)![1];
    const order: string[] = [];
    const links = fetch(`${http}/api/v2/domains/private/inboxes/huge/messages/${id}/links`, { headers: { authorization: API } }).then(async (r) => {
      order.push('links');
      return { status: r.status, body: (await r.json()) as { links: string[] } };
    });
    // Give the links request a moment to reach the server and start.
    await new Promise((r) => setTimeout(r, 200));
    const health = fetch(`${http}/healthz`).then((r) => {
      order.push('healthz');
      return r.status;
    });
    const delivery = sendOne('127.0.0.1', smtpPort, 'during@inbox.test').then((r) => {
      order.push('smtp');
      return r.code;
    });
    assert.equal(await health, 200);
    assert.equal(await delivery, 250);
    const done = await links;
    assert.equal(done.status, 200);
    assert.equal(done.body.links.length, HUGE_HTML_LINKS);
    assert.deepEqual(order.slice(0, 2).sort(), ['healthz', 'smtp'], `finished in the order ${order.join(', ')}`);
  });

  it(`keeps RSS bounded while ${CONCURRENT_READS} clients read one ${READ_MESSAGE_MB} MB message at once, each whole`, async () => {
    // A message with a big attachment: raw, the attachment and the message view are read at once.
    const attachment = randomBytes(READ_ATTACHMENT_BYTES);
    const to = 'readers@inbox.test';
    const message = await new MailComposer({
      from: 'big@sender.test',
      to,
      subject: 'read by many',
      text: 'See the attachment.',
      attachments: [{ filename: 'data.bin', content: attachment, contentType: 'application/octet-stream' }],
    })
      .compile()
      .build();
    assert.ok(message.length > 19 * 1024 * 1024, `the message is ${message.length} bytes`);
    const stored = await sendOne('127.0.0.1', smtpPort, to, message);
    assert.equal(stored.code, 250, stored.text);
    const id = /stored as (\S+)/.exec(stored.text)![1];
    const base = `${http}/api/v2/domains/private/inboxes/readers/messages/${id}`;
    const list = (await (await fetch(`${base}/attachments`, { headers: { authorization: API } })).json()) as { attachments: Array<{ attachment_id: number }> };
    const attachmentUrl = `${base}/attachments/${list.attachments[0].attachment_id}`;

    const pid = server.child.pid!;
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = rssMb(pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    const views = ['raw', 'attachment', 'message'] as const;
    let results: Array<{ view: (typeof views)[number]; status: number; bytes: Buffer }>;
    try {
      results = await Promise.all(
        Array.from({ length: CONCURRENT_READS }, async (_, i) => {
          const view = views[i % views.length];
          const url = view === 'raw' ? `${base}/raw` : view === 'attachment' ? attachmentUrl : base;
          const r = await fetch(url, { headers: { authorization: API } });
          return { view, status: r.status, bytes: Buffer.from(await r.arrayBuffer()) };
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssMb(pid));
    for (const r of results) {
      assert.equal(r.status, 200, `${r.view}: ${r.bytes.subarray(0, 200).toString()}`);
      if (r.view === 'raw') assert.ok(r.bytes.equals(message), 'raw is the whole message');
      if (r.view === 'attachment') assert.ok(r.bytes.equals(attachment), 'the attachment is whole');
      if (r.view === 'message') assert.equal((JSON.parse(r.bytes.toString('utf8')) as { subject: string }).subject, 'read by many');
    }
    assert.ok(peak - idle <= READ_PEAK_RISE_MB, `RSS rose from ${idle.toFixed(0)} MB to ${peak.toFixed(0)} MB while ${CONCURRENT_READS} clients read`);
  });
});
