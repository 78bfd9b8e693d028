// The index snapshot: what lets open() skip listing every inbox of a large store. Listing a
// million message files to reconcile them with the index journal (journal.ts) costs seconds;
// the snapshot says, for each inbox, how many messages the journal held for it when the store
// last closed cleanly, and the change time (ctime) of its `new/` and `tmp/` directories then.
//
// On open an inbox is trusted (its journal entries taken without a readdir) only when all of
// these hold; otherwise it is listed as before, so a snapshot can only save work, never lose or
// invent a message:
//   - the snapshot file parses and has this version (a torn or foreign one is ignored whole);
//   - the inbox's `new/` and `tmp/` still have the recorded ctime. Every file created, renamed,
//     linked or removed in a directory changes its ctime, and no program can set a ctime back
//     (utimes sets atime and mtime only; a copy, even `cp -a`, gets new ctimes). Messages added
//     after the snapshot (a later run that crashed, the log's replay), files deleted or dropped in
//     behind the store's back: each changes the ctime of the directory it touched;
//   - that ctime is older than the snapshot file by more than RACY_NS, so a change in the same
//     coarse timestamp tick as the snapshot (ext4 stamps with the kernel's tick) cannot hide;
//   - the journal holds as many live entries for the inbox as the snapshot counted (a journal that
//     lost or gained lines for it does not describe its files).
// Written only by a clean close, after the last checkpoint and with the journal flushed and
// fsynced; never deleted on open, since each inbox is checked on its own. It also marks each inbox
// whose `new/` and `tmp/` that run made private (0600) by a walk that ended (store.ts
// makeMailPrivate), created itself, or took as private from the snapshot before. The next start does not walk
// those folders of a trusted inbox so marked: no file was created, renamed or linked there since
// (its ctimes), and the store creates its own files 0600. A file widened in place (chmod) changes
// no folder's ctime and is not caught. Kept per inbox so that a close that cuts a walk short loses
// only what that walk had not done.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { fsyncDir, inboxDirOf, mapLimit } from './layout';
import { fsyncOpenFlags, retryBusy } from '../../../shared/portableFs';

export const SNAPSHOT_FILE = '.index-snapshot';
const SNAPSHOT_VERSION = 2;
/** Version 1 said once for every inbox whether its files were private; still read. */
const SNAPSHOT_VERSION_1 = 1;
/** A directory whose ctime is within this of the snapshot's own mtime may have changed in the same timestamp tick: listed, not trusted. */
export const RACY_NS = 50_000_000n;
/** Directories stat'ed at once. */
const STAT_CONCURRENCY = 32;

/** One inbox as the snapshot records it. */
interface Stamp {
  count: number;
  /** ctime of `new/` and of `tmp/`, ns since the epoch, as decimal strings (JSON has no bigint). */
  newCtime: string;
  tmpCtime: string;
  /** The files of the inbox's new/ and tmp/ were made or taken as private by the run that wrote the snapshot. */
  private: boolean;
}

/** A loaded snapshot: stamps by `<domain>\n<inbox>`, and the snapshot file's own mtime. */
interface IndexSnapshot {
  stamps: Map<string, Stamp>;
  writtenNs: bigint;
}

/** An inbox's key in the snapshot and in the sets made from it: `<domain>\n<inbox>`. */
export const inboxKeyOf = (domain: string, inbox: string): string => `${domain}\n${inbox}`;

/** ctimes (ns) of an inbox's new/ and tmp/; undefined when either is missing. */
async function ctimes(dataDir: string, domain: string, inbox: string): Promise<{ newCtime: bigint; tmpCtime: bigint } | undefined> {
  const dir = inboxDirOf(dataDir, domain, inbox);
  try {
    const [n, t] = await Promise.all([fs.stat(path.join(dir, 'new'), { bigint: true }), fs.stat(path.join(dir, 'tmp'), { bigint: true })]);
    return { newCtime: n.ctimeNs, tmpCtime: t.ctimeNs };
  } catch {
    return undefined;
  }
}

/**
 * Writes the snapshot of a cleanly closed store: `counts` are the live messages per inbox (the
 * index), which the journal must already hold. The journal is fsynced first, so the snapshot
 * never describes journal lines that a power cut could take back.
 */
