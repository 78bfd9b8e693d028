// Durability of the Maildir store: one RFC 5322 `.eml` per message under
// `<dir>/<domain>/<inbox>/{tmp,new,cur}`, written to tmp/ and renamed into new/, made durable
// by the write-ahead log (wal.ts) before it is acknowledged. Checkpoints flush the .eml files
// (syncfs, or one fsync per file where that is unavailable) and drop the log generation.
// Recovery on open replays what a crash left in the log and reconciles the index journal with
// a readdir of every inbox. Knows nothing of the in-memory index (memoryIndex.ts) or events:
// the store facade (maildir.ts) composes the two.
import { execFile } from 'node:child_process';
import { promises as fs, linkSync, renameSync, rmSync, writeFileSync, type Dirent } from 'node:fs';
import * as path from 'node:path';
import { ALL_INBOXES, domainProblem, inboxNameProblem, isPhoneInbox, normalizeInbox, parseMessageId } from '../../core/ids';
import { detectCode } from './code';
import { StoreError } from './errors';
import { parseIndexedHeaders } from './headers';
import type { IndexRecord } from './ordered';
import type { MessageMeta } from './types';
import { linkRecord, messageRecord, type WalMessage, WriteAheadLog } from './wal';

/** Checkpoint once the log holds this much: bounds the replay work after a crash. */
export const WAL_CHECKPOINT_BYTES = 32 * 1024 * 1024;
/** Files read or directories listed at once on open: enough to overlap I/O without exhausting file descriptors. */
const OPEN_CONCURRENCY = 32;
/** Files fsynced at once by a checkpoint without syncfs. */
const FLUSH_CONCURRENCY = 16;
/** A syncfs (`sync -f`) that takes longer than this is given up on and the files are fsynced one by one. */
const SYNCFS_TIMEOUT_MS = 60_000;

type LogLevel = 'info' | 'warn' | 'error';
export type StoreLog = (level: LogLevel, msg: string) => void;

/** One delivery waiting for the group commit. */
export interface CommitItem {
  recs: IndexRecord[];
  raw: Buffer;
  /** Set when the item was rejected before its files were written. */
  failed?: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** link() errors that mean "this file system has no hard links" (FAT, some network shares), not a failed write. */
const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS', 'EMLINK']);

const SAFE_NAME_CHAR = /[a-z0-9._+=-]/;

/** File-system form of a (lowercase, validated) name: characters outside `[a-z0-9._+=-]` become `%XX`, so `*`, `?`, `|` and friends never reach the file system raw. */
export function encodeName(name: string): string {
  let out = '';
  for (const c of name) out += SAFE_NAME_CHAR.test(c) ? c : '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  return out;
}

const PLAIN_NAME = /^[a-z0-9._+=-]+$/;

/** Inverse of encodeName, or undefined when `s` is not something encodeName produces. */
export function decodeName(s: string): string | undefined {
  if (PLAIN_NAME.test(s)) return s;
  let decoded: string;
  try {
    decoded = s.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  } catch {
    return undefined;
  }
  return encodeName(decoded) === s ? decoded : undefined;
}

function recordOf(meta: MessageMeta): IndexRecord | undefined {
  const p = parseMessageId(meta.id);
  return p && { meta, seconds: p.seconds, counter: p.counter, dead: false };
}

function storeFailure(e: unknown): StoreError {
  return StoreError.is(e) ? e : new StoreError('IO', `could not store the message: ${(e as Error).message}`, { cause: e });
}

export class MaildirFiles {
  readonly wal: WriteAheadLog;
  /** Files committed to the current log generation, to flush at the next checkpoint. */
  private unflushed: string[] = [];
  private checkpointRun: Promise<void> | undefined;
  /** `sync -f` (syncfs) flushes a whole checkpoint at once; Linux only, dropped after a failure. */
  private syncfsUsable = process.platform === 'linux';
  private readonly readyDirs = new Map<string, Promise<void>>();
  /** Recipients of one message share one file through hard links; dropped where the file system refuses them. */
  private linksUsable = true;

  constructor(
    readonly dir: string,
    private readonly log: StoreLog,
  ) {
    this.wal = new WriteAheadLog(dir);
  }

  /** Where a message's file lives (in `new/`, or `tmp/` while being written). */
  pathOf(meta: Pick<MessageMeta, 'domain' | 'inbox' | 'id'>, sub: 'tmp' | 'new' = 'new'): string {
    return path.join(this.dir, encodeName(meta.domain), encodeName(meta.inbox), sub, encodeName(meta.id) + '.eml');
  }

  // ---- recovery --------------------------------------------------------------------------

