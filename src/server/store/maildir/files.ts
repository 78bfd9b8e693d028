// The files of the Maildir store: one RFC 5322 `.eml` per message under
// `<dir>/mail/<domain>/<inbox>/{tmp,new,cur}` (layout.ts), written to tmp/ and renamed into new/.
// Two rules (the `durability` option, docs/architecture.md):
// - `process` (the default): the file is written and renamed into new/ before the
//   acknowledgement (the materialiser's writes, run at once), and nothing waits for an fsync; the
//   background flush (flusher.ts) makes the files and folders durable within a second. No log
//   record, no copy kept in memory, no checkpoint of messages.
// - `strict`: a message is made durable by the write-ahead log (wal.ts) before it is
//   acknowledged; its file is written afterwards by the materialiser (materialiser.ts). The log's
//   checkpoints are checkpoints.ts; a delete is durable before it is answered.
// Recovery on open (replay and scan) is recovery.ts. A full disk is StoreError full.
// Knows nothing of the in-memory index (memoryIndex.ts) or events: the store facade (store.ts)
// composes the two.
import { chmodSync, constants as fsConstants, copyFileSync, promises as fs, linkSync, renameSync, statfsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { errnoCode, isNoSpace, StoreError } from '../errors';
import type { MessageBody, MessageMeta, StoreLog } from '../types';
import type { Durability } from '../../../shared/contract';
import { Checkpoints } from './checkpoints';
import { Flusher } from './flusher';
import { FLUSH_CONCURRENCY, flushFiles, OPEN_CONCURRENCY, rmQuietly } from './fileOps';
import { fsyncDir, inboxDirOf, mailPathError, mailRoot, mapLimit, messageFileOf, PRIVATE_DIR_MODE, type SyncFd } from './layout';
import { fileWriteError, type FileWriter, writeFileHere } from './fileWrites';
import { Materialiser, type MaterialiseJob } from './materialiser';
import type { IndexRecord } from './ordered';
import { linkRecord, messageRecord, WriteAheadLog } from './wal';
import { retryBusy } from '../../../shared/portableFs';

/**
 * Messages in memory are acknowledged before their files are written (by the materialiser) only
 * while the data dir's file system has this much room beyond twice the bytes waiting for their
 * files: a file that then finds no room would keep its log generation. Below it, a delivery's
 * files are written before it is acknowledged, and a full disk is answered as such.
 */
const LATE_WRITE_MIN_FREE_BYTES = 64 * 1024 * 1024;

/** One delivery waiting for the group commit. */
export interface CommitItem {
  recs: IndexRecord[];
  raw: MessageBody;
  /** Set when the item was rejected before its files were written. */
  failed?: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** link() errors that mean "this file system has no hard links" (FAT, some network shares), not a failed write. */
const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
/** link() errors that mean "not this link" (another file system, too many links to one file): this one file is copied. */
const LINK_REFUSED = new Set(['EXDEV', 'EMLINK']);

function storeFailure(e: unknown): StoreError {
  if (StoreError.is(e)) return e;
  if (isNoSpace(e)) return new StoreError('full', 'the disk of the data dir is full; the message was not stored (delete messages or free space, then try again)', { cause: e });
  return new StoreError('io', `could not store the message: ${(e as Error).message}`, { cause: e });
}

export class MaildirFiles {
  readonly wal: WriteAheadLog;
  /** The log's checkpoints (checkpoints.ts). */
  readonly checkpoints: Checkpoints;
  /** Writes the files of messages acknowledged from the log alone (materialiser.ts). */
  readonly materialiser: Materialiser;
  private readonly readyDirs = new Map<string, Promise<void>>();
  /** The process-safe rule's background flush (flusher.ts); idle under the strict rule. */
  readonly flusher: Flusher;
  /** Recipients of one message share one file through hard links; dropped where the file system refuses them. */
  private linksUsable = true;

  /** Told of each inbox whose `new/` and `tmp/` this store created itself (so every file in them is its own, created 0600). */
  onInboxCreated: (domain: string, inbox: string) => void = () => {};

  constructor(
    readonly dir: string,
    private readonly log: StoreLog,
    /** Runs the materialiser's writes and links (fileWrites.ts): on the server's worker thread, or here. */
    private readonly writeFile: FileWriter = writeFileHere,
    readonly durability: Durability = 'strict',
    /** The fsync of the log and of the background flush; a test seam may hold it. */
    sync?: SyncFd,
    flushIntervalMs?: number,
  ) {
    this.flusher = new Flusher(log, flushIntervalMs, sync);
    this.wal = new WriteAheadLog(dir, sync);
    this.checkpoints = new Checkpoints(this.wal, log);
    this.materialiser = new Materialiser(
      (job) => this.writeJob(job),
      (job, e, first) => {
        if (first) this.log('warn', `store: could not write the file of message ${job.recs[0].meta.id} yet (it is in the write-ahead log and readable; tried again each second): ${(e as Error).message}`);
      },
    );
  }

  /** Where a message's file lives (in `new/`, or `tmp/` while being written). */
  pathOf(meta: Pick<MessageMeta, 'domain' | 'inbox' | 'id'>, sub: 'tmp' | 'new' = 'new'): string {
    return messageFileOf(this.dir, meta, sub);
  }

  // ---- writes ----------------------------------------------------------------------------

  /**
   * Under the process-safe rule: writes each delivery's files into new/ (commitFiles), hands them
   * to the background flush and resolves them; nothing is logged or synced.
   * Under the strict rule: makes a batch of queued deliveries durable. Bytes in memory are acknowledged from the log
   * alone: one log write and one fdatasync cover the batch, and the materialiser writes their
   * files afterwards (off the acknowledgement's path). Where the disk is short of room
   * (LATE_WRITE_MIN_FREE_BYTES), and for a FileBody, the files are written first, as they were
   * before the log: synchronously, between two fdatasyncs and never during one (a batch of small
   * writes costs less without a thread-pool hop each). Items that fail are rejected here;
   * resolves with the items now durable (not yet resolved: the caller indexes and announces
   * them first).
   */
  async commit(queued: CommitItem[]): Promise<CommitItem[]> {
    const strict = this.durability === 'strict';
    let inMemory = 0;
    if (strict) for (const b of queued) if (Buffer.isBuffer(b.raw)) inMemory += b.raw.length;
    const late = new Set(inMemory > 0 && this.roomFor(inMemory) ? queued.filter((b) => Buffer.isBuffer(b.raw)) : []);
    const now = late.size === 0 ? queued : queued.filter((b) => !late.has(b));
    // Directories first, for every item (once per inbox): one that cannot be made is refused now.
    await this.prepareDirs(queued);
    if (!strict) return this.commitFiles(queued);
    const batch: CommitItem[] = [];
    const full: CommitItem[] = [];
    for (const b of now) {
      if (b.failed) continue;
      const e = this.materialize(b);
      if (e === undefined) batch.push(b);
      else if (isNoSpace(e)) full.push(b);
      else b.reject(storeFailure(e));
    }
    if (full.length > 0) {
      // Until a checkpoint, every message sits on disk twice (its file and its log record): a
      // checkpoint gives the log's copies back, then the messages that found no room are tried
      // once more. Not while a file of the materialiser fails: that checkpoint waits for it.
      if (this.materialiser.failing === 0) await this.checkpoints.run();
      for (const b of full) {
        const e = this.materialize(b);
        if (e === undefined) batch.push(b);
        else b.reject(storeFailure(e));
      }
    }
    const logged = batch.filter((b) => Buffer.isBuffer(b.raw));
    for (const b of late) if (!b.failed) logged.push(b);
    const inFiles = batch.filter((b) => !Buffer.isBuffer(b.raw));
    if (logged.length === 0 && inFiles.length === 0) return [];
    const [loggedOk, filesOk] = await Promise.all([this.logBatch(logged, late), this.flushFileBodies(inFiles)]);
    const ok = new Set([...loggedOk, ...filesOk]);
    return queued.filter((b) => ok.has(b));
  }

  /**
   * The process-safe rule: each delivery's files written into new/ before it resolves, bytes in
   * memory on the file-writing thread (the writes of one turn in one message to it: the event
   * loop never waits in a create), a spooled body hard-linked here. Renamed into place, a file
   * is in the OS and survives the server's death; the background flush syncs it later.
   */
  private async commitFiles(queued: CommitItem[]): Promise<CommitItem[]> {
    const ok = new Set<CommitItem>();
    await Promise.all(
      queued.map(async (b) => {
        if (b.failed) return;
        if (!Buffer.isBuffer(b.raw)) {
          const e = this.materialize(b);
          if (e === undefined) ok.add(b);
          else b.reject(storeFailure(e));
          return;
        }
        const job = { recs: b.recs, raw: b.raw, written: new Set<string>(), cancelled: new Set<string>() };
        try {
          // Its folders were checked by prepareDirs just before.
          await this.writeJob(job, false);
          ok.add(b);
        } catch (e) {
          // Never acknowledged: nothing of it stays.
          for (const r of b.recs) {
            rmQuietly(this.pathOf(r.meta, 'tmp'));
            if (job.written.has(r.meta.id)) rmQuietly(this.pathOf(r.meta, 'new'));
          }
          b.reject(storeFailure(e));
        }
      }),
    );
    const done = queued.filter((b) => ok.has(b));
    this.flusher.add(done.flatMap((b) => b.recs.map((r) => this.pathOf(r.meta, 'new'))));
    return done;
  }

  /** True when the file system has room enough to write `bytes` more after the acknowledgement (LATE_WRITE_MIN_FREE_BYTES). */
  private roomFor(bytes: number): boolean {
    try {
      const s = statfsSync(this.dir);
      return s.bavail * s.bsize >= LATE_WRITE_MIN_FREE_BYTES + 2 * (this.materialiser.pendingBytes + bytes);
    } catch {
      return false;
    }
  }

  /**
   * One log write and one fdatasync for the items whose bytes came in memory; resolves those now
   * durable. The `late` ones have no file yet: once logged, the materialiser writes them.
   */
  private async logBatch(batch: CommitItem[], late: Set<CommitItem>): Promise<CommitItem[]> {
    if (batch.length === 0) return [];
    const parts: Buffer[] = [];
    const files: string[] = [];
    const jobs: MaterialiseJob[] = [];
    for (const b of batch) {
      const raw = b.raw as Buffer;
      // One copy of the bytes per message, however many recipients: the first record carries
      // them, the others name it (and their files are hard links of the first).
      const first = b.recs[0].meta;
      for (const r of b.recs) {
        if (r === b.recs[0]) parts.push(...messageRecord(r.meta, raw));
        else parts.push(linkRecord(r.meta, first.id));
        files.push(this.pathOf(r.meta, 'new'));
      }
      if (late.has(b)) jobs.push(this.materialiser.create(b.recs, raw));
    }
    // Listed and committed in the same tick, so a checkpoint's rotation sees both or neither.
    this.checkpoints.track(files, jobs);
    try {
      await this.wal.commit(parts);
    } catch (e) {
      for (const j of jobs) this.materialiser.abandon(j);
      const written = batch.filter((b) => !late.has(b));
      const writtenFiles = written.flatMap((b) => b.recs.map((r) => this.pathOf(r.meta, 'new')));
      // No room for the log's copy: the files written already are made durable instead (an fsync
      // each); the late ones have no file and are refused.
      const durable = written.length > 0 && isNoSpace(e) && (await flushFiles(writtenFiles).then(() => true, () => false));
      if (!durable) for (const f of writtenFiles) rmQuietly(f);
      for (const b of batch) if (!durable || late.has(b)) b.reject(storeFailure(e));
      if (durable) void this.checkpoints.run();
      return durable ? written : [];
    }
    for (const j of jobs) this.materialiser.start(j);
    return batch;
  }

  /**
   * Writes the files of a message the log holds (the materialiser's work): the first to tmp/
   * then renamed into new/, every further recipient's a hard link of it (or a copy). Skips what
   * is written or cancelled, so a retry continues where a failure stopped.
   */
  private async writeJob(job: Pick<MaterialiseJob, 'recs' | 'raw' | 'written' | 'cancelled'>, checkPath = true): Promise<void> {
    let first: string | undefined;
    for (const r of job.recs) {
      if (job.written.has(r.meta.id) && !job.cancelled.has(r.meta.id)) first ??= this.pathOf(r.meta, 'new');
    }
    for (const r of job.recs) {
      const id = r.meta.id;
      if (job.written.has(id) || job.cancelled.has(id)) continue;
      if (checkPath) {
        await this.ensureInboxDir(r.meta.domain, r.meta.inbox);
        // At the point of use: a link planted since the delivery is never written through (the
        // message stays readable from memory and the write is tried again).
        const unsafe = mailPathError(this.dir, r.meta.domain, r.meta.inbox);
        if (unsafe) throw unsafe;
      }
      const final = this.pathOf(r.meta, 'new');
      if (first !== undefined && this.linksUsable) {
        const failed = await this.writeFile({ from: first, final });
        const code = failed?.code ?? '';
        // EEXIST: only this store names files by this id, so it is a try that failed after linking it.
        if (failed === undefined || code === 'EEXIST') {
          job.written.add(id);
          continue;
        }
        if (LINK_UNSUPPORTED.has(code)) {
          this.linksUsable = false;
          this.log('info', `store: hard links are not available here (${failed.message}); each recipient gets a copy`);
        } else if (!LINK_REFUSED.has(code) && code !== 'ENOENT') {
          throw fileWriteError(failed);
        }
        // Copied below.
      }
      // A leftover of a failed try of this same message in tmp/ is replaced.
      const failed = await this.writeFile({ tmp: this.pathOf(r.meta, 'tmp'), final, raw: job.raw });
      if (failed) throw fileWriteError(failed);
      job.written.add(id);
      first ??= final;
    }
  }

  /**
   * Items whose bytes came as a file (FileBody: a spool file linked into place) are made durable
   * by an fsync of their file and directories, not by a second copy in the log: a big message
   * is written once and never read back into memory. Replay does not need them (the scan on
   * open finds their files), and a removal is logged and synced like any other.
   */
  private async flushFileBodies(batch: CommitItem[]): Promise<CommitItem[]> {
    if (batch.length === 0) return [];
    const files = batch.flatMap((b) => b.recs.map((r) => this.pathOf(r.meta, 'new')));
    try {
      await flushFiles(files);
      return batch;
    } catch (e) {
      for (const f of files) rmQuietly(f);
      for (const b of batch) b.reject(storeFailure(e));
      return [];
    }
  }

  /** Creates the directories of inboxes not seen before; an item whose directory fails is rejected. */
  private async prepareDirs(items: CommitItem[]): Promise<void> {
    await Promise.all(
      items.map(async (b) => {
        try {
          for (const r of b.recs) {
            await this.ensureInboxDir(r.meta.domain, r.meta.inbox);
            // Each delivery, not once per inbox: a folder swapped for a symlink since is refused.
            const unsafe = mailPathError(this.dir, r.meta.domain, r.meta.inbox);
            if (unsafe) throw unsafe;
          }
        } catch (e) {
          b.failed = true;
          b.reject(storeFailure(e));
        }
      }),
    );
  }

  /**
   * Puts an item's first file into new/: bytes in memory are written to tmp/ and renamed, a
   * FileBody is hard-linked from its file (copied file to file, never through memory, where
   * the file system has no hard links). Every further recipient's file is a hard link of the
   * first (or a copy). On failure removes what it made and answers the error.
   */
  private materialize(b: CommitItem): unknown {
    const made: string[] = [];
    let first: string | undefined;
    const body = b.raw;
    try {
      for (const r of b.recs) {
        const final = this.pathOf(r.meta, 'new');
        const linkFrom = first ?? (Buffer.isBuffer(body) ? undefined : body.file);
        if (linkFrom !== undefined && this.linksUsable) {
          try {
            linkSync(linkFrom, final);
            made.push(final);
            first ??= final;
            continue;
          } catch (e) {
            const code = errnoCode(e) ?? '';
            if (LINK_UNSUPPORTED.has(code)) {
              this.linksUsable = false;
              this.log('info', `store: hard links are not available here (${(e as Error).message}); each recipient gets a copy`);
            } else if (!LINK_REFUSED.has(code)) {
              throw e;
            }
            // Copied below.
          }
        }
        const tmp = this.pathOf(r.meta, 'tmp');
        made.push(tmp);
        if (Buffer.isBuffer(body)) writeFileSync(tmp, body, { flag: 'wx', mode: PRIVATE_FILE_MODE });
        else {
          copyFileSync(body.file, tmp, fsConstants.COPYFILE_EXCL);
          chmodSync(tmp, PRIVATE_FILE_MODE);
        }
        renameSync(tmp, final);
        made.push(final);
        first ??= final;
      }
      return undefined;
    } catch (e) {
      for (const f of made) rmQuietly(f);
      return e ?? new Error('write failed');
    }
  }

  /** Makes an inbox's `tmp/`, `new/` and `cur/` (once per inbox and run), refusing a path through a link. */
  ensureInboxDir(domain: string, inbox: string): Promise<void> {
    const key = `${domain}\n${inbox}`;
    let p = this.readyDirs.get(key);
    if (!p) {
      p = (async () => {
        // Before any mkdir: `mkdir -p` would follow a link planted on the way.
        const unsafe = mailPathError(this.dir, domain, inbox);
        if (unsafe) throw unsafe;
        const inboxDir = inboxDirOf(this.dir, domain, inbox);
        // Directories, not just names: a file in their place makes the mkdir below fail, so the
        // delivery is refused before its acknowledgement instead of its file failing after it.
        let existed = true;
        try {
          for (const sub of ['new', 'tmp']) if (!(await fs.stat(path.join(inboxDir, sub))).isDirectory()) existed = false;
        } catch {
          existed = false;
        }
        if (existed) return;
        const made = new Set<string>();
        for (const sub of ['tmp', 'new', 'cur']) if ((await fs.mkdir(path.join(inboxDir, sub), { recursive: true, mode: PRIVATE_DIR_MODE })) !== undefined) made.add(sub);
        // New directory entries are durable only once their parents are synced.
        for (const d of [inboxDir, path.dirname(inboxDir), mailRoot(this.dir)]) await fsyncDir(d);
        if (made.has('tmp') && made.has('new')) this.onInboxCreated(domain, inbox);
      })();
      this.readyDirs.set(key, p);
      p.catch(() => this.readyDirs.delete(key));
    }
    return p;
  }

  /**
   * Removes messages: the removals are logged (a replay of the log does not bring the messages
   * back) and the files unlinked. An `answered` removal under the strict rule is for good before
   * it resolves, so that it survives a power cut: the log record is flushed and the folders
   * fsynced. Under the process-safe rule the unlinks are in the OS before it resolves (a
   * SIGKILL keeps them) and the background flush syncs the folders; retention syncs nothing.
   */
  async remove(metas: MessageMeta[], answered: boolean): Promise<void> {
    // Process-safe: the unlink is in the OS before the answer; the background flush syncs the folders.
    const durable = answered && this.durability === 'strict';
    // A file not written yet never will be; one being written is waited for, then unlinked below.
    await this.materialiser.settle(metas.map((m) => m.id));
    let unlogged: unknown;
    try {
      await this.wal.remove(metas.map((m) => m.id), durable);
    } catch (e) {
      // No record of the removal (a full disk, say): a checkpoint drops the log generations
      // holding these messages instead (every one up to the current; Checkpoints.run()). Not while a
      // file of the materialiser fails: that checkpoint would wait for it, and on a full disk
      // only this removal's unlinks below make the room it needs.
      this.log('warn', `store: could not log a removal (${(e as Error).message}); checkpointing instead`);
      if (this.materialiser.failing > 0 || !(await this.checkpoints.run())) unlogged = e;
    }
    const dirs = new Set<string>();
    await mapLimit(metas, OPEN_CONCURRENCY, async (m) => {
      const file = this.pathOf(m, 'new');
      try {
        await retryBusy(() => fs.unlink(file));
        dirs.add(path.dirname(file));
      } catch (e) {
        if (errnoCode(e) !== 'ENOENT') this.log('warn', `store: could not remove ${file}: ${(e as Error).message}`);
      }
    });
    if (this.durability === 'process') this.flusher.addDirs(dirs);
    else if (durable) await mapLimit([...dirs], FLUSH_CONCURRENCY, (d) => fsyncDir(d).catch((e: unknown) => this.log('warn', `store: could not sync ${d} after a removal: ${(e as Error).message}`)));
    if (unlogged !== undefined) {
      // Neither logged nor out of the log: a start before the next successful checkpoint brings them back.
      const msg = `the removal of ${metas.length} message(s) is not durable yet (it could not be logged and the log generations holding them were kept; a restart before the next checkpoint brings them back): ${(unlogged as Error).message}`;
      this.log('warn', `store: ${msg}`);
      if (durable) throw new StoreError(isNoSpace(unlogged) ? 'full' : 'io', msg, { cause: unlogged });
    }
  }

  async read(meta: MessageMeta): Promise<Buffer> {
    // Acknowledged, its file not written yet: served from the materialiser's copy.
    const pending = this.materialiser.bytesOf(meta.id);
    if (pending) return pending;
    return this.readStored(meta, () => fs.readFile(this.pathOf(meta, 'new')));
  }

  /** The first `max` bytes of a message (its code is read from them), without reading the rest. */
  async readHead(meta: MessageMeta, max: number): Promise<Buffer> {
    const pending = this.materialiser.bytesOf(meta.id);
    if (pending) return pending.length > max ? pending.subarray(0, max) : pending;
    return this.readStored(meta, async () => {
      const fh = await fs.open(this.pathOf(meta, 'new'), 'r');
      try {
        const buf = Buffer.allocUnsafe(Math.min(max, (await fh.stat()).size));
        const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
        return buf.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
    });
  }

  private async readStored(meta: MessageMeta, read: () => Promise<Buffer>): Promise<Buffer> {
    try {
      return await read();
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new StoreError('not_found', `message ${meta.id} is no longer on disk`, { cause: e });
      throw new StoreError('io', `cannot read message ${meta.id}: ${(e as Error).message}`, { cause: e });
    }
  }

  /** Closes the log (after a final checkpoint by the caller); an empty last generation is removed. */
  async close(): Promise<void> {
    const last = await this.wal.close();
    if (this.wal.bytes === 0) await retryBusy(() => fs.rm(last, { force: true }));
  }
}
