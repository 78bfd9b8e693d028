// The background flush of the process-safe rule (durability `process`, files.ts). A message is
// acknowledged once its file is renamed into new/: the OS holds it, so the server's death
// (SIGKILL, a crash, a closed editor) loses nothing. What an OS crash or a power loss may take is
// bounded by this flush: every FLUSH_INTERVAL_MS the files written since the last one are
// fsynced, then the folders whose entries changed (the renames into new/, the unlinks of
// deletes). A flush that is still running when the next is due is followed at once by the next.
// The strict rule needs none of this: it fdatasyncs its log before each acknowledgement.
import * as path from 'node:path';
import type { StoreLog } from '../types';
import { FLUSH_CONCURRENCY, flushDirs, fsyncFile } from './fileOps';
import { mapLimit, type SyncFd } from './layout';

/**
 * A flush starts this often: the power-loss window of the process-safe rule is this plus one
 * flush's duration, within the second the rule promises on a disk that keeps up.
 */
export const FLUSH_INTERVAL_MS = 500;

/** One completed flush, for the test seam (MaildirStore.watchFlushes). */
export interface FlushDone {
  /** The timer tick that started it (ticks counted from the store's open). */
  tick: number;
  files: readonly string[];
  dirs: readonly string[];
}

export class Flusher {
  private files = new Set<string>();
  private dirs = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A tick came while a flush ran: the next starts as soon as it ends. */
  private due = false;
  private held = 0;
  private failure: string | undefined;
  /** Ticks of the timer so far. */
  ticks = 0;
  private readonly watchers = new Set<(done: FlushDone) => void>();

  constructor(
    private readonly log: StoreLog,
    private readonly intervalMs = FLUSH_INTERVAL_MS,
    /** fsync of a descriptor; a test seam may hold it. */
    private readonly sync?: SyncFd,
  ) {}

  /** Files renamed into place, to make durable at the next flush (their folders with them). */
  add(files: readonly string[]): void {
    for (const f of files) {
      this.files.add(f);
      this.dirs.add(path.dirname(f));
    }
  }

  /** Folders whose entries changed (an unlink), to make durable at the next flush. */
  addDirs(dirs: Iterable<string>): void {
    for (const d of dirs) this.dirs.add(d);
  }

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      this.ticks++;
      this.kick();
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and flushes what is left (the close of the store). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.held = 0;
    while (this.running) await this.running;
    await this.flushNow(this.ticks);
  }

  /** Test seam: no flush starts (what is added stays in the OS only) until the returned function is called. */
  hold(): () => void {
    this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
    };
  }

  /** Test seam: told of each completed flush; returns the unsubscribe. */
  watch(fn: (done: FlushDone) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private kick(): void {
    if (this.held > 0) return;
    if (this.running) {
      this.due = true;
      return;
    }
    const tick = this.ticks;
    this.running = this.flushNow(tick).finally(() => {
      this.running = undefined;
      if (this.due && this.timer) {
        this.due = false;
        this.kick();
      }
    });
  }

  /** Never rejects: a file or folder that fails is logged and tried again at the next flush. */
  private async flushNow(tick: number): Promise<void> {
    const files = this.files;
    const dirs = this.dirs;
    if (files.size === 0 && dirs.size === 0) return;
    this.files = new Set();
    this.dirs = new Set();
    const failed: string[] = [];
    let cause: string | undefined;
    await mapLimit([...files], FLUSH_CONCURRENCY, (f) =>
      fsyncFile(f, this.sync).catch((e: unknown) => {
        failed.push(f);
        cause ??= (e as Error).message;
      }),
    );
    // After the files: a folder's entry then never names a file whose bytes a power loss lost.
    await flushDirs(dirs, this.sync).catch((e: unknown) => {
      for (const d of dirs) this.dirs.add(d);
      cause ??= (e as Error).message;
    });
    if (failed.length > 0) this.add(failed);
    if (cause !== undefined && cause !== this.failure) {
      this.log('warn', `store: the background flush failed (the mail is stored and survives the server's death; a power loss could take it until a flush succeeds; tried again at the next one): ${cause}`);
    }
    this.failure = cause;
    for (const w of this.watchers) w({ tick, files: [...files], dirs: [...dirs] });
  }
}
