// A full disk, on a real small file system: a tmpfs of FS_BYTES mounted for the test (needs
// root and CAP_SYS_ADMIN, as `.ci/run` has; skipped with the reason otherwise). The real server
// fills it over SMTP until it answers 452 4.3.1; an inject then gets 507 with JSON; reads keep
// working; once messages are deleted, deliveries are accepted again. The store must get at least
// MIN_FILL of the free space into mail (until 0.2.0 each message sat on disk twice, file and log,
// until the next checkpoint).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { DEFAULT_DOMAIN, DURABILITIES } from '../../src/shared/contract';
import { type InboxServer, startInboxServer } from '../../src/server/server';

const FS_BYTES = 16 * 1024 * 1024;
const MESSAGE_BODY_BYTES = 200 * 1024;
const MIN_FILL = 0.8;
const TOKENS = { apiToken: 'full-disk-api-token-000000', webhookToken: 'full-disk-webhook-token-00', twilioAuthToken: 'full-disk-twilio-token-000' };

async function freeBytes(dir: string): Promise<number> {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
}

async function emlBytes(root: string): Promise<number> {
  let n = 0;
  for (const e of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.eml')) n += (await fs.stat(path.join(e.parentPath, e.name))).size;
  }
  return n;
}

// Each rule on a tmpfs of its own: the process rule writes every file before the answer, the
// strict rule logs first and writes after it.
for (const durability of DURABILITIES) {
  describe(`a full disk (real tmpfs, --durability ${durability})`, function () {
    this.timeout(120_000);
    let mountPoint: string;
    let mounted = false;
    let server: InboxServer | undefined;

    before(async function () {
      mountPoint = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-full-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_BYTES},mode=0700`, 'tmpfs', mountPoint], { stdio: 'pipe' });
        mounted = true;
      } catch (e) {
        this.skip(); // no permission to mount here; the reason is in the report of `mount`
        void e;
      }
    });

    after(async () => {
      await server?.close();
      if (mounted) execFileSync('umount', [mountPoint]);
      await fs.rm(mountPoint, { recursive: true, force: true });
    });

    it('answers 452 4.3.1 and 507, keeps reads working, fills at least 80 % with mail, and takes mail again once there is room', async () => {
      const dataDir = path.join(mountPoint, 'data');
      server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...TOKENS, defaultDomain: DEFAULT_DOMAIN, retention: { maxMessages: 0, maxAgeMs: 0 }, durability });
      const free = await freeBytes(dataDir);
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 });
      const body = `${'x'.repeat(76)}\r\n`.repeat(Math.ceil(MESSAGE_BODY_BYTES / 78));
      // Sent as is (raw): the test measures the server, not nodemailer's encoder.
      const send = (i: number) => {
        const to = `u${i % 7}@inbox.test`;
        return transport.sendMail({ envelope: { from: 'a@example.com', to }, raw: `From: a@example.com\r\nTo: ${to}\r\nSubject: m${i}\r\n\r\n${body}` });
      };

      let refused: { responseCode?: number; response?: string } | undefined;
      let accepted = 0;
      for (let i = 0; !refused && i < 10_000; i += 4) {
        const results = await Promise.allSettled([0, 1, 2, 3].map((k) => send(i + k)));
        for (const r of results) {
          if (r.status === 'fulfilled') accepted++;
          else refused ??= r.reason as { responseCode?: number; response?: string };
        }
      }
      assert.ok(refused, 'the disk filled up');
      assert.equal(refused.responseCode, 452, refused.response);
      assert.match(refused.response ?? '', /^452 4\.3\.1 /);

      const stored = await emlBytes(path.join(dataDir, 'mail'));
      const fill = stored / free;
      console.log(`      filled ${(fill * 100).toFixed(1)} % of ${(free / 1048576).toFixed(1)} MiB free with ${accepted} messages`);
      assert.ok(fill >= MIN_FILL, `mail filled ${(fill * 100).toFixed(1)} % of the free space`);

      // The log's copies of the last messages are given back by the next checkpoint, so a few
      // more may fit; injects fill what is left until the store says the disk is full.
      const auth = { authorization: TOKENS.apiToken, 'content-type': 'application/json' };
      let inject: Response | undefined;
      for (let i = 0; i < 20; i++) {
        inject = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/joe`, { method: 'POST', headers: auth, body: JSON.stringify({ from: 'a@example.com', subject: 'inject', text: body }) });
        if (inject.status !== 200) break;
      }
      assert.equal(inject?.status, 507);
      assert.match(((await inject.json()) as { message: string }).message, /disk .* is full/);

      const storedAfter = await emlBytes(path.join(dataDir, 'mail'));
      assert.ok(storedAfter / free >= MIN_FILL);

      const list = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/u0`, { headers: auth });
      assert.equal(list.status, 200, 'listing works on a full disk');
      const msgs = ((await list.json()) as { msgs: Array<{ id: string }> }).msgs;
      assert.ok(msgs.length > 0);
      const one = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/messages/${msgs[0].id}`, { headers: auth });
      assert.equal(one.status, 200, 'reading a message works on a full disk');

      // Deleting makes room (the delete itself must work on a full disk), then writes resume.
      const del = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/u0`, { method: 'DELETE', headers: auth });
      assert.equal(del.status, 200, await del.clone().text());
      const info = await send(0);
      assert.match(info.response, /^250 /);
      const again = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/joe`, { method: 'POST', headers: auth, body: JSON.stringify({ from: 'a@example.com', subject: 'inject', text: 'small' }) });
      assert.equal(again.status, 200);
      transport.close();
    });

    it('spooled mail on a full disk is 452 4.3.1; a full disk starts again, serves reads and deletes, refuses writes, and takes them once there is room', async () => {
      await server?.close();
      server = undefined;
      const dataDir = path.join(mountPoint, 'data14');
      const start = () => startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...TOKENS, defaultDomain: DEFAULT_DOMAIN, retention: { maxMessages: 0, maxAgeMs: 0 }, durability });
      server = await start();
      const auth = { authorization: TOKENS.apiToken, 'content-type': 'application/json' };
      // 1 MB bodies: past the spool threshold, so each is written to a spool file while it arrives.
      const big = `${'y'.repeat(76)}\r\n`.repeat(Math.ceil((1024 * 1024) / 78));
      const sendBig = async (port: number, i: number) => {
        const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
        try {
          return await transport.sendMail({ envelope: { from: 'a@example.com', to: 'big@inbox.test' }, raw: `From: a@example.com\r\nTo: big@inbox.test\r\nSubject: big ${i}\r\n\r\n${big}` });
        } finally {
          transport.close();
        }
      };
      const acknowledged: string[] = [];
      let refused: { responseCode?: number; response?: string } | undefined;
      for (let i = 0; !refused && i < 100; i++) {
        try {
          const info = await sendBig(server.smtpPort, i);
          acknowledged.push(`big ${i}`);
          assert.match(info.response, /^250 /);
        } catch (e) {
          refused = e as { responseCode?: number; response?: string };
        }
      }
      assert.ok(refused, 'the disk filled up');
      assert.match(refused.response ?? '', /^452 4\.3\.1 /, 'a spooled message on a full disk');

      // Take the last bytes too: nothing at all is free when the server starts again.
      const filler = await fs.open(path.join(mountPoint, 'filler'), 'w');
      for (const n of [65536, 4096, 512, 1]) {
        const b = Buffer.alloc(n);
        try {
          for (;;) await filler.write(b);
        } catch {
          // full at this size; try a smaller one
        }
      }
      await filler.close();
      assert.equal(await freeBytes(mountPoint), 0);
      await server.close();
      server = await start();

      // Reads work, writes are refused as a full disk.
      const list = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/big?limit=100`, { headers: auth });
      assert.equal(list.status, 200);
      const msgs = ((await list.json()) as { msgs: Array<{ id: string; subject: string }> }).msgs;
      assert.deepEqual(msgs.map((m) => m.subject).sort(), [...acknowledged].sort(), 'every acknowledged message is there');
      const raw = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/messages/${msgs[0].id}/raw`, { headers: auth });
      assert.equal(raw.status, 200);
      assert.ok((await raw.arrayBuffer()).byteLength > 1024 * 1024);
      await assert.rejects(sendBig(server.smtpPort, 1000), (e: { response?: string }) => /^452 4\.3\.1 /.test(e.response ?? ''));
      // Small injects may still fit in room the store's log keeps; then the store says the disk is full.
      let inject: Response | undefined;
      for (let i = 0; i < 200; i++) {
        inject = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/joe`, { method: 'POST', headers: auth, body: JSON.stringify({ subject: 'full', text: big.slice(0, 64 * 1024) }) });
        if (inject.status !== 200) break;
      }
      assert.equal(inject?.status, 507, await inject?.text());
      const del = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/messages/${msgs[0].id}`, { method: 'DELETE', headers: auth });
      assert.equal(del.status, 200, `a delete on a full disk: ${await del.text()}`);
      acknowledged.splice(acknowledged.indexOf(msgs[0].subject), 1);

      // Room again: writes are taken, and nothing acknowledged was lost.
      await fs.rm(path.join(mountPoint, 'filler'));
      const again = await sendBig(server.smtpPort, 2000);
      assert.match(again.response, /^250 /);
      acknowledged.push('big 2000');
      const injected = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/joe`, { method: 'POST', headers: auth, body: JSON.stringify({ subject: 'room', text: 'x' }) });
      assert.equal(injected.status, 200);
      const after = ((await (await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/big?limit=100`, { headers: auth })).json()) as { msgs: Array<{ subject: string }> }).msgs;
      assert.deepEqual(after.map((m) => m.subject).sort(), [...acknowledged].sort());
    });
  });
}
