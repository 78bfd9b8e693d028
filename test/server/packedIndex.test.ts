// The packed index (src/server/store/maildir/packedIndex.ts): a clean close writes the whole index as
// one binary file and the next start reads it instead of the JSON journal. Real files and a
// real child process killed with SIGKILL: an old data folder (journal only) opens and is
// upgraded, a torn, damaged or foreign packed file is ignored, a packed index left behind by a
// crashed run is only trusted for what the journal and the files confirm, and every field the
// list and fetch read survives the round trip.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isMetaTerm, parseSearchQuery } from '../../src/core/search';
import { JOURNAL_FILE } from '../../src/server/store/maildir/journal';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { PACKED_INDEX_FILE } from '../../src/server/store/maildir/packedIndex';
import type { MessageMeta, MessageSource } from '../../src/server/store/types';
import { storeSessions } from './storeSessions';
import { firstLineThenSigkill } from './killedChild';
import { rawEmail, type RawEmailOptions } from '../support/messages';

const REPO = path.resolve(__dirname, '..', '..');
/** Longer than the snapshot's racy window, so directories' last changes are clearly older than it. */
const PACKED_LOG = '(index read from the packed index)';

/** This file's mail: no code unless a test writes one. */
const mail = (o: RawEmailOptions = {}): Buffer => rawEmail({ subject: 'Hello', body: 'body', date: null, ...o });

