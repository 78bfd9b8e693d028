// The layout of a data dir. What senders name and what the server owns have separate roots,
// so that no domain or inbox name can ever reach a server file:
//
//   <data>/mail/<domain>/<inbox>/{tmp,new,cur}/<id>.eml   mail, every name through encodeFileName
//   <data>/<anything else>                                 the server's own files: .lock, .layout,
//                                                          .wal-N, .index-journal, tokens.json,
//                                                          server.json, .spool/ (SMTP bodies while
//                                                          they arrive), and whatever comes later
//
// Until layout 2 (release 0.2.0) domains were directories beside the server's files, so an
// address like x@tokens.json made a directory where the tokens file belongs. A data dir of that
// layout is migrated on open: its domain directories move into mail/ and names are re-encoded.
// The directory is 0700 and every file in it 0600; a migration tightens what older releases
// left readable (0644 files in 0755 directories).

import { close as closeCb, type Dir, type Dirent, fsync as fsyncCb, lstatSync, open as openCb, promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { decodeFileName, encodeFileName } from '../../../core/fileNames';
import { domainProblem } from '../../../core/ids';
import { PRIVATE_FILE_MODE, writePrivateFile } from '../../../shared/privateFile';
import { fsyncOpenFlags, modesApply, retryBusy } from '../../../shared/portableFs';
import { StoreError } from '../errors';
import { lockDataDir } from './lock';
import { VERSION } from '../../version';

/** The root of all mail: nothing else lives under it, and nothing a sender names lives outside it. */
export const MAIL_DIR = 'mail';
/** The mail root while a migration fills it; renamed to MAIL_DIR once complete. Not a domain name (leading dot). */
const MIGRATING_MAIL_DIR = '.mail-migrating';
/** The layout version of the data dir (`2\n`); absent in data dirs of releases up to 0.2.0. */
export const LAYOUT_FILE = '.layout';
const LAYOUT_VERSION = 2;
/**
 * The release of Test Inbox that last opened the data dir (`0.2.0\n`), so that a server of
 * another release that cannot read the layout says which release wrote it. A file of its own:
 * releases that read LAYOUT_FILE as a bare number keep reading it.
 */
export const WRITER_FILE = '.written-by';
/** Owner only: the data dir and every directory in it. */
export const PRIVATE_DIR_MODE = 0o700;
/** Entries chmodded at once while tightening: overlaps the syscalls without exhausting the thread pool. */
const TIGHTEN_CONCURRENCY = 32;
/** Directory entries read at once while tightening. */
const DIR_BATCH = 256;

type Log = (level: 'info' | 'warn' | 'error', msg: string) => void;

type MessageSub = 'tmp' | 'new';

/** The mail root of a data dir. */
export function mailRoot(dataDir: string): string {
  return path.join(dataDir, MAIL_DIR);
}

/** The directory of an inbox (holding tmp/, new/, cur/). */
export function inboxDirOf(dataDir: string, domain: string, inbox: string): string {
  return path.join(dataDir, MAIL_DIR, encodeFileName(domain), encodeFileName(inbox));
}

/**
 * Why mail for an inbox must not be written now, or undefined: a folder on its way (mail/, the
 * domain's, the inbox's, its tmp/ and new/) is a symbolic link, which mail is never written
 * through (it would land wherever the link points). Missing folders are no problem (they are
 * made). Synchronous and cheap (five lstat calls): called at
 * the point of use, before each delivery and each file written.
 */
function mailPathProblemSync(dataDir: string, domain: string, inbox: string): string | undefined {
  const inboxDir = inboxDirOf(dataDir, domain, inbox);
  for (const p of [mailRoot(dataDir), path.dirname(inboxDir), inboxDir, path.join(inboxDir, 'tmp'), path.join(inboxDir, 'new')]) {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (st === undefined) continue;
    // (A file in a folder's place makes the mkdir or the write fail: an IO error.)
    if (st.isSymbolicLink()) return `the folder ${path.relative(dataDir, p)} of ${inbox}@${domain} in the data dir is a symbolic link; Test Inbox never writes mail through one (remove the link: the inbox is made anew)`;
  }
  return undefined;
}

/** mailPathProblemSync as a StoreError unsafe to throw, or undefined. */
export function mailPathError(dataDir: string, domain: string, inbox: string): StoreError | undefined {
  const problem = mailPathProblemSync(dataDir, domain, inbox);
  return problem === undefined ? undefined : new StoreError('unsafe', problem);
}

/** The one mapping from a message to its file: `<data>/mail/<domain>/<inbox>/<sub>/<id>.eml`. */
export function messageFileOf(dataDir: string, m: { domain: string; inbox: string; id: string }, sub: MessageSub = 'new'): string {
  return path.join(inboxDirOf(dataDir, m.domain, m.inbox), sub, encodeFileName(m.id) + '.eml');
}

/**
 * Makes `dir` a data dir of the current layout: creates it (0700), migrates an older layout,
 * and tightens the modes of what older releases left readable. Call with the data dir's lock
 * held. Idempotent: a migration cut off by a crash continues on the next call.
 */
export async function prepareDataDir(dir: string, log: Log): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmodIfNeeded(dir, PRIVATE_DIR_MODE);
  const version = await readLayoutVersion(dir);
  if (version !== undefined && version > LAYOUT_VERSION) {
    // Never touched: a server of another version reads a data dir or refuses it, saying who wrote it.
    const writer = await readWriter(dir);
    throw new StoreError(
      'io',
      `the data dir ${dir} has layout ${version}, written by ${writer ? `Test Inbox ${writer}` : 'a newer Test Inbox'}; this is Test Inbox ${VERSION} (layout ${LAYOUT_VERSION}), which cannot read it without damage: use that version or another data dir`,
    );
  }
  if (version === undefined) {
    await migrate(dir, log);
  } else if (await exists(path.join(dir, MIGRATING_MAIL_DIR))) {
    // A migration wrote the layout file and stopped before its last rename.
    await installMailRoot(dir, log);
  }
  // The server's own files are few: tighten them on every start (an older release or a copy may have widened them).
  for (const dent of await fs.readdir(dir, { withFileTypes: true })) {
    if (dent.name === MAIL_DIR) continue;
    await tightenEntry(path.join(dir, dent.name), dent);
  }
  if ((await readWriter(dir)) !== VERSION) await writePrivateFile(path.join(dir, WRITER_FILE), `${VERSION}\n`);
}

