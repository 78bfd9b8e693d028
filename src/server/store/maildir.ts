// The Maildir message store: one directory per inbox (`<dir>/<domain>/<inbox>/{tmp,new,cur}`),
// one RFC 5322 `.eml` per message, written to tmp/ and renamed into new/. A message is
// acknowledged only once it is durable: its bytes are in the write-ahead log (wal.ts) and
// fsynced. Deliveries are group-committed: every message that becomes ready while a commit
// is running shares the next log write and fsync. Checkpoints flush the .eml files (syncfs,
// or one fsync per file where that is unavailable) and drop the log generation; open()
// replays what a crash left in the log. An in-memory index (headers only) serves listings;
// it is rebuilt on open from the index journal reconciled with a readdir of every inbox.

import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { promises as fs, renameSync, rmSync, writeFileSync, type Dirent } from 'node:fs';
import * as path from 'node:path';
import { ALL_INBOXES, domainProblem, formatMessageId, inboxNameProblem, normalizeInbox, parseMessageId } from '../../core/ids';
import { StoreError } from './errors';
import { parseIndexedHeaders } from './headers';
import { addLine, deleteLine, Journal } from './journal';
import { lockDataDir } from './lock';
import { type IndexRecord, OrderedList } from './ordered';
import type { ListOptions, ListResult, MessageMeta, MessageSource, RetentionOptions, Store, StoreEvents } from './types';
import { messageRecord, type WalMessage, WriteAheadLog } from './wal';

/** Keep 1,000 messages per inbox: plenty for a test run, and bounds disk and memory when a loop floods one inbox. */
export const DEFAULT_MAX_MESSAGES_PER_INBOX = 1000;
/** Keep messages 7 days: test mail is short-lived, a week covers a sprint's debugging. */
export const DEFAULT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_RETENTION: RetentionOptions = { maxMessages: DEFAULT_MAX_MESSAGES_PER_INBOX, maxAgeMs: DEFAULT_MAX_AGE_MS };
/** Sweep aged messages once a minute: age limits are in days, a minute late is fine. */
export const RETENTION_SWEEP_INTERVAL_MS = 60_000;
/** Files read or directories listed at once on open: enough to overlap I/O without exhausting file descriptors. */
const OPEN_CONCURRENCY = 32;
/** Compact the journal only past this many lines, so small stores never rewrite it. */
const JOURNAL_COMPACT_MIN_LINES = 10_000;
/** ...and only when it holds this many lines per live message (the rest are removals and removed adds). */
const JOURNAL_COMPACT_RATIO = 2;
/** Checkpoint once the log holds this much: bounds the replay work after a crash. */
export const WAL_CHECKPOINT_BYTES = 32 * 1024 * 1024;
/** ...or this often while it holds anything: the kernel writes dirty pages back about this often anyway. */
export const WAL_CHECKPOINT_INTERVAL_MS = 2000;
/** Files fsynced at once by a checkpoint without syncfs. */
const FLUSH_CONCURRENCY = 16;
/** A syncfs (`sync -f`) that takes longer than this is given up on and the files are fsynced one by one. */
const SYNCFS_TIMEOUT_MS = 60_000;

type LogLevel = 'info' | 'warn' | 'error';
export type StoreLog = (level: LogLevel, msg: string) => void;

export interface MaildirStoreOptions {
  dir: string;
  retention?: Partial<RetentionOptions>;
  log?: StoreLog;
  /** How often a log holding anything is checkpointed; 0 = only by size and on close. Default WAL_CHECKPOINT_INTERVAL_MS. */
  checkpointIntervalMs?: number;
}

interface DomainIndex {
  list: OrderedList;
  inboxes: Map<string, OrderedList>;
}

interface CommitItem {
  recs: IndexRecord[];
  raw: Buffer;
  /** Set when the item was rejected before its files were written. */
  failed?: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

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

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function recordOf(meta: MessageMeta): IndexRecord | undefined {
  const p = parseMessageId(meta.id);
  return p && { meta, seconds: p.seconds, counter: p.counter, dead: false };
}

export class MaildirStore implements Store {
  readonly dir: string;
  readonly retention: RetentionOptions;
  private readonly log: StoreLog;
  private readonly checkpointIntervalMs: number;
  private readonly events = new EventEmitter();
  private readonly journal: Journal;
  private readonly wal: WriteAheadLog;
  /** Files committed to the current log generation, to flush at the next checkpoint. */
  private unflushed: string[] = [];
  private checkpointRun: Promise<void> | undefined;
  private checkpointTimer: NodeJS.Timeout | undefined;
  /** `sync -f` (syncfs) flushes a whole checkpoint at once; Linux only, dropped after a failure. */
  private syncfsUsable = process.platform === 'linux';
  private state: 'new' | 'opening' | 'open' | 'closed' = 'new';
  /** Releases the data dir's lock (lock.ts); set while open. */
  private unlock: (() => Promise<void>) | undefined;