  /** Rewrites what the log holds but the files lost (a crash before the checkpoint), flushes it, and starts a fresh log. */
  async replayLog(): Promise<void> {
    const rec = await this.wal.recover();
    for (const f of rec.tornFiles) this.log('warn', `store: ${f} ends in an incomplete record (a delivery cut off before it was acknowledged); the rest is replayed`);
    let restored = 0;
    const files: string[] = [];
    for (const m of rec.messages.values()) {
      const problem = domainProblem(m.domain) ?? inboxNameProblem(m.inbox);
      const parsed = parseMessageId(m.id);
      if (problem || !parsed || parsed.inbox !== m.inbox) {
        this.log('warn', `store: skipping a logged message ${JSON.stringify(m.id)}: ${problem ?? 'bad id'}`);
        continue;
      }
      const file = this.pathOf(m, 'new');
      files.push(file);
      if (await this.restore(m, file)) restored++;
    }
    if (rec.files.length > 0) {
      await this.flush(files);
      for (const f of rec.files) await fs.rm(f, { force: true });
    }
    if (restored > 0) this.log('warn', `store: restored ${restored} acknowledged message(s) from the write-ahead log`);
    await this.wal.start(rec.lastGeneration + 1);
  }

  private async restore(m: WalMessage, file: string): Promise<boolean> {
    try {
      if ((await fs.readFile(file)).equals(m.raw)) return false;
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT') throw e;
    }
    await this.ensureInboxDir(m.domain, m.inbox);
    const tmp = this.pathOf(m, 'tmp');
    await fs.rm(tmp, { force: true });
    await writeDurably(tmp, m.raw, m.time);
    await fs.rename(tmp, file);
    return true;
  }

  /**
   * Reconciles the journal's records with the directories: a journal record whose file is
   * there is revived (`dead = false`), a file the journal does not know is indexed from its
   * headers (returned in `parsedRecs`). Leftovers in tmp/ (never acknowledged) are removed.
   */
  async scan(journal: Map<string, IndexRecord>): Promise<{ parsedRecs: IndexRecord[]; maxCounter: number }> {
    const unknown: Array<{ domain: string; inbox: string; id: string; file: string }> = [];
    const inboxDirs: Array<{ domain: string; inbox: string; dir: string }> = [];

    for (const dent of await readdirOrEmpty(this.dir)) {
      if (dent.name.startsWith('.') || !dent.isDirectory()) continue; // the journal, the log, tokens.json and other files of the data dir
      const domain = dent.name;
      if (domain !== domain.toLowerCase() || domainProblem(domain)) {
        this.log('warn', `store: skipping ${path.join(this.dir, domain)}: not a domain directory`);
        continue;
      }
      for (const idir of await readdirOrEmpty(path.join(this.dir, domain))) {
        const inbox = decodeName(idir.name);
        if (!idir.isDirectory() || inbox === undefined || inbox === ALL_INBOXES || inbox !== normalizeInbox(inbox) || inboxNameProblem(inbox)) {
          this.log('warn', `store: skipping ${path.join(this.dir, domain, idir.name)}: not an inbox directory`);
          continue;
        }
        inboxDirs.push({ domain, inbox, dir: path.join(this.dir, domain, idir.name) });
      }
    }

    await mapLimit(inboxDirs, OPEN_CONCURRENCY, async ({ domain, inbox, dir }) => {
      let files: string[];
      try {
        // Files left in tmp/ were never acknowledged: remove them.
        for (const t of await namesOrEmpty(path.join(dir, 'tmp'))) {
          await fs.rm(path.join(dir, 'tmp', t), { force: true }).catch(() => undefined);
        }
        // Names only (no file types): 100,000 Dirent objects cost more than the whole index. A
        // directory named like a message fails when it is read, which skips it with a warning.
        files = await namesOrEmpty(path.join(dir, 'new'));
      } catch (e) {
        this.log('warn', `store: skipping ${dir}: ${(e as Error).message}`);
        return;
      }
      for (const name of files) {
        const id = name.endsWith('.eml') ? decodeName(name.slice(0, -4)) : undefined;
        const known = id === undefined ? undefined : journal.get(id);
        if (known && known.meta.domain === domain && known.meta.inbox === inbox) {
          known.dead = false;
          continue;
        }
        const file = path.join(dir, 'new', name);
        if (id === undefined || parseMessageId(id)?.inbox !== inbox) {
          this.log('warn', `store: skipping ${file}: not a message file of this store`);
          continue;
        }
        unknown.push({ domain, inbox, id, file });
      }
    });

    const seen = new Set<string>();
    const toParse = unknown.filter((u) => {
      if (journal.get(u.id)?.dead === false || seen.has(u.id)) {
        this.log('warn', `store: skipping ${u.file}: message id ${u.id} is already stored elsewhere`);
        return false;
      }
      seen.add(u.id);
      return true;
    });
    let maxCounter = 0;
    const parsedRecs: IndexRecord[] = [];
    await mapLimit(toParse, OPEN_CONCURRENCY, async ({ domain, inbox, id, file }) => {
      try {
        const [raw, st] = await Promise.all([fs.readFile(file), fs.stat(file)]);
        const headers = parseIndexedHeaders(raw);
        if (!headers) {
          this.log('warn', `store: skipping ${file}: no RFC 5322 header block`);
          return;
        }
        const p = parseMessageId(id);
        if (!p) return;
        maxCounter = Math.max(maxCounter, p.counter);
        // The file was written at receipt; keep its time within the id's second.
        const time = Math.min(Math.max(Math.round(st.mtimeMs), p.seconds * 1000), p.seconds * 1000 + 999);
        const code = await detectCode(raw, isPhoneInbox(inbox));
        const rec = recordOf({ id, domain, inbox, time, from: headers.from, subject: headers.subject, size: raw.length, source: 'smtp', ...(code ? { code } : {}) });
        if (rec) parsedRecs.push(rec);
      } catch (e) {
        this.log('warn', `store: skipping ${file}: ${(e as Error).message}`);
      }
    });
    return { parsedRecs, maxCounter };
  }

