// The Maildir message store: one directory per inbox (`<dir>/mail/<domain>/<inbox>/{tmp,new,cur}`, layout.ts),
// one RFC 5322 `.eml` per message. Deliveries are group-committed: every message that becomes
// ready while a commit is running shares the next batch. What an acknowledgement waits for is
// the `durability` option (files.ts): under the process-safe rule its `.eml` is renamed into
// new/ (the background flush, flusher.ts, syncs it within a second); under the strict rule its
// bytes are in the write-ahead log and fdatasynced, and its `.eml` is written afterwards by the
// materialiser (materialiser.ts), read from memory until then. This file is the facade: it composes
//   files.ts        the message files and the write-ahead log (checkpoints.ts: its checkpoints);
//   recovery.ts     recovery on open: the log's replay and the scan of every inbox;
//   memoryIndex.ts  the in-memory index (headers only) that serves listings;
//   journal.ts      the index journal, a cache that lets open() skip re-parsing every file;
//   indexFiles.ts   the index's files on open and close: the packed index, journal, snapshot;
// and owns the lifecycle, id allocation, retention and the message/delete events.

import { EventEmitter } from 'node:events';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { formatMessageId } from '../../../core/ids';
import { matchesMetaTerm, type MetaTerm } from '../../../core/search';
import { type CommitItem, MaildirFiles } from './files';
import { StoreError } from '../errors';
import { type FileWriter, writeFileHere } from './fileWrites';
import { type CodeDetector, indexedHeaders, targetsToAdd, type Target } from '../incoming';
import { codeJob, type CodeJob, CodeReadings } from './codeReadings';
import { loadIndex, saveIndex } from './indexFiles';
import { addLine, deleteLine, Journal } from './journal';
import { KeyLog } from './keys';
import { inboxDirOf, mailRoot, prepareDataDir, PRIVATE_DIR_MODE, tightenTree } from './layout';
import { lockDataDir } from './lock';
import type { Durability } from '../../../shared/contract';
import type { FlushDone } from './flusher';
import type { SyncFd } from './layout';
import { MessageIndex } from './memoryIndex';
import { replayLog } from './recovery';
import type { IndexRecord } from './ordered';
import { inboxKeyOf } from './snapshot';
import type { Answer, KeyedMessage, ListOptions, ListResult, MessageBody, MessageKey, MessageMeta, MessageParts, MessageSource, RetentionOptions, SearchOptions, Store, StoreEvents, StoreLog } from '../types';
import { DEFAULT_RETENTION, RETENTION_SWEEP_INTERVAL_MS } from '../types';

/** Compact the journal only past this many lines, so small stores never rewrite it. */
const JOURNAL_COMPACT_MIN_LINES = 10_000;
/** ...and only when it holds this many lines per live message (the rest are removals and removed adds). */
const JOURNAL_COMPACT_RATIO = 2;
/** Index records a search reads between two yields to the event loop (a few milliseconds of work). */
const SEARCH_CHUNK = 8192;
/** Folder (in the data dir) where message bodies too large for memory are written while they arrive; never indexed, emptied on open. */
const SPOOL_DIR_NAME = '.spool';
/** Checkpoint this often while the log holds anything: the kernel writes dirty pages back about this often anyway. */
const WAL_CHECKPOINT_INTERVAL_MS = 2000;

