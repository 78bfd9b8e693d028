// Log generations are dropped oldest first (issues 14 and 16). A checkpoint that fails keeps its
// generation of the write-ahead log for the next start; a later generation may hold the removal
// record of a message that the kept one logged. Were the later one dropped on its own, the next
// start would replay the older one without the removal and bring the deleted message back. Both
// failures here are real file-system refusals: an inbox's `new/` folder swapped for a plain file,
// so writing or syncing a file in it fails with ENOTDIR (root ignores file modes, so chmod cannot
// do it). One test fails a materialiser write and closes the store; one fails a checkpoint's
// fsync while the store runs, and kills the process with SIGKILL. A third fails the removal
// record itself (the child's file-size limit, EFBIG) while an older checkpoint is under way: the
// checkpoint the delete falls back on must cover the deleted message's generation, not just
// join the one under way; and when that checkpoint cannot succeed, the delete is answered with
// an error instead of success.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { WAL_PREFIX } from '../../src/server/store/maildir/wal';
import { firstLineThenSigkill } from './killedChild';

const REPO = path.resolve(__dirname, '..', '..');
const NO_RETENTION = { maxMessages: 0, maxAgeMs: 0 };
const target = (inbox: string) => ({ domain: 'inbox.test', inbox });
const body = (subject: string) => `From: a@b.test\r\nSubject: ${subject}\r\n\r\nbody of ${subject}\r\n`;

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Generations of the write-ahead log on disk, ascending. */
async function walGenerations(dataDir: string): Promise<number[]> {
  return (await fs.readdir(dataDir))
    .filter((n) => n.startsWith(WAL_PREFIX))
    .map((n) => Number(n.slice(WAL_PREFIX.length)))
    .sort((a, b) => a - b);
}

/** Puts a plain file where the folder `dir` is (every write or sync of a file in it then fails with ENOTDIR); answers the function that puts the folder back. */
async function blockFolder(dir: string): Promise<() => Promise<void>> {
  const aside = `${dir}.aside`;
  await fs.rename(dir, aside);
  await fs.writeFile(dir, 'not a folder');
  return async () => {
    await fs.rm(dir);
    await fs.rename(aside, dir);
  };
}