export async function writeSnapshot(
  dataDir: string,
  journalFile: string,
  counts: Iterable<{ domain: string; inbox: string; count: number }>,
  privateInboxes: ReadonlySet<string>,
): Promise<void> {
  const jh = await fs.open(journalFile, fsyncOpenFlags('file')).catch(() => undefined);
  if (jh) {
    try {
      await jh.datasync();
    } finally {
      await jh.close();
    }
  }
  const list = [...counts];
  const rows: Array<[string, string, number, string, string, 0 | 1]> = [];
  await mapLimit(list, STAT_CONCURRENCY, async ({ domain, inbox, count }) => {
    const c = await ctimes(dataDir, domain, inbox);
    if (c) rows.push([domain, inbox, count, String(c.newCtime), String(c.tmpCtime), privateInboxes.has(inboxKeyOf(domain, inbox)) ? 1 : 0]);
  });
  const file = path.join(dataDir, SNAPSHOT_FILE);
  const tmp = `${file}.tmp`;
  const fh = await fs.open(tmp, 'w', PRIVATE_FILE_MODE);
  try {
    await fh.writeFile(JSON.stringify({ v: SNAPSHOT_VERSION, inboxes: rows }) + '\n');
    await fh.datasync();
  } finally {
    await fh.close();
  }
  await retryBusy(() => fs.rename(tmp, file));
  await fsyncDir(dataDir);
}

/** The snapshot, or undefined (with the reason) when there is none or it cannot be read. */
export async function loadSnapshot(dataDir: string): Promise<{ snapshot?: IndexSnapshot; problem?: string }> {
  const file = path.join(dataDir, SNAPSHOT_FILE);
  let text: string;
  let writtenNs: bigint;
  try {
    const [t, st] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file, { bigint: true })]);
    text = t;
    writtenNs = st.mtimeNs;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { problem: (e as Error).message };
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { problem: `${file} is damaged (not JSON)` };
  }
  const body = v as { v?: unknown; inboxes?: unknown; tightened?: unknown };
  if (typeof v !== 'object' || v === null || (body.v !== SNAPSHOT_VERSION && body.v !== SNAPSHOT_VERSION_1) || !Array.isArray(body.inboxes)) {
    return { problem: `${file} is not a version ${SNAPSHOT_VERSION_1} or ${SNAPSHOT_VERSION} snapshot` };
  }
  const stamps = new Map<string, Stamp>();
  for (const row of body.inboxes as unknown[]) {
    const [domain, inbox, count, newCtime, tmpCtime, priv] = Array.isArray(row) ? (row as unknown[]) : [];
    const isPrivate = body.v === SNAPSHOT_VERSION_1 ? body.tightened === true : priv === 1;
    if (typeof domain !== 'string' || typeof inbox !== 'string' || !Number.isSafeInteger(count) || (count as number) < 0 || !isNs(newCtime) || !isNs(tmpCtime)) {
      return { problem: `${file} is damaged (a bad inbox row)` };
    }
    if (body.v === SNAPSHOT_VERSION && priv !== 0 && priv !== 1) return { problem: `${file} is damaged (a bad inbox row)` };
    stamps.set(inboxKeyOf(domain, inbox), { count: count as number, newCtime, tmpCtime, private: isPrivate });
  }
  return { snapshot: { stamps, writtenNs } };
}

function isNs(v: unknown): v is string {
  return typeof v === 'string' && /^\d{1,30}$/.test(v);
}

/**
 * The inboxes (keys `<domain>\n<inbox>`) whose journal entries can be taken without listing
 * their files (the rules at the top). `journalCounts`: live journal entries per inbox.
 */
export async function trustedInboxes(
  dataDir: string,
  snapshot: IndexSnapshot,
  inboxes: Array<{ domain: string; inbox: string }>,
  journalCounts: Map<string, number>,
): Promise<Set<string>> {
  const trusted = new Set<string>();
  const cutoff = snapshot.writtenNs - RACY_NS;
  await mapLimit(inboxes, STAT_CONCURRENCY, async ({ domain, inbox }) => {
    const key = inboxKeyOf(domain, inbox);
    const stamp = snapshot.stamps.get(key);
    if (!stamp || (journalCounts.get(key) ?? 0) !== stamp.count) return;
    const now = await ctimes(dataDir, domain, inbox);
    if (!now || String(now.newCtime) !== stamp.newCtime || String(now.tmpCtime) !== stamp.tmpCtime) return;
    if (now.newCtime >= cutoff || now.tmpCtime >= cutoff) return;
    trusted.add(key);
  });
  return trusted;
}