describe('packed index', function () {
  this.timeout(60_000);
  let dir: string;
  const { openStore, close, closeAll } = storeSessions(() => dir);

  const usedPacked = (logs: string[]): boolean => logs.some((l) => l.includes(PACKED_LOG));

  /** Every list the API reads, in both orders, as ids. */
  async function lists(store: MaildirStore): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const [domain, inbox] of [
      ['inbox.test', 'joe'],
      ['inbox.test', 'ann'],
      ['inbox.test', '*'],
      ['other.test', '*'],
      ['other.test', 'joe'],
      [undefined, 'joe'],
      [undefined, '*'],
    ] as const) {
      for (const sort of ['ascending', 'descending'] as const) {
        out[`${domain ?? 'private'}/${inbox}/${sort}`] = (await store.list(domain, inbox, { limit: 1000, skip: 0, sort })).msgs.map((m) => m.id);
      }
    }
    return out;
  }

  /** Messages of every kind of field: sources, codes or none, non-ASCII sender and subject, several domains, an SMS inbox. */
  async function seed(store: MaildirStore): Promise<MessageMeta[]> {
    const metas: MessageMeta[] = [];
    const add = async (domain: string, inbox: string, body: Buffer, source: MessageSource = 'smtp'): Promise<void> => {
      metas.push(...(await store.add([{ domain, inbox }], body, source)));
    };
    await add('inbox.test', 'joe', mail({ subject: 'Your code is 493817', body: 'Use 493817 to sign in.' }));
    await add('inbox.test', 'joe', mail({ subject: 'Grüße aus Köln ✉', from: 'Jürgen Ölmann <j@acme.test>' }), 'inject');
    await add('inbox.test', 'ann', mail({ subject: '' }), 'webhook');
    await add('other.test', 'joe', mail({ subject: 'same name, other domain' }));
    await add('inbox.test', '+15551234567', mail({ subject: 'SMS', body: 'Your verification code: 7731' }));
    metas.push(...(await store.add([{ domain: 'inbox.test', inbox: 'ann' }, { domain: 'other.test', inbox: 'ann' }], mail({ subject: 'to two' }), 'smtp')));
    return metas;
  }

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-packed-'));
  });

  afterEach(async () => {
    await closeAll();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is written by a clean close, read by the next start, and keeps every field the list and fetch read', async () => {
    const { store } = await openStore();
    const metas = await seed(store);
    // The listings read the codes (the records the adds returned keep them).
    const before = await lists(store);
    assert.ok(metas.some((m) => m.code) && metas.some((m) => !m.code), 'messages with and without a code');
    const raws = await Promise.all(metas.map((m) => store.readRaw(m.id)));
    await close(store);
    const st = await fs.stat(path.join(dir, PACKED_INDEX_FILE));
    assert.equal(st.mode & 0o777, 0o600);

    const { store: again, logs } = await openStore();
    assert.ok(usedPacked(logs), logs.join('\n'));
    for (const [i, m] of metas.entries()) {
      assert.deepEqual(again.get(m.id), m);
      assert.deepEqual(await again.readRaw(m.id), raws[i]);
    }
    assert.deepEqual(await lists(again), before);
    assert.deepEqual(again.domains(), store.domains());
    assert.deepEqual(again.inboxes(undefined), store.inboxes(undefined));
  });

  it('answers every search term the same from the packed index as from the records it was written from, the added ones merged in', async () => {
    const { store } = await openStore();
    await seed(store);
    const queries = ['from:jürgen', 'subject:code', '-subject:code', 'has:code', '-has:code', 'code:493817', 'domain:other.test', 'inbox:joe', '-inbox:joe', 'is:sms', 'is:email', 'to:ann@other.test', 'grüße', 'after:2000-01-01', 'before:2000-01-01', 'inbox:ann domain:inbox.test'];
    const answers = async (st: MaildirStore): Promise<string[][]> => {
      const out: string[][] = [];
      for (const q of queries) out.push((await st.search(parseSearchQuery(q, Date.now()).filter(isMetaTerm), { limit: 100, skip: 0, count: true })).msgs.map((m) => m.id));
      return out;
    };
    const before = await answers(store);
    assert.ok(before.some((ids) => ids.length > 0) && before.some((ids) => ids.length === 0), JSON.stringify(before));
    await close(store);
    const { store: again, logs } = await openStore();
    assert.ok(usedPacked(logs), logs.join('\n'));
    assert.deepEqual(await answers(again), before);
    // A page of a counted search: the same slice and the same total as the whole answer.
    const all = await again.search(parseSearchQuery('-subject:code', Date.now()).filter(isMetaTerm), { limit: 100, skip: 0, count: true });
    assert.ok(all.msgs.length >= 4, JSON.stringify(all.msgs.length));
    const page = await again.search(parseSearchQuery('-subject:code', Date.now()).filter(isMetaTerm), { limit: 2, skip: 1, count: true });
    assert.deepEqual(page.msgs, all.msgs.slice(1, 3));
    assert.equal(page.total, all.msgs.length);
    // Added since the packed index: walked with it, newest first.
    const [added] = await again.add([{ domain: 'inbox.test', inbox: 'joe' }], mail({ subject: 'Your code is 123987', from: 'Jürgen <j@acme.test>' }), 'smtp');
    const found = await again.search(parseSearchQuery('from:jürgen', Date.now()).filter(isMetaTerm), { limit: 100, skip: 0, count: true });
    assert.deepEqual(found.msgs.map((m) => m.id), [added.id, ...before[0]]);
  });

  it('merges the packed messages with those added and removed since, and keeps the result across the next clean close', async () => {
    const { store } = await openStore();
    const metas = await seed(store);
    await close(store);
    const { store: second, logs } = await openStore();
    assert.ok(usedPacked(logs));
    const [added] = await second.add([{ domain: 'inbox.test', inbox: 'joe' }], mail({ subject: 'after the packed index' }), 'smtp');
    assert.equal(await second.delete(metas[0].id), true);
    assert.equal(await second.delete(metas[0].id), false, 'a packed message is removed once');
    assert.equal(await second.get(metas[0].id), undefined);
    const joe = await second.list('inbox.test', 'joe', { limit: 1000, skip: 0, sort: 'descending' });
    assert.deepEqual(
      joe.msgs.map((m) => m.id),
      [added.id, metas[1].id],
    );
    assert.equal(joe.total, 2);
    // A cursor page that starts in the new messages and continues in the packed ones.
    const page1 = await second.list('inbox.test', '*', { limit: 2, skip: 0, sort: 'descending' });
    const page2 = await second.list('inbox.test', '*', { limit: 100, skip: 0, sort: 'descending', cursor: page1.nextCursor });
    assert.deepEqual(
      [...page1.msgs, ...page2.msgs].map((m) => m.id),
      (await second.list('inbox.test', '*', { limit: 100, skip: 0, sort: 'descending' })).msgs.map((m) => m.id),
    );
    assert.equal(await second.clear('other.test', '*'), 2);
    const expected = await lists(second);
    await close(second);
    const { store: third, logs: thirdLogs } = await openStore();
    assert.ok(usedPacked(thirdLogs));
    assert.deepEqual(await lists(third), expected);
    assert.deepEqual(third.get(added.id), added);
  });

  it('opens a data folder of the old format (journal only), then upgrades it', async () => {
    const { store } = await openStore();
    const metas = await seed(store);
    const before = await lists(store);
    await close(store);
    // What a data folder of an earlier version holds: the journal, no packed index.
    await fs.rm(path.join(dir, PACKED_INDEX_FILE));
    const { store: old, logs } = await openStore();
    assert.equal(usedPacked(logs), false);
    assert.equal((await old.get(metas[0].id))?.code, metas[0].code);
    assert.deepEqual(await lists(old), before);
    await close(old);
    await fs.access(path.join(dir, PACKED_INDEX_FILE));
    const { store: upgraded, logs: upgradedLogs } = await openStore();
    assert.ok(usedPacked(upgradedLogs), upgradedLogs.join('\n'));
    assert.deepEqual(await lists(upgraded), before);
  });

  for (const [name, damage] of [
    ['torn', (b: Buffer) => b.subarray(0, Math.floor(b.length / 2))],
    ['damaged', (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 3), Buffer.from([b[b.length - 3] ^ 0xff]), b.subarray(b.length - 2)])],
    ['foreign', (b: Buffer) => Buffer.alloc(b.length, 7)],
    ['empty', () => Buffer.alloc(0)],
  ] as const) {
    it(`ignores a ${name} packed index and reads the whole journal`, async () => {
      const { store } = await openStore();
      await seed(store);
      const before = await lists(store);
      await close(store);
      const file = path.join(dir, PACKED_INDEX_FILE);
      await fs.writeFile(file, damage(await fs.readFile(file)));
      const { store: again, logs } = await openStore();
      assert.equal(usedPacked(logs), false);
      assert.ok(logs.some((l) => l.startsWith('warn') && l.includes('not using the packed index')), logs.join('\n'));
      assert.deepEqual(await lists(again), before);
    });
  }

  it('is not used for a journal compacted or replaced since it was written', async () => {
    const { store } = await openStore();
    const metas = await seed(store);
    await close(store);
    // The journal replaced by one that says less: the packed index no longer describes it, so
    // the start reads the journal and lists the files (the packed index invents nothing).
    await fs.writeFile(path.join(dir, JOURNAL_FILE), '');
    const { store: again, logs } = await openStore();
    assert.equal(usedPacked(logs), false);
    for (const m of metas) assert.equal((await again.get(m.id))?.subject, m.subject);
  });

  it('after a run killed with SIGKILL, keeps what that run added and removed (journal after the packed index, files)', async () => {
    const { store } = await openStore();
    const metas = await seed(store);
    await close(store);
    const joeFirst = metas[0].id;
    const annFirst = metas[2].id;
    // A second run adds to joe, deletes one packed message of joe and one of ann, and is killed
    // before any clean close: the packed index on disk is now stale.
    const script = `
      const { MaildirStore } = require(${JSON.stringify(path.join(REPO, 'src', 'server', 'store', 'maildir', 'store.ts'))});
      (async () => {
        const s = new MaildirStore({ dir: ${JSON.stringify(dir)}, retention: { maxMessages: 0, maxAgeMs: 0 }, checkpointIntervalMs: 0 });
        await s.open();
        const ids = [];
        for (const subject of ['k1', 'k2']) {
          const [m] = await s.add([{ domain: 'inbox.test', inbox: 'joe' }], Buffer.from('From: a@b.test\\r\\nSubject: ' + subject + '\\r\\n\\r\\nx\\r\\n'), 'smtp');
          ids.push(m.id);
        }
        await s.delete(${JSON.stringify(joeFirst)});
        await s.delete(${JSON.stringify(annFirst)});
        process.stdout.write(JSON.stringify(ids) + '\\n');
        setInterval(() => undefined, 1000);
      })();`;
    const acked = await firstLineThenSigkill<string[]>(script);
    const { store: after, logs } = await openStore();
    assert.ok(usedPacked(logs), 'the journal only grew, so the packed index still describes its start');
    assert.equal(after.get(joeFirst), undefined, 'deleted by the killed run');
    assert.equal(after.get(annFirst), undefined, 'deleted by the killed run');
    for (const id of acked) assert.ok(after.get(id), `acknowledged ${id} is there`);
    assert.deepEqual(
      (await after.list('inbox.test', 'joe', { limit: 100, skip: 0, sort: 'ascending' })).msgs.map((m) => m.subject),
      [metas[1].subject, 'k1', 'k2'],
    );
    assert.deepEqual(
      (await after.list('inbox.test', 'ann', { limit: 100, skip: 0, sort: 'ascending' })).msgs.map((m) => m.id),
      [metas[5].id],
    );
  });

  it('after a run killed with SIGKILL whose journal lines were lost, lists the inboxes that changed', async () => {
    const { store } = await openStore();
    const metas = await seed(store);
    await close(store);
    const journalBefore = await fs.readFile(path.join(dir, JOURNAL_FILE));
    // A run that removes a packed message's file and adds a file, with no journal line for either.
    await fs.rm(path.join(dir, 'mail', 'inbox.test', 'ann', 'new', `${metas[2].id}.eml`));
    const droppedId = metas[1].id.replace(/-(\d+)$/, (_, n: string) => `-${Number(n) + 1000}`);
    await fs.writeFile(path.join(dir, 'mail', 'inbox.test', 'joe', 'new', `${droppedId}.eml`), mail({ subject: 'dropped in' }));
    assert.deepEqual(await fs.readFile(path.join(dir, JOURNAL_FILE)), journalBefore);
    const { store: after, logs } = await openStore();
    assert.ok(usedPacked(logs));
    assert.equal(after.get(metas[2].id), undefined, 'its file is gone');
    assert.equal((await after.get(droppedId))?.subject, 'dropped in');
    assert.equal((await after.get(metas[0].id))?.code, metas[0].code);
  });
});