  // ---- writes ----------------------------------------------------------------------------

  /**
   * Makes a batch of queued deliveries durable: their files are written and renamed into new/,
   * then one log write and one fdatasync cover them all. The files are written synchronously,
   * between two fdatasyncs and never during one: a batch of small writes costs less without a
   * thread-pool hop each, and the event loop is held for microseconds per message. Items that
   * fail are rejected here; resolves with the items now durable (not yet resolved: the caller
   * indexes and announces them first).
   */
  async commit(queued: CommitItem[]): Promise<CommitItem[]> {
    await this.prepareDirs(queued);
    const batch = queued.filter((b) => this.materialize(b));
    if (batch.length === 0) return [];
    const parts: Buffer[] = [];
    const files: string[] = [];
    for (const b of batch) {
      // One copy of the bytes per message, however many recipients: the first record carries
      // them, the others name it (and their files are hard links of the first, materialize()).
      const first = b.recs[0].meta;
      for (const r of b.recs) {
        if (r === b.recs[0]) parts.push(...messageRecord(r.meta, b.raw));
        else parts.push(linkRecord(r.meta, first.id));
        files.push(this.pathOf(r.meta, 'new'));
      }
    }
    // Listed and committed in the same tick, so a checkpoint's rotation sees both or neither.
    this.unflushed.push(...files);
    try {
      await this.wal.commit(parts);
    } catch (e) {
      for (const f of files) rmQuietly(f);
      for (const b of batch) b.reject(storeFailure(e));
      return [];
    }
    return batch;
  }

  /** True once the log holds enough that a checkpoint should run now. */
  get checkpointDue(): boolean {
    return this.wal.bytes >= WAL_CHECKPOINT_BYTES;
  }

  /** Creates the directories of inboxes not seen before; an item whose directory fails is rejected. */
  private async prepareDirs(items: CommitItem[]): Promise<void> {
    await Promise.all(
      items.map(async (b) => {
        try {
          for (const r of b.recs) await this.ensureInboxDir(r.meta.domain, r.meta.inbox);
        } catch (e) {
          b.failed = true;
          b.reject(storeFailure(e));
        }
      }),
    );
  }

  /**
   * Writes an item's first file to tmp/ and renames it into new/; every further recipient's file
   * is a hard link of that one (a file system without hard links gets a copy). On failure
   * removes what it made and rejects the item.
   */
  private materialize(b: CommitItem): boolean {
    if (b.failed) return false;
    const made: string[] = [];
    let first: string | undefined;
    try {
      for (const r of b.recs) {
        const final = this.pathOf(r.meta, 'new');
        if (first !== undefined && this.linksUsable) {
          try {
            linkSync(first, final);
            made.push(final);
            continue;
          } catch (e) {
            if (!LINK_UNSUPPORTED.has(errnoCode(e) ?? '')) throw e;
            this.linksUsable = false;
            this.log('info', `store: hard links are not available here (${(e as Error).message}); each recipient gets a copy`);
          }
        }
        const tmp = this.pathOf(r.meta, 'tmp');
        made.push(tmp);
        writeFileSync(tmp, b.raw, { flag: 'wx', mode: 0o644 });
        renameSync(tmp, final);
        made.push(final);
        first ??= final;
      }
      return true;
    } catch (e) {
      for (const f of made) rmQuietly(f);
      b.reject(storeFailure(e));
      return false;
    }
  }

