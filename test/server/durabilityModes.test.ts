// The two durability rules of the Maildir store (issue 36), on real files:
// - process (the default): an acknowledged message is in its file, in the OS, before the
//   answer; a background flush syncs it within its period. With the flush held in a test seam
//   and the process SIGKILLed, a fresh open finds every acknowledged message and no deleted one.
// - strict: the acknowledgement waits for the log's fdatasync.
// What each waits for is shown with a sync seam that blocks until released: no timing is asserted.
import assert from 'node:assert/strict';
import { fsync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FLUSH_INTERVAL_MS, type FlushDone } from '../../src/server/store/maildir/flusher';
import { WAL_PREFIX } from '../../src/server/store/maildir/wal';
import { MaildirStore } from '../../src/server/store/maildir/store';
import type { MessageMeta } from '../../src/server/store/types';
import { firstLineThenSigkill } from './killedChild';

const REPO = path.resolve(__dirname, '..', '..');
const NO_RETENTION = { maxMessages: 0, maxAgeMs: 0 };

const mail = (k: number | string): Buffer => Buffer.from(`From: a@b.test\r\nSubject: s${k}\r\n\r\n${'x'.repeat(3000)}\r\nEND-${k}\r\n`);

/** A sync seam: real fsyncs, except that while `blocking` each waits in `held` until release(). */
function heldSync(): { sync: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void; held: Array<() => void>; block(): void; release(): void } {
  let blocking = false;
  const held: Array<() => void> = [];
  return {
    held,
    sync: (fd, done) => {
      if (blocking) held.push(() => fsync(fd, done));
      else fsync(fd, done);
    },
    block: () => void (blocking = true),
    release: () => {
      blocking = false;
      for (const go of held.splice(0)) go();
    },
  };
}