/** The release that last opened the data dir (WRITER_FILE), or undefined. */
async function readWriter(dir: string): Promise<string | undefined> {
  try {
    const v = (await fs.readFile(path.join(dir, WRITER_FILE), 'utf8')).trim();
    return /^[0-9A-Za-z.+-]{1,40}$/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * prepareDataDir under the data dir's lock, for callers that read the server's files before the
 * store opens (the CLI reads tokens.json first). When another server holds the lock it has
 * prepared the dir already, and this does nothing (the store's open then reports LOCKED).
 */
export async function prepareDataDirLocked(dir: string, log: Log): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  let unlock: () => Promise<void>;
  try {
    unlock = await lockDataDir(dir);
  } catch (e) {
    if (StoreError.is(e, 'locked')) return;
    throw e;
  }
  try {
    await prepareDataDir(dir, log);
  } finally {
    await unlock();
  }
}

/** Moves the domain directories of a layout-1 data dir into the mail root and re-encodes their names. */
async function migrate(dir: string, log: Log): Promise<void> {
  const staging = path.join(dir, MIGRATING_MAIL_DIR);
  await fs.mkdir(staging, { recursive: true, mode: PRIVATE_DIR_MODE });
  let moved = 0;
  for (const dent of await fs.readdir(dir, { withFileTypes: true })) {
    if (!dent.isDirectory() || dent.name.startsWith('.')) continue;
    const domain = dent.name;
    const from = path.join(dir, domain);
    // A layout-1 domain directory: a valid lower-case domain holding at least one inbox (a directory with new/).
    if (domain !== domain.toLowerCase() || domainProblem(domain) || !(await holdsInbox(from))) continue;
    const to = path.join(staging, encodeFileName(domain));
    if (await exists(to)) {
      log('warn', `store: not migrating ${from}: ${to} exists`);
      continue;
    }
    await retryBusy(() => fs.rename(from, to));
    moved++;
  }
  let renamed = 0;
  for (const d of await dirNames(staging)) {
    for (const i of await dirNames(path.join(staging, d))) {
      const inboxDir = path.join(staging, d, await reencode(path.join(staging, d), i, '', () => renamed++));
      for (const sub of ['new', 'cur', 'tmp']) {
        for (const f of await names(path.join(inboxDir, sub))) {
          if (f.endsWith('.eml')) await reencode(path.join(inboxDir, sub), f.slice(0, -4), '.eml', () => renamed++);
        }
      }
    }
  }
  await tightenTree(staging);
  await fsyncDir(staging);
  await writePrivateFile(path.join(dir, LAYOUT_FILE), `${LAYOUT_VERSION}\n`);
  await installMailRoot(dir, log);
  if (moved > 0) log('info', `store: moved ${moved} domain(s) of an older data dir into ${mailRoot(dir)}${renamed > 0 ? `, ${renamed} name(s) re-encoded` : ''}`);
}

/** Makes the migration's staging directory the mail root; merged into a mail/ that is already there (not a domain of the old layout). */
async function installMailRoot(dir: string, log: Log): Promise<void> {
  const staging = path.join(dir, MIGRATING_MAIL_DIR);
  const root = mailRoot(dir);
  if (!(await exists(root))) {
    await retryBusy(() => fs.rename(staging, root));
  } else {
    for (const n of await names(staging)) {
      if (await exists(path.join(root, n))) log('warn', `store: not migrating ${path.join(staging, n)}: ${path.join(root, n)} exists`);
      else await retryBusy(() => fs.rename(path.join(staging, n), path.join(root, n)));
    }
    await retryBusy(() => fs.rmdir(staging)).catch((e: unknown) => log('warn', `store: ${staging} is left over from a migration: ${(e as Error).message}`));
    await fsyncDir(root);
  }
  await fsyncDir(dir);
}

/** Renames `<parent>/<stem><ext>` from the layout-1 encoding to encodeFileName; answers the stem's current file name. */
async function reencode(parent: string, stem: string, ext: string, counted: () => void): Promise<string> {
  if (decodeFileName(stem) !== undefined) return stem + ext;
  const name = decodeLegacyName(stem);
  if (name === undefined) return stem + ext; // not ours; the store's scan skips it with a warning
  const now = encodeFileName(name) + ext;
  await retryBusy(() => fs.rename(path.join(parent, stem + ext), path.join(parent, now)));
  counted();
  return now;
}

const LEGACY_PLAIN = /^[a-z0-9._+=-]+$/;

/** The name a layout-1 file name stood for: `%XX` per UTF-16 code unit outside `[a-z0-9._+=-]`. */
function decodeLegacyName(s: string): string | undefined {
  if (LEGACY_PLAIN.test(s)) return s;
  const decoded = s.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  let again = '';
  for (const c of decoded) again += LEGACY_PLAIN.test(c) ? c : '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  return again === s ? decoded : undefined;
}

// ---- modes ---------------------------------------------------------------------------------

interface TightenOptions {
  /** Directories whose entries are not listed (the directory itself is still tightened). */
  skip?: ReadonlySet<string>;
  /** Filled with the directories of `skip` the walk met as real directories (never through a symlink): the ones a caller may walk later. */
  met?: Set<string>;
  /** Checked between folders and between batches of entries: true ends the walk early (a store closing). */
  stopped?: () => boolean;
}

/**
 * Sets every directory under `root` (and root) to 0700 and every file to 0600; symlinks are never
 * followed, root included (a root that is a file is made 0600). Resolves how many entries it
 * changed, and whether it walked the whole tree.
 */
export async function tightenTree(root: string, options: TightenOptions = {}): Promise<{ changed: number; complete: boolean }> {
  // Where modes are ACLs there is nothing to tighten, and no reason to walk the tree.
  if (!modesApply()) return { changed: 0, complete: true };
  const top = await lstatOrUndefined(root);
  if (!top || top.isSymbolicLink()) return { changed: 0, complete: true };
  if (!top.isDirectory()) return { changed: (await chmodFrom(root, top, PRIVATE_FILE_MODE)) ? 1 : 0, complete: true };
  let level: string[] = [root];
  let changed = (await chmodFrom(root, top, PRIVATE_DIR_MODE)) ? 1 : 0;
  let complete = true;
  const stopped = (): boolean => {
    if (options.stopped?.()) complete = false;
    return !complete;
  };
  while (level.length > 0) {
    const next: string[] = [];
    await mapLimit(level, TIGHTEN_CONCURRENCY, async (d) => {
      if (options.skip?.has(d)) {
        options.met?.add(d);
        return;
      }
      if (stopped()) return;
      await forEachDirent(d, stopped, async (dent) => {
        const p = path.join(d, dent.name);
        if (await tightenEntry(p, dent)) changed++;
        if (dent.isDirectory()) next.push(p);
      });
    });
    level = next;
  }
  return { changed, complete };
}

/**
 * Runs `fn` over the entries of `dir`, TIGHTEN_CONCURRENCY at once, reading them DIR_BATCH at a
 * time: a folder of half a million messages never becomes one array of half a million Dirents.
 * A missing folder (or a file) has no entries; `stopped` ends the walk between batches.
 */
async function forEachDirent(dir: string, stopped: () => boolean, fn: (dent: Dirent) => Promise<void>): Promise<void> {
  let handle: Dir;
  try {
    handle = await fs.opendir(dir, { bufferSize: DIR_BATCH });
  } catch (e) {
    if (isMissing(e)) return;
    throw e;
  }
  let batch: Dirent[] = [];
  // Leaving the loop early (break, throw) closes the handle.
  for await (const dent of handle) {
    batch.push(dent);
    if (batch.length < DIR_BATCH) continue;
    await mapLimit(batch, TIGHTEN_CONCURRENCY, fn);
    batch = [];
    if (stopped()) return;
  }
  await mapLimit(batch, TIGHTEN_CONCURRENCY, fn);
}

async function tightenEntry(p: string, dent: Dirent): Promise<boolean> {
  if (dent.isDirectory()) return chmodIfNeeded(p, PRIVATE_DIR_MODE);
  if (dent.isFile()) return chmodIfNeeded(p, PRIVATE_FILE_MODE);
  // Symlinks, sockets and the like are left alone: chmod would follow a link out of the data dir.
  return false;
}

/** The error of a path that is not there (or runs through a file). */
function isMissing(e: unknown): boolean {
  return ['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '');
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await fs.lstat(p);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
}

async function chmodIfNeeded(p: string, mode: number): Promise<boolean> {
  let st: Stats;
  try {
    st = await fs.lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return false;
  }
  return chmodFrom(p, st, mode);
}

/**
 * Sets the mode of `p`, whose lstat is `st`, unless it has it already or is a symlink; a path
 * gone meanwhile is left. Nothing where modes are ACLs (Windows: portableFs.ts modesApply), where
 * every file would look "widened" and be chmodded on every start to no effect.
 */
async function chmodFrom(p: string, st: Stats, mode: number): Promise<boolean> {
  if (!modesApply() || st.isSymbolicLink() || (st.mode & 0o777) === mode) return false;
  try {
    await fs.chmod(p, mode);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return false;
  }
}

// ---- helpers -------------------------------------------------------------------------------

async function readLayoutVersion(dir: string): Promise<number | undefined> {
  try {
    const v = Number((await fs.readFile(path.join(dir, LAYOUT_FILE), 'utf8')).trim());
    if (!Number.isSafeInteger(v) || v < 1) throw new StoreError('io', `${path.join(dir, LAYOUT_FILE)} is damaged; it should hold ${LAYOUT_VERSION}`);
    return v;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

async function holdsInbox(domainDir: string): Promise<boolean> {
  for (const i of await dirNames(domainDir)) if (await exists(path.join(domainDir, i, 'new'))) return true;
  return false;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

async function direntsOrEmpty(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
}

async function dirNames(dir: string): Promise<string[]> {
  return (await direntsOrEmpty(dir)).filter((d) => d.isDirectory()).map((d) => d.name);
}

async function names(dir: string): Promise<string[]> {
  return (await direntsOrEmpty(dir)).map((d) => d.name);
}

/**
 * fsync of one path through the callback API, opened as fsync needs it on every platform
 * (portableFs.ts fsyncOpenFlags: a file for writing, which Windows requires): no FileHandle and no promise per step (a checkpoint
 * runs this for every message file it makes durable; FileHandle's open, sync and close promises
 * cost the main thread more than the calls). Errors whose codes are in `skipOpen` (at open) or
 * `skipSync` (at fsync) mean "nothing to do here" and resolve.
 */
export function fsyncPath(file: string, kind: 'file' | 'dir', skipOpen: ReadonlySet<string>, skipSync: ReadonlySet<string>, sync: SyncFd = fsyncCb): Promise<void> {
  return new Promise((resolve, reject) => {
    openCb(file, fsyncOpenFlags(kind), (openErr, fd) => {
      if (openErr) {
        if (skipOpen.has(openErr.code ?? '')) resolve();
        else reject(openErr);
        return;
      }
      sync(fd, (syncErr) => {
        closeCb(fd, (closeErr) => {
          const e = syncErr && !skipSync.has(syncErr.code ?? '') ? syncErr : closeErr;
          if (e) reject(e);
          else resolve();
        });
      });
    });
  });
}

/** An fsync of an open descriptor, callback style (`fs.fsync`; a test seam may hold it). */
export type SyncFd = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

/** Windows opens no directory. */
const DIR_OPEN_SKIP: ReadonlySet<string> = new Set(['EISDIR', 'EPERM', 'EACCES']);
/** File systems that cannot sync a directory. */
const DIR_SYNC_SKIP: ReadonlySet<string> = new Set(['EINVAL', 'EPERM', 'EISDIR', 'ENOTSUP', 'EBADF']);

/** fsyncs a directory so that renames and unlinks in it are durable; a no-op where directories cannot be synced (Windows, some file systems). */
export function fsyncDir(dir: string, sync?: SyncFd): Promise<void> {
  return fsyncPath(dir, 'dir', DIR_OPEN_SKIP, DIR_SYNC_SKIP, sync);
}

/** Runs `fn` over the items with at most `limit` running at once. */
export async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