  private ensureInboxDir(domain: string, inbox: string): Promise<void> {
    const key = `${domain}\n${inbox}`;
    let p = this.readyDirs.get(key);
    if (!p) {
      p = (async () => {
        const inboxDir = path.join(this.dir, encodeName(domain), encodeName(inbox));
        let existed = true;
        try {
          await fs.access(path.join(inboxDir, 'new'));
          await fs.access(path.join(inboxDir, 'tmp'));
        } catch {
          existed = false;
        }
        if (existed) return;
        for (const sub of ['tmp', 'new', 'cur']) await fs.mkdir(path.join(inboxDir, sub), { recursive: true });
        // New directory entries are durable only once their parents are synced.
        for (const d of [inboxDir, path.dirname(inboxDir), this.dir]) await fsyncDir(d);
      })();
      this.readyDirs.set(key, p);
      p.catch(() => this.readyDirs.delete(key));
    }
    return p;
  }

  /** Logs the removals (so a replay after a crash does not bring the messages back), then unlinks their files. */
  async remove(metas: MessageMeta[]): Promise<void> {
    await this.wal.remove(metas.map((m) => m.id)).catch((e: unknown) => this.log('warn', `store: could not log a removal: ${(e as Error).message}`));
    await mapLimit(metas, OPEN_CONCURRENCY, async (m) => {
      const file = this.pathOf(m, 'new');
      try {
        await fs.unlink(file);
      } catch (e) {
        if (errnoCode(e) !== 'ENOENT') this.log('warn', `store: could not remove ${file}: ${(e as Error).message}`);
      }
    });
  }

  async read(meta: MessageMeta): Promise<Buffer> {
    try {
      return await fs.readFile(this.pathOf(meta, 'new'));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new StoreError('NOT_FOUND', `message ${meta.id} is no longer on disk`, { cause: e });
      throw new StoreError('IO', `cannot read message ${meta.id}: ${(e as Error).message}`, { cause: e });
    }
  }

  // ---- checkpoints -----------------------------------------------------------------------

  /** Makes the given files (and everything else written so far) durable. */
  private async flush(files: string[]): Promise<void> {
    if (this.syncfsUsable) {
      try {
        await syncfs(this.dir);
        return;
      } catch (e) {
        this.syncfsUsable = false;
        this.log('info', `store: sync -f is not available (${(e as Error).message}); checkpoints fsync each file`);
      }
    }
    await mapLimit(files, FLUSH_CONCURRENCY, fsyncFile);
    await Promise.all([...new Set(files.map((f) => path.dirname(f)))].map((d) => fsyncDir(d).catch((e: unknown) => (errnoCode(e) === 'ENOENT' ? undefined : Promise.reject(e)))));
  }

  /** Flushes the files of the current log generation, then drops it. Never rejects: a failure is logged and the log kept. */
  checkpoint(): Promise<void> {
    if (this.checkpointRun) return this.checkpointRun;
    if (this.wal.bytes === 0) return Promise.resolve();
    // Swap the file list and rotate in the same tick: commits queued before belong to the old generation.
    const files = this.unflushed;
    this.unflushed = [];
    const rotated = this.wal.rotate();
    this.checkpointRun = (async () => {
      const old = await rotated;
      await this.flush(files);
      await fs.rm(old, { force: true });
    })()
      .catch((e: unknown) => this.log('warn', `store: checkpoint failed (the log is kept and replayed on the next start): ${(e as Error).message}`))
      .finally(() => (this.checkpointRun = undefined));
    return this.checkpointRun;
  }

  /** Closes the log (after a final checkpoint by the caller); an empty last generation is removed. */
  async close(): Promise<void> {
    const last = await this.wal.close();
    if (this.wal.bytes === 0) await fs.rm(last, { force: true });
  }
}

// ---- file-system helpers -------------------------------------------------------------------

function errnoCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } catch (e) {
    // Some file systems (and Windows) cannot fsync a directory; the rename is as durable as they allow.
    if (!['EINVAL', 'EPERM', 'EISDIR', 'ENOTSUP', 'EBADF'].includes(errnoCode(e) ?? '')) throw e;
  } finally {
    await fh.close();
  }
}

async function fsyncFile(file: string): Promise<void> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, 'r');
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return; // removed since: nothing to flush
    throw e;
  }
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function syncfs(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('sync', ['-f', dir], { timeout: SYNCFS_TIMEOUT_MS }, (e) => (e ? reject(e) : resolve()));
  });
}

/** Runs `fn` over the items with at most `limit` running at once. */
async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Removes a file if it is there; used to undo a delivery that failed, where a second failure changes nothing. */
function rmQuietly(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // the error already being reported is the one that matters
  }
}

async function namesOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw e;
  }
}

async function readdirOrEmpty(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw e;
  }
}

/** Writes a new file and flushes it to disk before resolving; its mtime records the receipt time. */
async function writeDurably(file: string, data: Buffer, time: number): Promise<void> {
  const fh = await fs.open(file, 'wx', 0o644);
  try {
    await fh.writeFile(data);
    await fh.utimes(time / 1000, time / 1000);
    await fh.datasync();
  } finally {
    await fh.close();
  }
}
