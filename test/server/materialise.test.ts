// The durability rule: a message is acknowledged once its bytes are in the
// fdatasynced write-ahead log, and its `.eml` is written afterwards by the materialiser. These
// tests hold the materialiser back (its test hook) and check that an acknowledged message is
// readable everywhere meanwhile, that a delete before its file exists does not bring it back,
// and that a process killed with SIGKILL while nothing was materialised loses nothing on restart.

import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { STORED_REPLY_PREFIX } from '../../src/server/smtp/smtp';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { firstLineThenSigkill } from './killedChild';

const REPO = path.resolve(__dirname, '..', '..');
const TOKENS = { apiToken: 'materialise-api-token-0000', webhookToken: 'materialise-webhook-tok-00', twilioAuthToken: 'materialise-twilio-token-0' };
const AUTH = { authorization: TOKENS.apiToken };

async function emlFiles(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'mail');
  if (!existsSync(root)) return [];
  const out: string[] = [];
  for (const e of await fs.readdir(root, { recursive: true, withFileTypes: true })) if (e.isFile() && e.name.endsWith('.eml')) out.push(path.join(e.parentPath, e.name));
  return out;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the materialiser (files written after the acknowledgement)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer | undefined;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-materialise-'));
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('serves a message acknowledged over SMTP before its file exists: list, message, raw, links, attachments, wait= and the push stream', async () => {
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...TOKENS, defaultDomain: 'inbox.test', durability: 'strict' });
    const release = (server.store as MaildirStore).holdMaterialiser();
    const base = `${server.httpUrl}/api/v2/domains/inbox.test`;

    // The push stream is open before the message comes.
    const stream = await fetch(`${base}/stream/joe`, { headers: { ...AUTH, accept: 'text/event-stream' } });
    assert.equal(stream.status, 200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let streamed = '';
    const sawOnStream = (id: string): Promise<void> =>
      (async () => {
        while (!streamed.includes(id)) {
          const { value, done } = await reader.read();
          if (done) throw new Error('stream ended');
          streamed += Buffer.from(value).toString('utf8');
        }
      })();
    // A long poll waiting for the message.
    const waiting = fetch(`${base}/inboxes/joe?wait=10s`, { headers: AUTH });

    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    const info = await transport.sendMail({
      from: 'a@acme.test',
      to: 'joe@inbox.test',
      subject: 'held back',
      text: 'Your code is 482913. Visit https://example.com/confirm?t=abc',
      attachments: [{ filename: 'note.txt', content: 'attached bytes' }],
    });
    transport.close();
    const response: string = info.response;
    assert.ok(response.startsWith(`250 ${STORED_REPLY_PREFIX} `), response);
    const id = response.slice(`250 ${STORED_REPLY_PREFIX} `.length).trim();
    assert.deepEqual(await emlFiles(dataDir), [], 'no .eml is written while the materialiser is held');

    await sawOnStream(id);
    const waited = (await (await waiting).json()) as { msgs: Array<{ id: string }> };
    assert.ok(waited.msgs.some((m) => m.id === id), 'wait= answers with the message');
    const list = (await (await fetch(`${base}/inboxes/joe`, { headers: AUTH })).json()) as { msgs: Array<{ id: string; subject: string }> };
    assert.deepEqual(
      list.msgs.map((m) => [m.id, m.subject]),
      [[id, 'held back']],
    );
    const message = await fetch(`${base}/inboxes/joe/messages/${id}`, { headers: AUTH });
    assert.equal(message.status, 200, await message.clone().text());
    assert.match(JSON.stringify(await message.json()), /482913/);
    const raw = await fetch(`${base}/messages/${id}/raw`, { headers: AUTH });
    assert.equal(raw.status, 200);
    const rawText = await raw.text();
    assert.match(rawText, /Subject: held back/);
    const links = await fetch(`${base}/messages/${id}/links`, { headers: AUTH });
    assert.equal(links.status, 200);
    assert.match(await links.text(), /example\.com\/confirm/);
    const atts = await fetch(`${base}/messages/${id}/attachments`, { headers: AUTH });
    assert.equal(atts.status, 200);
    const attList = (await atts.json()) as { attachments: Array<{ attachment_id: number; filename: string }> };
    assert.equal(attList.attachments[0]?.filename, 'note.txt');
    const att = await fetch(`${base}/messages/${id}/attachments/${attList.attachments[0].attachment_id}`, { headers: AUTH });
    assert.equal(att.status, 200);
    assert.equal(await att.text(), 'attached bytes');
    const code = await fetch(`${base}/inboxes/joe/code`, { headers: AUTH });
    assert.equal(code.status, 200);
    assert.match(await code.text(), /482913/);
    assert.deepEqual(await emlFiles(dataDir), [], 'still no .eml: every read above was served from memory');
    await reader.cancel();

    // Released, the file is written with exactly the acknowledged bytes.
    release();
    const file = (server.store as MaildirStore).pathOf({ domain: 'inbox.test', inbox: 'joe', id });
    await until('the file is written', async () => existsSync(file));
    assert.equal(await fs.readFile(file, 'utf8'), rawText);
  });

  it('does not bring back a message deleted (or dropped by retention) before its file was written, nor after a restart', async () => {
    const store = new MaildirStore({ dir: dataDir, retention: { maxMessages: 2, maxAgeMs: 0 }, checkpointIntervalMs: 0 });
    await store.open();
    const release = store.holdMaterialiser();
    const add = async (inbox: string, subject: string, extra: string[] = []) =>
      (await store.add([inbox, ...extra].map((i) => ({ domain: 'inbox.test', inbox: i })), Buffer.from(`From: a@b.test\r\nSubject: ${subject}\r\n\r\nbody ${subject}\r\n`), 'smtp')).map((m) => m.id);
    const [deleted] = await add('ann', 'deleted');
    const [kept] = await add('ann', 'kept');
    // One message to two inboxes: one copy deleted, the other kept (its file is written, no link to a missing one).
    const [sharedGone, sharedKept] = await add('bob', 'shared', ['cat']);
    // Retention keeps 2 per inbox: the first of dan's three goes before any file exists.
    const [old] = await add('dan', 'd1');
    await add('dan', 'd2');
    await add('dan', 'd3');
    assert.equal(await store.delete(deleted), true);
    assert.equal(await store.delete(sharedGone), true);
    await until('retention dropped the oldest of dan', async () => store.get(old) === undefined);
    await assert.rejects(store.readRaw(deleted), /no message/);
    assert.deepEqual(await emlFiles(dataDir), [], 'nothing written while held');
    release();
    await until('the kept files are written', async () => (await emlFiles(dataDir)).length === 4);
    const names = (await emlFiles(dataDir)).map((f) => path.basename(f, '.eml')).sort();
    assert.deepEqual(names, [kept, sharedKept, ...(await store.list('inbox.test', 'dan', { limit: 10, skip: 0, sort: 'descending' })).msgs.map((m) => m.id)].sort());
    await store.close();

    const again = new MaildirStore({ dir: dataDir, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0 });
    await again.open();
    try {
      for (const gone of [deleted, sharedGone, old]) assert.equal(again.get(gone), undefined, `${gone} stays deleted`);
      assert.ok(again.get(kept));
      assert.equal((await again.readRaw(sharedKept)).toString('utf8'), 'From: a@b.test\r\nSubject: shared\r\n\r\nbody shared\r\n');
    } finally {
      await again.close();
    }
  });

  it('a delete while held, then a SIGKILL: the message does not come back from the log', async () => {
    const { acked, deletedId } = await runChild(dataDir, 6, true);
    assert.ok(deletedId);
    const store = new MaildirStore({ dir: dataDir, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0 });
    await store.open();
    try {
      assert.equal(store.get(deletedId), undefined, 'the answered delete holds after the crash');
      for (const a of acked.filter((x) => x.id !== deletedId)) assert.equal((await store.readRaw(a.id)).toString('utf8'), a.body);
    } finally {
      await store.close();
    }
  });

  it('recovers every message acknowledged while nothing was materialised after a SIGKILL: 0 lost, 0 duplicated', async () => {
    const { acked } = await runChild(dataDir, 60, false);
    assert.equal(acked.length, 60 + 20);
    assert.deepEqual(await emlFiles(dataDir), [], 'the killed process wrote no .eml: the log alone holds the messages');
    assert.ok((await fs.readdir(dataDir)).some((f) => f.startsWith('.wal-')));
    const store = new MaildirStore({ dir: dataDir, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0 });
    await store.open();
    try {
      const files = await emlFiles(dataDir);
      assert.equal(files.length, acked.length, 'one file per acknowledged message');
      for (const a of acked) {
        assert.equal((await store.readRaw(a.id)).toString('utf8'), a.body, `${a.id} complete`);
        assert.ok(existsSync(store.pathOf({ domain: 'inbox.test', inbox: a.inbox, id: a.id })), `${a.id} materialised on open`);
      }
      const listed: string[] = [];
      for (const inbox of ['m0', 'm1', 'm2', 'two-a', 'two-b']) listed.push(...(await store.list('inbox.test', inbox, { limit: 1000, skip: 0, sort: 'descending' })).msgs.map((m) => m.id));
      assert.equal(new Set(listed).size, listed.length, 'no message listed twice');
      assert.deepEqual([...listed].sort(), acked.map((a) => a.id).sort());
    } finally {
      await store.close();
    }
  });
});