describe('checkpoints drop log generations oldest first', function () {
  this.timeout(60_000);
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-ckpt-'));
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('a message deleted after a checkpoint failed on an unwritten file stays deleted after close and restart, and the unwritten one is restored', async () => {
    const logs: string[] = [];
    const store = new MaildirStore({ dir: dataDir, retention: NO_RETENTION, checkpointIntervalMs: 50, log: (level, msg) => logs.push(`${level} ${msg}`) });
    await store.open();
    const release = store.holdMaterialiser();
    // One message to two inboxes: one delivery, so both copies are in the same log generation.
    const [gone, stuck] = await store.add([target('gone'), target('stuck')], Buffer.from(body('two copies')), 'smtp');
    const unblock = await blockFolder(path.dirname(store.pathOf(stuck)));
    release();
    await until('the first copy is written and the second failed', () => existsSync(store.pathOf(gone)) && logs.some((l) => l.includes(`could not write the file of message ${gone.id}`)));
    // The checkpoint that rotated generation 1 waits for the failing file; the delete goes to generation 2.
    await until('a checkpoint rotated the log', async () => (await walGenerations(dataDir)).includes(2));
    assert.equal(await store.delete(gone.id), true);
    assert.equal(existsSync(store.pathOf(gone)), false);
    await store.close();
    assert.ok(
      logs.some((l) => l.includes('checkpoint failed')),
      'the checkpoint of generation 1 failed (the file of the second copy was never written)',
    );
    const keptGenerations = await walGenerations(dataDir);

    await unblock();
    const again = new MaildirStore({ dir: dataDir, retention: NO_RETENTION, checkpointIntervalMs: 0 });
    await again.open();
    try {
      assert.equal(again.get(gone.id), undefined, 'the answered delete holds');
      assert.equal(existsSync(again.pathOf(gone)), false, 'its file is not written again');
      assert.equal((await again.readRaw(stuck.id)).toString('utf8'), body('two copies'), 'the acknowledged copy whose file failed is restored from the log');
      assert.ok(existsSync(again.pathOf(stuck)));
      assert.deepEqual(keptGenerations, [1, 2], 'generation 1 (a file never written) was kept, and generation 2 (the removal) behind it');
      assert.deepEqual(await walGenerations(dataDir), [3], 'the replayed generations are dropped; a fresh one is open');
    } finally {
      await again.close();
    }
  });

  it('a message deleted after a checkpoint failed to sync stays deleted after a SIGKILL; the failed generation is retried first', async () => {
    const out = await firstLineThenSigkill<{ kept: string; gone: string; cancelled: string; failed: boolean; left: number[] }>(`
      const fs = require('node:fs/promises');
      const path = require('node:path');
      const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
      const dir = ${JSON.stringify(dataDir)};
      const until = async (check) => { while (!(await check())) await new Promise((r) => setTimeout(r, 20)); };
      const gens = async () => (await fs.readdir(dir)).filter((n) => n.startsWith('.wal-')).map((n) => Number(n.slice(5))).sort((a, b) => a - b);
      (async () => {
        const logs = [];
        const s = new MaildirStore({ dir, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 50, log: (level, msg) => logs.push(msg) });
        await s.open();
        const release = s.holdMaterialiser();
        // One message to three inboxes, so every copy is in generation 1.
        const t = (inbox) => ({ domain: 'inbox.test', inbox });
        const [kept, gone, cancelled] = await s.add([t('kept'), t('gone'), t('cancelled')], Buffer.from(${JSON.stringify(body('three copies'))}), 'smtp');
        await until(async () => (await gens()).includes(2));
        // Generation 1's checkpoint waits for the held files. The third copy is deleted before its
        // file exists, and its folder then refuses the checkpoint's fsync of that path (ENOTDIR).
        const newDir = path.dirname(s.pathOf(cancelled));
        await fs.rename(newDir, newDir + '.aside');
        await fs.writeFile(newDir, 'not a folder');
        await s.delete(cancelled.id);
        release();
        await until(() => logs.some((l) => l.includes('checkpoint failed')));
        await fs.rm(newDir);
        await fs.rename(newDir + '.aside', newDir);
        // The removal of 'gone' goes to the current generation; wait until a checkpoint dropped that one.
        await s.delete(gone.id);
        const removal = JSON.stringify(['x', gone.id]);
        const logged = async () => {
          for (const g of await gens()) if ((await fs.readFile(path.join(dir, '.wal-' + g), 'utf8').catch(() => '')).includes(removal)) return true;
          return false;
        };
        await until(async () => !(await logged()));
        process.stdout.write(JSON.stringify({ kept: kept.id, gone: gone.id, cancelled: cancelled.id, failed: true, left: await gens() }) + '\\n');
        setInterval(() => undefined, 1000);
      })();`);
    assert.ok(out.failed);
    const store = new MaildirStore({ dir: dataDir, retention: NO_RETENTION, checkpointIntervalMs: 0 });
    await store.open();
    try {
      assert.equal(store.get(out.gone), undefined, 'the answered delete holds after the crash');
      assert.equal(existsSync(store.pathOf({ domain: 'inbox.test', inbox: 'gone', id: out.gone })), false, 'its file is not written again');
      assert.equal(store.get(out.cancelled), undefined);
      assert.equal((await store.readRaw(out.kept)).toString('utf8'), body('three copies'), 'the acknowledged copy is kept');
      assert.ok(!out.left.includes(1), `generation 1 was retried and dropped before the later ones (left: ${out.left.join(", ")})`);
    } finally {
      await store.close();
    }
  });
  it('a delete whose removal record cannot be logged, while an older checkpoint is under way, stays deleted after a SIGKILL', async function () {
    try {
      execFileSync('prlimit', ['--version'], { stdio: 'pipe' });
    } catch {
      this.skip(); // no util-linux prlimit here (Linux only)
    }
    // Every file of the child is limited to FILE_LIMIT bytes (RLIMIT_FSIZE): the message deleted
    // fills its log generation to just below it, so its removal record fails with EFBIG and the
    // store checkpoints instead, while the checkpoint of the generation before waits for a held file.
    const FILE_LIMIT = 64 * 1024;
    const out = await firstLineThenSigkill<{ gone: string; held: string; walBytes: number; logs: string[] }>(
      `
      const fs = require('node:fs/promises');
      const path = require('node:path');
      const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
      const dir = ${JSON.stringify(dataDir)};
      const until = async (check) => { while (!(await check())) await new Promise((r) => setTimeout(r, 20)); };
      const gens = async () => (await fs.readdir(dir)).filter((n) => n.startsWith('.wal-')).map((n) => Number(n.slice(5)));
      (async () => {
        const logs = [];
        // The timed checkpoint comes once a second: the first rotates generation 1, the next is well after the kill.
        const s = new MaildirStore({ dir, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 1000, log: (level, msg) => logs.push(msg) });
        await s.open();
        const release = s.holdMaterialiser();
        const t = (inbox) => ({ domain: 'inbox.test', inbox });
        const [held] = await s.add([t('held')], Buffer.from(${JSON.stringify(body('held'))}), 'smtp');
        await until(async () => (await gens()).includes(2));
        // Generation 2 gets one message whose record ends 10 bytes short of the limit
        // (["m", id, domain, inbox, time, source, length] then the bytes and a newline).
        const head = 'From: a@b.test\\r\\nSubject: gone\\r\\n\\r\\n';
        const recordBytes = (n) => JSON.stringify(['m', 'gone-' + '9'.repeat(10) + '-2', 'inbox.test', 'gone', 1e12, 'smtp', n]).length + 1 + n + 1;
        let n = ${FILE_LIMIT};
        for (let k = 0; k < 3; k++) n = ${FILE_LIMIT} - 10 - (recordBytes(n) - n);
        const [gone] = await s.add([t('gone')], Buffer.from(head + 'x'.repeat(n - head.length)), 'smtp');
        const walBytes = (await fs.stat(path.join(dir, '.wal-2'))).size;
        // The checkpoint of generation 1 goes on once the delete has found the log full.
        setTimeout(release, 300);
        await s.delete(gone.id);
        process.stdout.write(JSON.stringify({ gone: gone.id, held: held.id, walBytes, logs }) + '\\n');
        setInterval(() => undefined, 1000);
      })();`,
      { fileSizeLimit: FILE_LIMIT },
    );
    assert.equal(out.walBytes, FILE_LIMIT - 10, 'the generation of the deleted message ends just short of the file-size limit');
    assert.ok(
      out.logs.some((l) => l.includes('could not log a removal')),
      `the removal record failed (${out.logs.join(' | ')})`,
    );
    const store = new MaildirStore({ dir: dataDir, retention: NO_RETENTION, checkpointIntervalMs: 0 });
    await store.open();
    try {
      assert.equal(store.get(out.gone), undefined, 'the answered delete holds after the crash');
      assert.equal(existsSync(store.pathOf({ domain: 'inbox.test', inbox: 'gone', id: out.gone })), false, 'its file is not written');
      assert.equal((await store.readRaw(out.held)).toString('utf8'), body('held'), 'the message held back meanwhile is kept');
    } finally {
      await store.close();
    }
  });
  it('answers a delete with an error when its removal can be neither logged nor checkpointed (a file still failing), and says so', async function () {
    try {
      execFileSync('prlimit', ['--version'], { stdio: 'pipe' });
    } catch {
      this.skip(); // no util-linux prlimit here (Linux only)
    }
    const FILE_LIMIT = 64 * 1024;
    const out = await firstLineThenSigkill<{ gone: string; stuck: string; answer: { code?: string; message: string } | 'deleted'; listed: boolean }>(
      `
      const fs = require('node:fs/promises');
      const path = require('node:path');
      const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
      const dir = ${JSON.stringify(dataDir)};
      const until = async (check) => { while (!(await check())) await new Promise((r) => setTimeout(r, 20)); };
      (async () => {
        const logs = [];
        // No timed checkpoint: every message stays in generation 1.
        const s = new MaildirStore({ dir, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0, log: (level, msg) => logs.push(msg) });
        await s.open();
        const release = s.holdMaterialiser();
        const t = (inbox) => ({ domain: 'inbox.test', inbox });
        const [stuck] = await s.add([t('stuck')], Buffer.from(${JSON.stringify(body('stuck'))}), 'smtp');
        const newDir = path.dirname(s.pathOf(stuck));
        await fs.rename(newDir, newDir + '.aside');
        await fs.writeFile(newDir, 'not a folder');
        release();
        await until(() => logs.some((l) => l.includes('could not write the file of message ' + stuck.id)));
        // The next message's record ends 10 bytes short of the file-size limit.
        const used = (await fs.stat(path.join(dir, '.wal-1'))).size;
        const head = 'From: a@b.test\\r\\nSubject: gone\\r\\n\\r\\n';
        const recordBytes = (n) => JSON.stringify(['m', 'gone-' + '9'.repeat(10) + '-2', 'inbox.test', 'gone', 1e12, 'smtp', n]).length + 1 + n + 1;
        let n = ${FILE_LIMIT};
        for (let k = 0; k < 3; k++) n = ${FILE_LIMIT} - used - 10 - (recordBytes(n) - n);
        const [gone] = await s.add([t('gone')], Buffer.from(head + 'x'.repeat(n - head.length)), 'smtp');
        if ((await fs.stat(path.join(dir, '.wal-1'))).size !== ${FILE_LIMIT} - 10) throw new Error('the log is not where the test wants it');
        await until(async () => fs.stat(s.pathOf(gone)).then(() => true, () => false));
        let answer = 'deleted';
        await s.delete(gone.id).catch((e) => (answer = { code: e.code, message: e.message }));
        // Put the folder back for the next start.
        await fs.rm(newDir);
        await fs.rename(newDir + '.aside', newDir);
        process.stdout.write(JSON.stringify({ gone: gone.id, stuck: stuck.id, answer, listed: s.get(gone.id) !== undefined }) + '\\n');
        setInterval(() => undefined, 1000);
      })();`,
      { fileSizeLimit: FILE_LIMIT },
    );
    assert.notEqual(out.answer, 'deleted', 'the delete is not answered as done');
    assert.equal(typeof out.answer === 'object' && out.answer.code, 'io');
    assert.match(typeof out.answer === 'object' ? out.answer.message : '', /not durable/);
    assert.equal(out.listed, false, 'the message is out of the listings meanwhile');
    // As the error said, a start before the next checkpoint brings it back: nothing acknowledged is lost.
    const store = new MaildirStore({ dir: dataDir, retention: NO_RETENTION, checkpointIntervalMs: 0 });
    await store.open();
    try {
      assert.ok(store.get(out.gone), 'the message whose delete failed is back');
      assert.equal((await store.readRaw(out.stuck)).toString('utf8'), body('stuck'), 'the message whose file failed is restored');
    } finally {
      await store.close();
    }
  });
});