export interface MaildirStoreOptions {
  dir: string;
  retention?: Partial<RetentionOptions>;
  log?: StoreLog;
  /** How often a log holding anything is checkpointed; 0 = only by size and on close. Default WAL_CHECKPOINT_INTERVAL_MS. */
  checkpointIntervalMs?: number;
  /**
   * Reads the code of a message after its acknowledgement: the server hands it to its MIME
   * worker threads (workers/pool.ts), so the code never takes the event loop from SMTP and the
   * log. Default: code.ts detectCode in this thread. One that fails is read here instead.
   */
  detectCode?: CodeDetector;
  /**
   * Runs the writes of the message files after the acknowledgement (fileWrites.ts): the server
   * hands them to a worker thread of their own. Default: in this thread. One that fails to
   * answer (stopping, died) is run here instead.
   */
  writeFile?: FileWriter;
  /**
   * What an acknowledgement waits for (contract.ts DURABILITIES). Default `strict` here, the
   * log's own tests rely on it; the server passes its setting (default `process`).
   */
  durability?: Durability;
  /** How often the process-safe rule's background flush starts; 0 = only on close. Default FLUSH_INTERVAL_MS. */
  flushIntervalMs?: number;
  /** Test seam: the journal is compacted only past this many lines. Default JOURNAL_COMPACT_MIN_LINES. */
  journalCompactMinLines?: number;
  /** Test seam: the fsync/fdatasync of the log and of the background flush (one that blocks holds them). */
  sync?: SyncFd;
  /** Test seams: the pause after which codes are read (codeReadings.ts CODE_IDLE_MS), and how long one may wait while deliveries never pause (CODE_LAG_MS). */
  codeIdleMs?: number;
  codeLagMs?: number;
}

export class MaildirStore implements Store {
  readonly dir: string;
  /** Where the SMTP server spools large bodies while they arrive (src/server/spool.ts). */
  readonly spoolDir: string;
  readonly retention: RetentionOptions;
  private readonly log: StoreLog;
  private readonly checkpointIntervalMs: number;
  readonly durability: Durability;
  private readonly events = new EventEmitter();
  private readonly journal: Journal;
  private readonly files: MaildirFiles;
  private readonly index = new MessageIndex();
  /** The callers' keys of messages (keys.ts). */
  private readonly keys: KeyLog;
  private checkpointTimer: NodeJS.Timeout | undefined;
  private state: 'new' | 'opening' | 'open' | 'closed' = 'new';
  /** Releases the data dir's lock (lock.ts); set while open. */
  private unlock: (() => Promise<void>) | undefined;
  /** Last counter handed out; ids are unique across the store and across restarts. */
  private counter = 0;
  /**
   * Inboxes (`<domain>\n<inbox>`) whose files are all private (0600): trusted as such from the index
   * snapshot, or walked to the end in this run (makeMailPrivate). The snapshot at close records them.
   */
  private readonly privateInboxes = new Set<string>();

  /** The code job of each delivery waiting in the commit queue. */
  private readonly codeJobOf = new WeakMap<CommitItem, CodeJob>();
  private readonly codes: CodeReadings;