interface Acked {
  id: string;
  inbox: string;
  body: string;
}

/**
 * Runs a store in a child process with the materialiser held: `n` messages added concurrently
 * to three inboxes and 10 more each to two inboxes at once (one copy in the log, two files),
 * then (with `deleteOne`) the first deleted; prints the acknowledgements and is killed with SIGKILL.
 */
async function runChild(dir: string, n: number, deleteOne: boolean): Promise<{ acked: Acked[]; deletedId?: string }> {
  const script = `
    const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
    (async () => {
      const s = new MaildirStore({ dir: ${JSON.stringify(dir)}, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 50 });
      await s.open();
      s.holdMaterialiser();
      const acked = [];
      const body = (k) => 'From: a@b.test\\r\\nSubject: s' + k + '\\r\\n\\r\\n' + 'x'.repeat(3000) + '\\r\\nEND-' + k + '\\r\\n';
      await Promise.all(Array.from({ length: ${n} }, async (_, k) => {
        const [m] = await s.add([{ domain: 'inbox.test', inbox: 'm' + (k % 3) }], Buffer.from(body(k)), 'smtp');
        acked.push({ id: m.id, inbox: m.inbox, body: body(k) });
      }));
      for (let k = ${n}; k < ${n} + 10; k++) {
        const ms = await s.add([{ domain: 'inbox.test', inbox: 'two-a' }, { domain: 'inbox.test', inbox: 'two-b' }], Buffer.from(body(k)), 'inject');
        for (const m of ms) acked.push({ id: m.id, inbox: m.inbox, body: body(k) });
      }
      // Checkpoints run meanwhile (every 50 ms): none may drop the log of unwritten messages.
      await new Promise((r) => setTimeout(r, 300));
      let deletedId;
      if (${deleteOne}) {
        deletedId = acked[0].id;
        await s.delete(deletedId);
      }
      process.stdout.write(JSON.stringify({ acked, deletedId }) + '\\n');
      setInterval(() => undefined, 1000);
    })();`;
  return firstLineThenSigkill<{ acked: Acked[]; deletedId?: string }>(script);
}