  private readonly byId = new Map<string, IndexRecord>();
  private readonly all = new OrderedList();
  private readonly byDomain = new Map<string, DomainIndex>();
  /** Same-named inboxes across every domain (what the `private` domain reads). */
  private readonly byName = new Map<string, OrderedList>();
  /** Last counter handed out; ids are unique across the store and across restarts. */
  private counter = 0;

  private readonly readyDirs = new Map<string, Promise<void>>();
  private commitQueue: CommitItem[] = [];
  private committing = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private compacting = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MaildirStoreOptions) {
    this.dir = path.resolve(options.dir);
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    for (const [k, v] of Object.entries(this.retention)) {
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`retention.${k} must be a whole number >= 0, got ${String(v)}`);
    }
    this.log = options.log ?? (() => undefined);
    this.checkpointIntervalMs = options.checkpointIntervalMs ?? WAL_CHECKPOINT_INTERVAL_MS;
    this.journal = new Journal(this.dir, (e) => this.log('warn', `store: journal write failed (the messages are stored; the next start re-reads them): ${e.message}`));
    this.wal = new WriteAheadLog(this.dir);
    this.events.setMaxListeners(0);
  }

  // ---- lifecycle -------------------------------------------------------------------------

  async open(): Promise<void> {
    if (this.state !== 'new') throw new StoreError('NOT_OPEN', `store ${this.dir} was already opened`);
    this.state = 'opening';
    try {
      await fs.mkdir(this.dir, { recursive: true });
      this.unlock = await lockDataDir(this.dir);
      await this.replayLog();
      const journal = await this.journal.load();
      if (journal.badLines > 0) this.log('warn', `store: skipped ${journal.badLines} damaged line(s) of the index journal ${this.journal.file}`);
      // Journal records start dead; the scan revives those whose file is there.
      for (const r of journal.entries.values()) r.dead = true;
      const { parsedRecs, maxCounter } = await this.scan(journal.entries);
      // Journal order is receipt order up to commit interleaving, so inserts are (nearly) appends.
      let stale = 0;
      for (const r of journal.entries.values()) {
        if (r.dead) stale++;
        else this.insert(r);
      }
      for (const r of parsedRecs) this.insert(r);
      const parsed = parsedRecs.length;
      this.counter = Math.max(journal.maxCounter, maxCounter);
      if (parsed > 0 || stale > 0 || journal.badLines > 0 || this.journalNeedsCompaction()) {
        await this.journal.compact(this.liveMetas(), this.counter);
      } else {
        await this.journal.openForAppend();
      }
      this.log('info', `store: ${this.byId.size} message(s) in ${this.byDomain.size} domain(s) at ${this.dir}` + (parsed > 0 ? ` (${parsed} indexed from their headers)` : ''));
    } catch (e) {
      this.state = 'closed';
      await this.unlock?.().catch(() => undefined);
      throw StoreError.is(e) ? e : new StoreError('IO', `cannot open the store at ${this.dir}: ${(e as Error).message}`, { cause: e });
    }
    this.state = 'open';
    this.applyRetention();
    this.timer = setInterval(() => this.applyRetention(), RETENTION_SWEEP_INTERVAL_MS);
    this.timer.unref();
    if (this.checkpointIntervalMs > 0) {
      this.checkpointTimer = setInterval(() => void this.checkpoint(), this.checkpointIntervalMs);
      this.checkpointTimer.unref();
    }
  }

  /** Rewrites what the log holds but the files lost (a crash before the checkpoint), flushes it, and starts a fresh log. */
  private async replayLog(): Promise<void> {
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

  /** Flushes the files of the current log generation, then drops it. */
  private checkpoint(): Promise<void> {
    if (this.checkpointRun) return this.checkpointRun;
    if (this.wal.bytes === 0) return Promise.resolve();
    // Swap the file list and rotate in the same tick: commits queued before belong to the old generation.
    const files = this.unflushed;
    this.unflushed = [];
    const rotated = this.wal.rotate();
    this.checkpointRun = this.track(
      (async () => {
        const old = await rotated;
        await this.flush(files);
        await fs.rm(old, { force: true });
      })()
        .catch((e: unknown) => this.log('warn', `store: checkpoint failed (the log is kept and replayed on the next start): ${(e as Error).message}`))
        .finally(() => (this.checkpointRun = undefined)),
    );
    return this.checkpointRun;
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    clearInterval(this.timer);
    clearInterval(this.checkpointTimer);
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    if (wasOpen) {
      await this.checkpoint();
      const last = await this.wal.close();
      if (this.wal.bytes === 0) await fs.rm(last, { force: true });
    }
    if (wasOpen && this.journalNeedsCompaction()) {
      await this.journal.compact(this.liveMetas(), this.counter).catch((e: unknown) => this.log('warn', `store: journal compaction failed: ${(e as Error).message}`));
    }
    await this.journal.close();
    await this.unlock?.();
  }

  // ---- writes ----------------------------------------------------------------------------

  add(targets: Array<{ domain: string; inbox: string }>, raw: Buffer, source: MessageSource): Promise<MessageMeta[]> {
    if (this.state !== 'open') return Promise.reject(new StoreError('NOT_OPEN', 'the store is not open'));
    const seen = new Set<string>();
    const norm: Array<{ domain: string; inbox: string }> = [];
    for (const t of targets) {
      const domain = t.domain.trim().toLowerCase();
      const inbox = normalizeInbox(t.inbox);
      const problem = domainProblem(domain) ?? (inbox === ALL_INBOXES ? 'inbox * cannot receive messages' : inboxNameProblem(inbox));
      if (problem) return Promise.reject(new StoreError('BAD_TARGET', `${t.inbox}@${t.domain}: ${problem}`));
      const key = `${domain}\n${inbox}`;
      if (!seen.has(key)) {
        seen.add(key);
        norm.push({ domain, inbox });
      }
    }
    if (norm.length === 0) return Promise.reject(new StoreError('BAD_TARGET', 'a message needs at least one recipient inbox'));
    const headers = parseIndexedHeaders(raw) ?? { from: '', subject: '' };
    const time = Date.now();
    const seconds = Math.floor(time / 1000);
    const recs: IndexRecord[] = norm.map(({ domain, inbox }) => {
      const counter = ++this.counter;
      const meta: MessageMeta = { id: formatMessageId(inbox, seconds, counter), domain, inbox, time, from: headers.from, subject: headers.subject, size: raw.length, source };
      return { meta, seconds, counter, dead: false };
    });
    return this.track(this.write(recs, raw));
  }

  private write(recs: IndexRecord[], raw: Buffer): Promise<MessageMeta[]> {
    return new Promise<void>((resolve, reject) => {
      this.commitQueue.push({ recs, raw, resolve, reject });
      if (!this.committing) void this.runCommits();
    }).then(() => recs.map((r) => r.meta));
  }

  /**
   * Group commit: the files of every message queued meanwhile are written and renamed into
   * new/, then one log write and one fdatasync make them all durable, then they are
   * acknowledged. The files are written synchronously, between two fdatasyncs and never
   * during one: a batch of small writes costs less without a thread-pool hop each, and the
   * event loop is held for microseconds per message.
   */
  private async runCommits(): Promise<void> {
    this.committing = true;
    try {
      while (this.commitQueue.length > 0) {
        const queued = this.commitQueue;
        this.commitQueue = [];
        await this.prepareDirs(queued);
        const batch = queued.filter((b) => this.materialize(b));
        if (batch.length === 0) continue;
        const parts: Buffer[] = [];
        const files: string[] = [];
        for (const b of batch) {
          for (const r of b.recs) {
            parts.push(...messageRecord(r.meta, b.raw));
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
          continue;
        }
        let text = '';
        let lines = 0;
        for (const b of batch) {
          for (const r of b.recs) {
            this.insert(r);
            text += addLine(r.meta);
            lines++;
          }
        }
        // Not waited for: the journal is a cache that is never fsynced (the log is the durable
        // record), written in order a little later.
        this.journal.append(text, lines);
        const touched = new Map<string, { domain: string; inbox: string }>();
        for (const b of batch) {
          for (const r of b.recs) {
            this.events.emit('message', r.meta);
            touched.set(`${r.meta.domain}\n${r.meta.inbox}`, r.meta);
          }
          b.resolve();
        }
        for (const t of touched.values()) this.enforceCount(t.domain, t.inbox);
        if (this.wal.bytes >= WAL_CHECKPOINT_BYTES) void this.checkpoint();
      }
    } finally {
      this.committing = false;
    }
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

  /** Writes an item's files to tmp/ and renames them into new/; on failure removes what it made and rejects the item. */
  private materialize(b: CommitItem): boolean {
    if (b.failed) return false;
    const made: string[] = [];
    try {
      for (const r of b.recs) {
        const tmp = this.pathOf(r.meta, 'tmp');
        made.push(tmp);
        writeFileSync(tmp, b.raw, { flag: 'wx', mode: 0o644 });
        const final = this.pathOf(r.meta, 'new');
        renameSync(tmp, final);
        made.push(final);
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

  async delete(id: string): Promise<boolean> {
    this.assertOpen();
    const rec = this.byId.get(id);
    if (!rec) return false;
    await this.track(this.remove([rec]));
    return true;
  }

  async clear(domain: string | undefined, inbox: string): Promise<number> {
    this.assertOpen();
    const list = this.listFor(domain, inbox);
    if (!list) return 0;
    const recs = [...list.ascending()];
    await this.track(this.remove(recs));
    return recs.length;
  }

  /** Drops records from the index at once (so readers never see them again), then unlinks their files. */
  private async remove(recs: IndexRecord[]): Promise<void> {
    const live = recs.filter((r) => !r.dead);
    if (live.length === 0) return;
    for (const r of live) this.unindex(r);
    this.events.emit(
      'delete',
      live.map((r) => r.meta),
    );
    // Logged first, so a replay after a crash does not bring the message back.
    await this.wal.remove(live.map((r) => r.meta.id)).catch((e: unknown) => this.log('warn', `store: could not log a removal: ${(e as Error).message}`));
    let text = '';
    await mapLimit(live, OPEN_CONCURRENCY, async (r) => {
      const file = this.pathOf(r.meta, 'new');
      try {
        await fs.unlink(file);
      } catch (e) {
        if (errnoCode(e) !== 'ENOENT') this.log('warn', `store: could not remove ${file}: ${(e as Error).message}`);
      }
      text += deleteLine(r.meta.id);
    });
    this.journal.append(text, live.length);
    this.maybeCompact();
  }

  // ---- retention -------------------------------------------------------------------------

  private enforceCount(domain: string, inbox: string): void {
    const max = this.retention.maxMessages;
    const list = this.byDomain.get(domain)?.inboxes.get(inbox);
    if (max === 0 || !list || list.size <= max) return;
    const excess = list.page('ascending', 0, list.size - max).recs;
    void this.track(this.remove(excess));
  }

  private applyRetention(): void {
    if (this.state !== 'open') return;
    if (this.retention.maxAgeMs > 0) {
      const cutoff = Date.now() - this.retention.maxAgeMs;
      const old: IndexRecord[] = [];
      for (const r of this.all.ascending()) {
        if (r.meta.time >= cutoff) break;
        old.push(r);
      }
      if (old.length > 0) void this.track(this.remove(old));
    }
    if (this.retention.maxMessages > 0) {
      for (const [domain, d] of this.byDomain) for (const inbox of [...d.inboxes.keys()]) this.enforceCount(domain, inbox);
    }
  }

  // ---- reads -----------------------------------------------------------------------------

  list(domain: string | undefined, inbox: string, options: ListOptions): ListResult {
    const list = this.listFor(domain, inbox);
    if (!list) return { msgs: [], total: 0 };
    let after: { seconds: number; counter: number } | undefined;
    if (options.cursor !== undefined) {
      const known = this.byId.get(options.cursor);
      const parsed = known ?? parseMessageId(options.cursor);
      if (!parsed) throw new StoreError('BAD_CURSOR', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
      after = { seconds: parsed.seconds, counter: parsed.counter };
    }
    const limit = Math.max(0, Math.floor(options.limit));
    const skip = Math.max(0, Math.floor(options.skip));
    const page = list.page(options.sort === 'ascending' ? 'ascending' : 'descending', skip, limit, after);
    const msgs = page.recs.map((r) => r.meta);
    return { msgs, total: list.size, ...(page.more && msgs.length > 0 ? { nextCursor: msgs[msgs.length - 1].id } : {}) };
  }

  get(id: string): MessageMeta | undefined {
    return this.byId.get(id)?.meta;
  }

  async readRaw(id: string): Promise<Buffer> {
    const rec = this.byId.get(id);
    if (!rec) throw new StoreError('NOT_FOUND', `no message ${id}`);
    try {
      return await fs.readFile(this.pathOf(rec.meta, 'new'));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new StoreError('NOT_FOUND', `message ${id} is no longer on disk`, { cause: e });
      throw new StoreError('IO', `cannot read message ${id}: ${(e as Error).message}`, { cause: e });
    }
  }

  domains(): Array<{ name: string; inboxes: number; messages: number }> {
    return [...this.byDomain].map(([name, d]) => ({ name, inboxes: d.inboxes.size, messages: d.list.size })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  inboxes(domain: string | undefined): Array<{ domain: string; inbox: string; count: number; latest: number }> {
    const out: Array<{ domain: string; inbox: string; count: number; latest: number }> = [];
    const wanted = domain === undefined ? [...this.byDomain] : [[domain.toLowerCase(), this.byDomain.get(domain.toLowerCase())] as const];
    for (const [name, d] of wanted) {
      if (!d) continue;
      for (const [inbox, list] of d.inboxes) out.push({ domain: name, inbox, count: list.size, latest: list.newest()?.meta.time ?? 0 });
    }
    return out.sort((a, b) => b.latest - a.latest);
  }

  on<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.on(event, listener);
  }

  off<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.off(event, listener);
  }

  /** Where a message's file lives (in `new/`, or `tmp/` while being written). */
  pathOf(meta: Pick<MessageMeta, 'domain' | 'inbox' | 'id'>, sub: 'tmp' | 'new' = 'new'): string {
    return path.join(this.dir, encodeName(meta.domain), encodeName(meta.inbox), sub, encodeName(meta.id) + '.eml');
  }

  // ---- index -----------------------------------------------------------------------------

  private listFor(domain: string | undefined, inbox: string): OrderedList | undefined {
    const d = domain?.toLowerCase();
    const i = normalizeInbox(inbox);
    if (i === ALL_INBOXES) return d === undefined ? this.all : this.byDomain.get(d)?.list;
    return d === undefined ? this.byName.get(i) : this.byDomain.get(d)?.inboxes.get(i);
  }

  private insert(r: IndexRecord): void {
    const { domain, inbox, id } = r.meta;
    this.byId.set(id, r);
    this.all.insert(r);
    let d = this.byDomain.get(domain);
    if (!d) this.byDomain.set(domain, (d = { list: new OrderedList(), inboxes: new Map() }));
    d.list.insert(r);
    let il = d.inboxes.get(inbox);
    if (!il) d.inboxes.set(inbox, (il = new OrderedList()));
    il.insert(r);
    let nl = this.byName.get(inbox);
    if (!nl) this.byName.set(inbox, (nl = new OrderedList()));
    nl.insert(r);
  }

  private unindex(r: IndexRecord): void {
    const { domain, inbox, id } = r.meta;
    r.dead = true;
    this.byId.delete(id);
    this.all.noteDeleted();
    const d = this.byDomain.get(domain);
    if (d) {
      d.list.noteDeleted();
      const il = d.inboxes.get(inbox);
      if (il) {
        il.noteDeleted();
        if (il.size === 0) d.inboxes.delete(inbox);
      }
      if (d.list.size === 0) this.byDomain.delete(domain);
    }
    const nl = this.byName.get(inbox);
    if (nl) {
      nl.noteDeleted();
      if (nl.size === 0) this.byName.delete(inbox);
    }
  }

  private *liveMetas(): Generator<MessageMeta> {
    for (const r of this.all.ascending()) yield r.meta;
  }

  private journalNeedsCompaction(): boolean {
    return this.journal.lineCount > JOURNAL_COMPACT_MIN_LINES && this.journal.lineCount > JOURNAL_COMPACT_RATIO * this.byId.size;
  }

  private maybeCompact(): void {
    if (this.compacting || this.state !== 'open' || !this.journalNeedsCompaction()) return;
    this.compacting = true;
    void this.track(
      this.journal
        .compact(this.liveMetas(), this.counter)
        .catch((e: unknown) => this.log('warn', `store: journal compaction failed: ${(e as Error).message}`))
        .finally(() => (this.compacting = false)),
    );
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new StoreError('NOT_OPEN', 'the store is not open');
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = (): void => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  // ---- open: reconcile the journal with the directories ---------------------------------------

  private async scan(journal: Map<string, IndexRecord>): Promise<{ parsedRecs: IndexRecord[]; maxCounter: number }> {
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
        const rec = recordOf({ id, domain, inbox, time, from: headers.from, subject: headers.subject, size: raw.length, source: 'smtp' });
        if (rec) parsedRecs.push(rec);
      } catch (e) {
        this.log('warn', `store: skipping ${file}: ${(e as Error).message}`);
      }
    });
    return { parsedRecs, maxCounter };
  }
}

function storeFailure(e: unknown): StoreError {
  return StoreError.is(e) ? e : new StoreError('IO', `could not store the message: ${(e as Error).message}`, { cause: e });
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