/** Resolves once `cond()` holds, looking at each turn of the event loop (a test's own timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

describe('durability rules of the Maildir store', function () {
  this.timeout(60_000);
  let dir: string;
  const stores: MaildirStore[] = [];

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-rules-'));
  });

  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  async function open(options: ConstructorParameters<typeof MaildirStore>[0]): Promise<MaildirStore> {
    const s = new MaildirStore(options);
    stores.push(s);
    await s.open();
    return s;
  }

  it('process rule, background flush held: what was acknowledged is in the files the OS holds, so a fresh open after SIGKILL finds it once, and a delete stays done', async () => {
    // The flush would run every 20 ms; it is held, so nothing acknowledged was ever fsynced by it.
    const script = `
      const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
      (async () => {
        const s = new MaildirStore({ dir: ${JSON.stringify(dir)}, retention: { maxMessages: 0, maxAgeMs: 0 }, durability: 'process', flushIntervalMs: 20 });
        await s.open();
        s.holdFlush();
        let flushes = 0;
        s.watchFlushes(() => flushes++);
        const body = (k) => Buffer.from('From: a@b.test\\r\\nSubject: s' + k + '\\r\\n\\r\\n' + 'x'.repeat(3000) + '\\r\\nEND-' + k + '\\r\\n');
        const acked = [];
        await Promise.all(Array.from({ length: 60 }, async (_, k) => {
          const [m] = await s.add([{ domain: 'inbox.test', inbox: 'p' + (k % 3) }], body(k), 'smtp');
          acked.push({ id: m.id, k: String(k) });
        }));
        const two = await s.add([{ domain: 'inbox.test', inbox: 'two-a' }, { domain: 'inbox.test', inbox: 'two-b' }], body('two'), 'inject');
        for (const m of two) acked.push({ id: m.id, k: 'two' });
        const deletedId = acked[0].id;
        await s.delete(deletedId);
        // Several periods of the flush pass, held.
        await new Promise((r) => setTimeout(r, 200));
        process.stdout.write(JSON.stringify({ acked, deletedId, flushes, ticks: s.flushTicks }) + '\\n');
        setInterval(() => undefined, 1000);
      })();`;
    const { acked, deletedId, flushes, ticks } = await firstLineThenSigkill<{ acked: Array<{ id: string; k: string }>; deletedId: string; flushes: number; ticks: number }>(script);
    assert.equal(flushes, 0, 'the held flush never ran');
    assert.ok(ticks > 0, 'its timer ticked meanwhile');
    // The process rule logs no message: nothing but the files holds the bytes.
    for (const name of await fs.readdir(dir)) {
      if (name.startsWith(WAL_PREFIX)) assert.ok(!(await fs.readFile(path.join(dir, name), 'latin1')).includes('END-'), `${name} holds no message`);
    }

    const s = await open({ dir, retention: NO_RETENTION, durability: 'process' });
    const live = acked.filter((a) => a.id !== deletedId);
    for (const a of live) {
      assert.ok(await s.get(a.id), `acknowledged ${a.id} is listed after the restart`);
      assert.deepEqual(await s.readRaw(a.id), mail(a.k), `${a.id} is complete`);
    }
    assert.equal(await s.get(deletedId), undefined, 'the deleted message stays deleted');
    const stored = s.domains().reduce((n, d) => n + d.messages, 0);
    assert.equal(stored, live.length, 'nothing stored twice, nothing unacknowledged');
  });

  it('process rule, background flush running: the first flush its timer starts after an acknowledgement syncs the message file and its folder', async () => {
    assert.ok(FLUSH_INTERVAL_MS <= 1000, 'the period is within the second the rule promises');
    const s = await open({ dir, retention: NO_RETENTION, durability: 'process', flushIntervalMs: 30 });
    const done: FlushDone[] = [];
    s.watchFlushes((d) => done.push(d));
    const [m] = await s.add([{ domain: 'inbox.test', inbox: 'joe' }], mail(1), 'smtp');
    const ticksAtAck = s.flushTicks;
    const file = s.pathOf(m);
    await until(() => done.some((d) => d.files.includes(file)));
    const flush = done.find((d) => d.files.includes(file))!;
    assert.ok(flush.tick <= ticksAtAck + 1, `flushed by the flush of tick ${flush.tick}, the acknowledgement came at tick ${ticksAtAck}`);
    assert.ok(flush.dirs.includes(path.dirname(file)), 'its folder (the rename into new/) is synced too');
    assert.equal(done.filter((d) => d.files.includes(file)).length, 1, 'a file is flushed once');
  });

  it('process rule: the acknowledgement does not wait for an fsync (one held by the seam does not hold it back)', async () => {
    const seam = heldSync();
    const s = await open({ dir, retention: NO_RETENTION, durability: 'process', flushIntervalMs: 10, sync: seam.sync });
    seam.block();
    const [first] = await s.add([{ domain: 'inbox.test', inbox: 'joe' }], mail(1), 'smtp');
    // The background flush of the first message is now waiting on its fsync...
    await until(() => seam.held.length > 0);
    // ...and a second message is acknowledged all the same, its file in new/.
    const [second] = await s.add([{ domain: 'inbox.test', inbox: 'joe' }], mail(2), 'smtp');
    assert.ok(seam.held.length > 0, 'the fsync is still held');
    assert.deepEqual(await fs.readFile(s.pathOf(second)), mail(2));
    assert.deepEqual(await fs.readFile(s.pathOf(first)), mail(1));
    seam.release();
  });

  it('strict rule: the acknowledgement waits for the log fdatasync (held by the seam, it arrives only once released)', async () => {
    const seam = heldSync();
    const s = await open({ dir, retention: NO_RETENTION, durability: 'strict', sync: seam.sync });
    seam.block();
    const ack: { metas?: MessageMeta[] } = {};
    const adding = s.add([{ domain: 'inbox.test', inbox: 'joe' }], mail(1), 'smtp').then((m) => (ack.metas = m));
    await until(() => seam.held.length > 0);
    // The log's fdatasync is held: a few turns of the event loop pass, and no acknowledgement.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    const whileHeld = ack.metas;
    assert.equal(whileHeld, undefined, 'not acknowledged while its fdatasync is held');
    seam.release();
    await adding;
    assert.equal(ack.metas?.length, 1, 'acknowledged once the fdatasync is done');
  });
});
