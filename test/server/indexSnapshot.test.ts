// The index snapshot (src/server/store/maildir/snapshot.ts): a start after a clean close takes each
// inbox's journal entries without listing its files, and anything that changed behind the
// snapshot's back (files deleted or dropped in, a crash after it, a torn or stale snapshot, a
// journal that lost lines) makes the store list that inbox as before. Real files, a real child
// process killed with SIGKILL; a snapshot may save work but never lose or invent a message.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOURNAL_FILE } from '../../src/server/store/maildir/journal';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { SNAPSHOT_FILE } from '../../src/server/store/maildir/snapshot';
import { storeSessions } from './storeSessions';
import { firstLineThenSigkill } from './killedChild';
import { rawEmail } from '../support/messages';

const REPO = path.resolve(__dirname, '..', '..');
/** Longer than the racy window, so the directories' last changes are clearly older than the snapshot. */

const mail = (subject: string): Buffer => rawEmail({ subject, body: `body of ${subject}`, date: null });

describe('index snapshot', function () {
  this.timeout(30_000);
  let dir: string;
  const { openStore, close, closeAll } = storeSessions(() => dir);

  /** "<trusted> of <inboxes>" from the open log line, or undefined when no snapshot was used. */
  function trustedOf(logs: string[]): string | undefined {
    for (const l of logs) {
      const m = /\((\d+ of \d+) inbox\(es\) taken from the index snapshot\)/.exec(l);
      if (m) return m[1];
    }
    return undefined;
  }

  const subjects = async (store: MaildirStore, inbox: string): Promise<string[]> =>
    (await store.list('inbox.test', inbox, { limit: 1000, skip: 0, sort: 'ascending' })).msgs.map((m) => m.subject);

  /** Two inboxes, joe (3 messages) and ann (2), closed cleanly: a snapshot on disk. */
  async function seeded(): Promise<Array<{ id: string; inbox: string }>> {
    const { store } = await openStore();
    const ids: Array<{ id: string; inbox: string }> = [];
    for (const [inbox, s] of [['joe', 'j1'], ['joe', 'j2'], ['joe', 'j3'], ['ann', 'a1'], ['ann', 'a2']]) {
      const [m] = await store.add([{ domain: 'inbox.test', inbox }], mail(s), 'smtp');
      ids.push({ id: m.id, inbox });
    }
    await close(store);
    return ids;
  }

  const fileOf = (inbox: string, id: string): string => path.join(dir, 'mail', 'inbox.test', inbox, 'new', `${id}.eml`);

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-snapshot-'));
  });

  afterEach(async () => {
    await closeAll();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is written by a clean close and lets the next start take every inbox without listing it', async () => {
    await seeded();
    await fs.access(path.join(dir, SNAPSHOT_FILE));
    const { store, logs } = await openStore();
    assert.equal(trustedOf(logs), '2 of 2');
    assert.deepEqual(await subjects(store, 'joe'), ['j1', 'j2', 'j3']);
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2']);
  });

  it('lists an inbox again when a file was deleted behind its back, and does not invent the message', async () => {
    const ids = await seeded();
    await fs.rm(fileOf('joe', ids[1].id));
    const { store, logs } = await openStore();
    assert.equal(trustedOf(logs), '1 of 2', 'joe is listed, ann is trusted');
    assert.deepEqual(await subjects(store, 'joe'), ['j1', 'j3']);
    assert.equal(store.get(ids[1].id), undefined);
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2']);
  });

  it('indexes a message file dropped in behind its back', async () => {
    const ids = await seeded();
    const copyId = ids[3].id.replace(/-(\d+)$/, (_, n: string) => `-${Number(n) + 1000}`);
    await fs.writeFile(fileOf('ann', copyId), mail('dropped in'));
    const { store, logs } = await openStore();
    assert.equal(trustedOf(logs), '1 of 2');
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2', 'dropped in']);
  });

  /** [walked, inboxes] from the line that ends the start's walk over the mail's modes (maildir/store.ts makeMailPrivate), once it is logged. */
  async function walkedOf(logs: string[]): Promise<[number, number]> {
    const re = /every file under .* is private \((\d+) of (\d+) inbox\(es\) walked/;
    for (let i = 0; i < 100; i++) {
      for (const l of logs) {
        const m = re.exec(l);
        if (m) return [Number(m[1]), Number(m[2])];
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the walk never ended:\n${logs.join('\n')}`);
  }

  it('walks the files of an inbox once: later starts take it as private, even after a run closed before its walk ended', async () => {
    const ids = await seeded();
    // The run that created the inboxes' folders made every file in them: no walk.
    let { store, logs } = await openStore();
    assert.deepEqual(await walkedOf(logs), [0, 2]);
    await close(store);
    // A widened file dropped into ann: ann is listed, walked once, and private again.
    await fs.writeFile(fileOf('ann', ids[3].id.replace(/-(\d+)$/, (_, n: string) => `-${Number(n) + 1000}`)), mail('dropped in'), { mode: 0o644 });
    ({ store, logs } = await openStore());
    assert.deepEqual(await walkedOf(logs), [1, 2]);
    await close(store);
    ({ store, logs } = await openStore());
    assert.deepEqual(await walkedOf(logs), [0, 2]);
    await close(store);
    // Closed at once: the walk stops at its first step, so it neither ends nor forgets what it knew.
    ({ store, logs } = await openStore());
    await store.close();
    assert.ok(!logs.some((l) => l.includes('is private')), logs.join('\n'));
    ({ store, logs } = await openStore());
    assert.equal(trustedOf(logs), '2 of 2');
    assert.deepEqual(await walkedOf(logs), [0, 2]);
  });

  it('walks an inbox that a file was dropped into although it was private, and makes the file private', async () => {
    const ids = await seeded();
    let { store, logs } = await openStore();
    assert.deepEqual(await walkedOf(logs), [0, 2]);
    await close(store);
    // Named after the newest of the inbox (a2), so it sorts last even when a1 and a2 fell in different seconds.
    const dropped = fileOf('ann', ids[4].id.replace(/-(\d+)$/, (_, n: string) => `-${Number(n) + 1000}`));
    await fs.writeFile(dropped, mail('dropped in'), { mode: 0o644 });
    await fs.chmod(dropped, 0o644);
    ({ store, logs } = await openStore());
    assert.equal(trustedOf(logs), '1 of 2');
    assert.deepEqual(await walkedOf(logs), [1, 2]);
    assert.equal((await fs.stat(dropped)).mode & 0o777, 0o600);
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2', 'dropped in']);
  });

  it('walks cur/ on every start, and never follows a symlinked folder out of the mail root', async () => {
    const ids = await seeded();
    let { store, logs } = await openStore();
    assert.deepEqual(await walkedOf(logs), [0, 2]);
    await close(store);
    const inboxDir = path.dirname(path.dirname(fileOf('ann', ids[3].id)));
    // A widened file in cur/ of an inbox the snapshot trusts as private.
    const inCur = path.join(inboxDir, 'cur', 'moved.eml');
    await fs.writeFile(inCur, mail('moved'), { mode: 0o644 });
    await fs.chmod(inCur, 0o644);
    // joe's cur/ replaced by a link to a folder outside the data dir holding a widened file.
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-outside-'));
    try {
      await fs.chmod(outside, 0o755);
      const outsideFile = path.join(outside, 'x.eml');
      await fs.writeFile(outsideFile, 'x', { mode: 0o644 });
      await fs.chmod(outsideFile, 0o644);
      const joeCur = path.join(path.dirname(inboxDir), 'joe', 'cur');
      await fs.rm(joeCur, { recursive: true });
      await fs.symlink(outside, joeCur);
      ({ store, logs } = await openStore());
      // Both inboxes stay trusted and private (new/ and tmp/ unchanged): only the walk over cur/ sees either change.
      assert.equal(trustedOf(logs), '2 of 2');
      assert.deepEqual(await walkedOf(logs), [0, 2]);
      assert.equal((await fs.stat(inCur)).mode & 0o777, 0o600);
      assert.equal((await fs.stat(outsideFile)).mode & 0o777, 0o644);
      assert.equal((await fs.stat(outside)).mode & 0o777, 0o755);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it('does not empty a tmp/ that is a symlink out of the data dir', async () => {
    await seeded();
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-outside-'));
    try {
      const kept = path.join(outside, 'not-ours.txt');
      await fs.writeFile(kept, 'x');
      const joeTmp = path.join(dir, 'mail', 'inbox.test', 'joe', 'tmp');
      await fs.rm(joeTmp, { recursive: true });
      await fs.symlink(outside, joeTmp);
      const { store, logs } = await openStore();
      // joe is listed (its tmp/ is another folder now), which is when a start empties tmp/.
      assert.equal(trustedOf(logs), '1 of 2');
      assert.deepEqual(await subjects(store, 'joe'), ['j1', 'j2', 'j3']);
      await fs.access(kept);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  it('ignores a torn snapshot and lists every inbox', async () => {
    await seeded();
    const file = path.join(dir, SNAPSHOT_FILE);
    const text = await fs.readFile(file, 'utf8');
    await fs.writeFile(file, text.slice(0, Math.floor(text.length / 2)));
    const { store, logs } = await openStore();
    assert.ok(logs.some((l) => l.startsWith('warn') && l.includes('not using the index snapshot')), logs.join('\n'));
    assert.equal(trustedOf(logs), undefined);
    assert.deepEqual(await subjects(store, 'joe'), ['j1', 'j2', 'j3']);
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2']);
  });

  it('trusts no inbox of a stale snapshot whose directories changed since, and loses none of the later messages or deletes', async () => {
    const ids = await seeded();
    const stale = await fs.readFile(path.join(dir, SNAPSHOT_FILE));
    const { store } = await openStore();
    // One added and one deleted in each inbox: the counts match the stale snapshot, the files do not.
    await store.add([{ domain: 'inbox.test', inbox: 'joe' }], mail('j4'), 'smtp');
    await store.delete(ids[0].id);
    await store.add([{ domain: 'inbox.test', inbox: 'ann' }], mail('a3'), 'smtp');
    await store.delete(ids[3].id);
    await close(store);
    // The old snapshot put back as a new file (its mtime now, so only the recorded ctimes tell).
    await fs.writeFile(path.join(dir, SNAPSHOT_FILE), stale);
    const { store: after, logs } = await openStore();
    assert.equal(trustedOf(logs), '0 of 2');
    assert.deepEqual(await subjects(after, 'joe'), ['j2', 'j3', 'j4']);
    assert.deepEqual(await subjects(after, 'ann'), ['a2', 'a3']);
  });

  it('lists an inbox whose journal lost lines although its directory did not change', async () => {
    await seeded();
    const journal = path.join(dir, JOURNAL_FILE);
    const lines = (await fs.readFile(journal, 'utf8')).split('\n').filter(Boolean);
    // Drop one of ann's lines: the journal no longer holds what the snapshot counted for ann.
    const annLine = lines.findIndex((l) => l.includes('"ann"'));
    lines.splice(annLine, 1);
    await fs.writeFile(journal, lines.join('\n') + '\n');
    const { store, logs } = await openStore();
    assert.equal(trustedOf(logs), '1 of 2');
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2']);
  });

  it('keeps every message acknowledged after the snapshot by a run killed with SIGKILL (log and files newer than the snapshot)', async () => {
    await seeded();
    // A second run adds to joe and is killed before any clean close: its messages are in the
    // write-ahead log and in joe's new/, maybe not yet in the journal.
    const script = `
      const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
      (async () => {
        const s = new MaildirStore({ dir: ${JSON.stringify(dir)}, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0 });
        await s.open();
        const ids = [];
        for (const subject of ['k1', 'k2', 'k3']) {
          const [m] = await s.add([{ domain: 'inbox.test', inbox: 'joe' }], Buffer.from('From: a@b.test\\r\\nSubject: ' + subject + '\\r\\n\\r\\nx\\r\\n'), 'smtp');
          ids.push(m.id);
        }
        process.stdout.write(JSON.stringify(ids) + '\\n');
        setInterval(() => undefined, 1000);
      })();`;
    const acked = await firstLineThenSigkill<string[]>(script);
    assert.ok((await fs.readdir(dir)).some((f) => f.startsWith('.wal-')), 'the killed run left its log');
    const { store, logs } = await openStore();
    assert.equal(trustedOf(logs), '1 of 2', 'ann is trusted, joe is listed');
    assert.deepEqual(await subjects(store, 'joe'), ['j1', 'j2', 'j3', 'k1', 'k2', 'k3']);
    for (const id of acked) assert.ok(store.get(id), `acknowledged ${id} is there`);
    assert.deepEqual(await subjects(store, 'ann'), ['a1', 'a2']);
  });
});