  private commitQueue: CommitItem[] = [];
  private committing = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private compacting = false;
  private readonly journalCompactMinLines: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MaildirStoreOptions) {
    this.dir = path.resolve(options.dir);
    this.spoolDir = path.join(this.dir, SPOOL_DIR_NAME);
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    for (const [k, v] of Object.entries(this.retention)) {
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`retention.${k} must be a whole number >= 0, got ${String(v)}`);
    }
    this.log = options.log ?? (() => undefined);
    this.checkpointIntervalMs = options.checkpointIntervalMs ?? WAL_CHECKPOINT_INTERVAL_MS;
    this.codes = new CodeReadings({
      elsewhere: options.detectCode,
      log: this.log,
      track: (p) => this.track(p),
      kept: (live, announce) => {
        // Not waited for: the journal is a cache that is never fsynced (the log is the durable
        // record), written in order a little later. A message removed meanwhile is not journaled.
        let text = '';
        for (const r of live) text += addLine(r.meta);
        if (live.length > 0) this.journal.append(text, live.length);
        if (announce) for (const r of live) this.events.emit('message', r.meta);
      },
      wanted: () => this.events.listenerCount('message') > 0,
      readHead: (meta, max) => this.files.readHead(meta, max),
      ...(options.codeIdleMs !== undefined ? { idleMs: options.codeIdleMs } : {}),
      ...(options.codeLagMs !== undefined ? { lagMs: options.codeLagMs } : {}),
    });
    this.journal = new Journal(this.dir, (e) => this.log('warn', `store: journal write failed (the messages are stored; the next start re-reads them): ${e.message}`));
    const writer = options.writeFile;
    this.durability = options.durability ?? 'strict';
    this.journalCompactMinLines = options.journalCompactMinLines ?? JOURNAL_COMPACT_MIN_LINES;
    this.files = new MaildirFiles(this.dir, this.log, writer ? (op) => writer(op).catch(() => writeFileHere(op)) : writeFileHere, this.durability, options.sync, options.flushIntervalMs);
    this.keys = new KeyLog(this.dir);
    // Its folders made by this store hold only files it created 0600: no walk needed on the next start.
    this.files.onInboxCreated = (domain, inbox) => this.privateInboxes.add(inboxKeyOf(domain, inbox));
    this.events.setMaxListeners(0);
  }

  // ---- lifecycle -------------------------------------------------------------------------

  async open(): Promise<void> {
    if (this.state !== 'new') throw new StoreError('not_open', `store ${this.dir} was already opened`);
    this.state = 'opening';
    try {
      // Owner only (0700): the data folder holds mail and the secret files (tokens, server proof).
      await fs.mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      this.unlock = await lockDataDir(this.dir);
      await prepareDataDir(this.dir, this.log);
      // Bodies a crash left half-received were never acknowledged.
      await fs.rm(this.spoolDir, { recursive: true, force: true });
      await replayLog(this.files, this.log);
      // The packed index and the journal after it (or the whole journal), the snapshot, the files (indexFiles.ts).
      const { parsed, stale, badLines, trusted, snapshotRead, privateInboxes, maxCounter, packed } = await loadIndex(this.dir, this.index, this.journal, this.log);
      for (const key of privateInboxes) this.privateInboxes.add(key);
      // Keys of messages the index holds (the log replayed): a key whose message is gone goes too.
      await this.keys.open((id) => this.index.record(id) !== undefined, (msg) => this.log('warn', msg));
      this.counter = maxCounter;
      if (parsed > 0 || stale > 0 || badLines > 0 || this.journalNeedsCompaction()) {
        await this.journal.compact(this.index.liveMetas(), this.counter);
      } else {
        await this.journal.openForAppend();
      }
      this.log(
        'info',
        `store: ${this.index.size} message(s) in ${this.index.domainCount} domain(s) at ${this.dir}` +
          (parsed > 0 ? ` (${parsed} indexed from their headers)` : '') +
          (snapshotRead ? ` (${trusted.size} of ${this.index.inboxCount} inbox(es) taken from the index snapshot)` : '') +
          (packed !== undefined ? ' (index read from the packed index)' : ''),
      );
    } catch (e) {
      this.state = 'closed';
      await this.unlock?.().catch(() => undefined);
      throw StoreError.is(e) ? e : new StoreError('io', `cannot open the store at ${this.dir}: ${(e as Error).message}`, { cause: e });
    }
    this.state = 'open';
    void this.track(this.makeMailPrivate());
    this.applyRetention();
    this.timer = setInterval(() => this.applyRetention(), RETENTION_SWEEP_INTERVAL_MS);
    this.timer.unref();
    if (this.durability === 'process') this.files.flusher.start();
    if (this.checkpointIntervalMs > 0) {
      this.checkpointTimer = setInterval(() => void this.checkpoint(), this.checkpointIntervalMs);
      this.checkpointTimer.unref();
    }
  }

  /**
   * Makes mail copied in or widened before this start private again (new files are created 0600),
   * off the start's path. First the folders, and everything but the `new/` and `tmp/` of the
   * indexed inboxes (so `cur/` on every start: the store never writes there). Then the `new/` and
   * `tmp/` of each inbox not known to be private, one inbox after the other, and only those the
   * first walk met as real folders: a symlinked inbox or message folder is never followed out of
   * the mail root. A close ends the walk early; the inboxes it finished stay known as private in
   * the snapshot, so a later start does not walk them again. Not caught, as before this
   * snapshot existed: a file of a trusted private inbox widened in place (chmod changes no
   * folder's ctime), until the inbox next changes.
   */
  private async makeMailPrivate(): Promise<void> {
    const stopped = (): boolean => this.state !== 'open';
    const root = mailRoot(this.dir);
    const messageDirs = (domain: string, inbox: string): string[] => ['new', 'tmp'].map((sub) => path.join(inboxDirOf(this.dir, domain, inbox), sub));
    const inboxes = [...this.index.inboxKeys()];
    const met = new Set<string>();
    try {
      let { changed, complete } = await tightenTree(root, { skip: new Set(inboxes.flatMap(({ domain, inbox }) => messageDirs(domain, inbox))), met, stopped });
      let walked = 0;
      // The first walk ends short only when stopped, which this loop checks first.
      for (const { domain, inbox } of inboxes) {
        if (stopped()) {
          complete = false;
          break;
        }
        const key = inboxKeyOf(domain, inbox);
        if (this.privateInboxes.has(key)) continue;
        let done = true;
        for (const dir of messageDirs(domain, inbox)) {
          if (!met.has(dir)) continue;
          const r = await tightenTree(dir, { stopped });
          changed += r.changed;
          done &&= r.complete;
        }
        if (!done) {
          complete = false;
          break;
        }
        this.privateInboxes.add(key);
        walked++;
      }
      if (changed > 0) this.log('info', `store: made ${changed} file(s) and folder(s) under ${root} private (0600/0700)`);
      if (complete) this.log('info', `store: every file under ${root} is private (${walked} of ${inboxes.length} inbox(es) walked; the others were private at the last close)`);
    } catch (e) {
      this.log('warn', `store: could not make every file under ${root} private: ${(e as Error).message}`);
    }
  }

  /** Rotates the log and drops the log generations, oldest first (checkpoints.ts); false when one is kept. */
  private checkpoint(): Promise<boolean> {
    return this.track(this.files.checkpoints.run());
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    clearInterval(this.timer);
    clearInterval(this.checkpointTimer);
    // Files still to write are written now; one that fails keeps its log generation for the next start.
    this.files.materialiser.stop();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    // Every acknowledged message's code, so the journal and the packed index hold them all.
    this.codes.release();
    await this.codes.drain();
    if (wasOpen) {
      await this.files.checkpoints.run();
      await this.files.close();
      await this.files.flusher.stop();
    }
    if (wasOpen && this.journalNeedsCompaction()) {
      await this.journal.compact(this.index.liveMetas(), this.counter).catch((e: unknown) => this.log('warn', `store: journal compaction failed: ${(e as Error).message}`));
    }
    await this.journal.close();
    await this.keys.close();
    if (wasOpen) {
      // Last, once everything they describe is on disk: a failure only costs the next start some work.
      await saveIndex(this.dir, this.index, this.journal, this.counter, this.privateInboxes, this.log);
    }
    await this.unlock?.();
  }

  // ---- writes ----------------------------------------------------------------------------

  async add(targets: Target[], body: MessageBody, source: MessageSource, parts?: MessageParts, key?: MessageKey): Promise<MessageMeta[]> {
    const norm = targetsToAdd(this.state === 'open', targets);
    if (key === undefined) return this.track(this.addNormalized(norm, body, source, parts, undefined));
    if (norm.length !== 1) throw new StoreError('bad_target', `a message key names one message, not ${norm.length}`);
    this.keys.reserve(key.key);
    try {
      return await this.track(this.addNormalized(norm, body, source, parts, key));
    } finally {
      this.keys.release(key.key);
    }
  }

  private async addNormalized(norm: Target[], body: MessageBody, source: MessageSource, parts: MessageParts | undefined, key: MessageKey | undefined): Promise<MessageMeta[]> {
    // Only the header fields before the acknowledgement; the code is read after it (codeReadings.ts).
    const { head, size, from, subject } = indexedHeaders(body);
    if (this.state !== 'open') throw new StoreError('not_open', 'the store is not open');
    const time = Date.now();
    const seconds = Math.floor(time / 1000);
    const recs: IndexRecord[] = norm.map(({ domain, inbox }) => {
      const counter = ++this.counter;
      const meta: MessageMeta = { id: formatMessageId(inbox, seconds, counter), domain, inbox, time, from, subject, size, source };
      return { meta, seconds, counter, dead: false };
    });
    const job = codeJob(recs, head, parts);
    if (key === undefined) return this.write(recs, body, job);
    // The key's line is durable before the message's log record: an acknowledged keyed message always has it.
    const entry = { ...key, id: recs[0].meta.id };
    const strict = this.durability === 'strict';
    await this.keys.write(entry, strict);
    if (!strict) this.files.flusher.add([this.keys.file]);
    const metas = await this.write(recs, body, job);
    // Found by its key from its acknowledgement on (unless removed meanwhile, by retention).
    if (!recs[0].dead) this.keys.commit(entry);
    return metas;
  }

  private write(recs: IndexRecord[], raw: MessageBody, job: CodeJob): Promise<MessageMeta[]> {
    return new Promise<void>((resolve, reject) => {
      const item: CommitItem = { recs, raw, resolve, reject };
      this.codeJobOf.set(item, job);
      this.commitQueue.push(item);
      if (!this.committing) void this.runCommits();
    }).then(() => recs.map((r) => r.meta));
  }

  /**
   * Group commit: every delivery queued meanwhile is made durable in one batch (files.ts),
   * then indexed, journaled and announced, then acknowledged.
   */
  private async runCommits(): Promise<void> {
    this.committing = true;
    try {
      while (this.commitQueue.length > 0) {
        // Bounds the bytes acknowledged and waiting for their files (a disk slower than the network).
        await this.files.materialiser.room();
        // While someone listens, the messages announced and waiting for their code.
        await this.codes.room();
        // The process-safe rule waits for no I/O: a turn of the event loop lets the timers (the
        // background flush, the journal) and the sockets run, and the deliveries they bring join
        // this batch.
        if (this.durability === 'process') await new Promise<void>((resolve) => setImmediate(resolve));
        const queued = this.commitQueue;
        this.commitQueue = [];
        const batch = await this.files.commit(queued);
        if (batch.length === 0) continue;
        for (const b of batch) {
          for (const r of b.recs) this.index.insert(r);
          const job = this.codeJobOf.get(b)!;
          this.codes.add(job);
        }
        const touched = new Map<string, { domain: string; inbox: string }>();
        for (const b of batch) {
          for (const r of b.recs) touched.set(`${r.meta.domain}\n${r.meta.inbox}`, r.meta);
          b.resolve();
        }
        this.codes.delivered();
        this.codes.pump();
        for (const t of touched.values()) this.enforceCount(t.domain, t.inbox);
        if (this.files.checkpoints.due) void this.checkpoint();
      }
    } finally {
      this.committing = false;
    }
  }

  async delete(id: string): Promise<boolean> {
    this.assertOpen();
    const rec = this.index.record(id);
    if (!rec) return false;
    await this.track(this.remove([rec], 'answered'));
    return true;
  }

  async clear(domain: string | undefined, inbox: string): Promise<number> {
    this.assertOpen();
    const list = this.index.listFor(domain, inbox);
    if (!list) return 0;
    const recs = [...list.ascending()];
    await this.track(this.remove(recs, 'answered'));
    return recs.length;
  }

  /**
   * Drops records from the index at once (so readers never see them again), then logs the
   * removal and unlinks their files. An `answered` removal (a delete someone waits for) is
   * durable before it resolves; retention's are not synced (one that a power cut undoes is
   * applied again on the next start).
   */
  private async remove(recs: IndexRecord[], kind: 'answered' | 'retention'): Promise<void> {
    const live = recs.filter((r) => !r.dead);
    if (live.length === 0) return;
    for (const r of live) this.index.remove(r);
    const metas = live.map((r) => r.meta);
    this.keys.forget(metas.map((m) => m.id));
    this.codes.forget(metas);
    this.events.emit('delete', metas);
    await this.files.remove(metas, kind === 'answered');
    let text = '';
    for (const m of metas) text += deleteLine(m.id);
    this.journal.append(text, live.length);
    this.maybeCompact();
  }

  // ---- retention -------------------------------------------------------------------------

  private enforceCount(domain: string, inbox: string): void {
    const excess = this.index.excess(domain, inbox, this.retention.maxMessages);
    if (excess.length > 0) void this.track(this.remove(excess, 'retention'));
  }

  private applyRetention(): void {
    if (this.state !== 'open') return;
    if (this.retention.maxAgeMs > 0) {
      const old = this.index.olderThan(Date.now() - this.retention.maxAgeMs);
      if (old.length > 0) void this.track(this.remove(old, 'retention'));
    }
    if (this.retention.maxMessages > 0) {
      for (const { domain, inbox } of this.index.inboxKeys()) this.enforceCount(domain, inbox);
    }
  }

  // ---- reads -----------------------------------------------------------------------------

  list(domain: string | undefined, inbox: string, options: ListOptions): Answer<ListResult> {
    const result = this.index.list(domain, inbox, options);
    const ready = this.codes.of(result.msgs);
    return ready ? ready.then(() => result) : result;
  }

  /**
   * Walks the index newest first (the one inbox or domain the terms name, when they name one),
   * yielding to the event loop every SEARCH_CHUNK records so a search over a million never
   * holds up SMTP or another request.
   */
  async search(terms: readonly MetaTerm[], options: SearchOptions): Promise<ListResult> {
    this.assertOpen();
    // A term that reads the code (code:, has:code): the code of every message acknowledged so far first.
    if (terms.some((t) => t.field === 'code' || (t.field === 'has' && t.value === 'code'))) await this.codes.settle();
    const named = (field: 'domain' | 'inbox'): string | undefined => terms.find((t) => t.field === field && !t.negated)?.value as string | undefined;
    const walk = this.index.searchWalk(named('domain'), named('inbox'), options.cursor, (meta) => terms.every((t) => matchesMetaTerm(t, meta)), {
      from: options.skip,
      to: options.skip + options.limit,
    });
    const msgs: MessageMeta[] = [];
    if (!walk) return { msgs, total: options.count ? 0 : -1 };
    let total = 0;
    let toSkip = options.skip;
    let more = false;
    let n = 0;
    for (const r of walk) {
      if (++n % SEARCH_CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
      if (r === null) continue;
      total++;
      if (toSkip > 0) {
        toSkip--;
        continue;
      }
      // The walk makes records of the page's matches alone; the others only count.
      if (msgs.length < options.limit && r !== true) msgs.push(r.meta);
      else {
        more = true;
        if (!options.count) break;
      }
    }
    // A message acknowledged during the walk is listed with its code.
    await this.codes.of(msgs);
    return { msgs, total: options.count ? total : -1, ...(more && msgs.length > 0 ? { nextCursor: msgs[msgs.length - 1].id } : {}) };
  }

  findByKey(key: string): KeyedMessage | undefined {
    const e = this.keys.find(key);
    const meta = e && this.index.record(e.id)?.meta;
    return meta && { meta, key: e.key, scope: e.scope, data: e.data };
  }

  listByScope(scope: string): KeyedMessage[] {
    const out: KeyedMessage[] = [];
    for (const e of this.keys.scope(scope)) {
      const meta = this.index.record(e.id)?.meta;
      if (meta) out.push({ meta, key: e.key, scope: e.scope, data: e.data });
    }
    // Newest first: by receipt time, then the later one added.
    return out.reverse().sort((a, b) => b.meta.time - a.meta.time);
  }

  get(id: string): Answer<MessageMeta | undefined> {
    const meta = this.index.record(id)?.meta;
    const ready = meta && this.codes.of([meta]);
    return ready ? ready.then(() => meta) : meta;
  }

  /** Messages acknowledged whose code is still to be read (tests). */
  get codesWaiting(): number {
    return this.codes.waiting;
  }

  /** Bytes of heads held in memory for codes still to read (tests). */
  get codeBytesHeld(): number {
    return this.codes.bytesHeld;
  }

  /** Test hook: the background reading of codes waits (a read that needs one still reads it) until the returned function is called. */
  holdCodes(): () => void {
    return this.codes.hold();
  }

  async readRaw(id: string): Promise<Buffer> {
    const rec = this.index.record(id);
    if (!rec) throw new StoreError('not_found', `no message ${id}`);
    return this.files.read(rec.meta);
  }

  domains(): Array<{ name: string; inboxes: number; messages: number }> {
    return this.index.domains();
  }

  inboxes(domain: string | undefined): Array<{ domain: string; inbox: string; count: number; latest: number }> {
    return this.index.inboxes(domain);
  }

  on<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.on(event, listener);
  }

  off<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.off(event, listener);
  }

  /** Where a message's file lives (in `new/`, or `tmp/` while being written). */
  pathOf(meta: Pick<MessageMeta, 'domain' | 'inbox' | 'id'>, sub: 'tmp' | 'new' = 'new'): string {
    return this.files.pathOf(meta, sub);
  }

  /** Resolves once the `.eml` of every message acknowledged so far is written (for tests and tools that read the Maildir's files directly). */
  filesWritten(): Promise<void> {
    return this.files.materialiser.idle();
  }

  /** Test hook: no background flush starts (process-safe rule) until the returned function is called or the store closes. */
  holdFlush(): () => void {
    return this.files.flusher.hold();
  }

  /** Test hook: told of each completed background flush (the tick of its timer that started it, what it synced); returns the unsubscribe. */
  watchFlushes(fn: (done: FlushDone) => void): () => void {
    return this.files.flusher.watch(fn);
  }

  /** Test hook: the background flush's timer ticks so far. */
  get flushTicks(): number {
    return this.files.flusher.ticks;
  }

  /** Test hook: holds back the writing of `.eml` files (messages are still acknowledged from the log) until the returned function is called or the store closes. */
  holdMaterialiser(): () => void {
    return this.files.materialiser.hold();
  }

  // ---- journal -----------------------------------------------------------------------------

  private journalNeedsCompaction(): boolean {
    return this.journal.lineCount > this.journalCompactMinLines && this.journal.lineCount > JOURNAL_COMPACT_RATIO * this.index.size;
  }

  private maybeCompact(): void {
    if (this.compacting || this.state !== 'open' || !this.journalNeedsCompaction()) return;
    this.compacting = true;
    void this.track(
      this.journal
        // A message whose code is still unread gets its line once it is read: written now it would
        // say "no code", and a start after a crash would trust it instead of reading the file.
        .compact(this.codes.waiting > 0 ? [...this.index.liveMetas()].filter((m) => !this.codes.isPending(m.id)) : this.index.liveMetas(), this.counter)
        .catch((e: unknown) => this.log('warn', `store: journal compaction failed: ${(e as Error).message}`))
        .finally(() => (this.compacting = false)),
    );
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new StoreError('not_open', 'the store is not open');
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = (): void => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }
}
