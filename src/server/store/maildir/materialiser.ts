// The background materialiser of the Maildir store: writes the `.eml` files of messages that
// are already durable in the write-ahead log (and acknowledged), a bounded number at once, off
// the acknowledgement's path. Until a message's file is written its bytes stay here, so a read
// is served from memory; a removal cancels what is not written yet (so it is never written
// later) and waits for a write in progress (so the caller's unlink comes after it). A write
// that fails (a full disk, say) is tried again later; the message stays readable and in the
// log meanwhile, and the checkpoint keeps its log generation. Knows nothing of paths: the
// writing is the caller's (files.ts).

import type { IndexRecord } from './ordered';

/**
 * Files written at once. The writes run on the server's file-writing thread (fileWrites.ts), not
 * libuv's pool, which stays the log's fdatasync's and the reads'; enough that a group commit's
 * files go to that thread together.
 */
const MATERIALISE_CONCURRENCY = 32;
/** Bytes waiting for their files above which deliveries wait (bounds memory when the disk is slower than the network). */
const MATERIALISE_BACKLOG_BYTES = 64 * 1024 * 1024;
/** A failed write is tried again after this long. */
const MATERIALISE_RETRY_MS = 1000;

export interface MaterialiseJob {
  /** Every recipient's record; their files share the bytes (hard links where possible). */
  readonly recs: IndexRecord[];
  readonly raw: Buffer;
  /** Ids whose file is in new/. */
  readonly written: Set<string>;
  /** Ids removed before their file was written: never written. */
  readonly cancelled: Set<string>;
  /** Resolves true once every file is written or cancelled, false when the store closed first. */
  readonly done: Promise<boolean>;
}

interface Job extends MaterialiseJob {
  state: 'new' | 'queued' | 'running' | 'waiting' | 'finished';
  running?: Promise<void>;
  retry?: NodeJS.Timeout;
  failures: number;
  finish(ok: boolean): void;
}

export class Materialiser {
  private readonly queue: Job[] = [];
  private readonly byId = new Map<string, Job>();
  private active = 0;
  private held = false;
  private stopping = false;
  private roomWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  /** Jobs started and not finished. */
  private jobs = 0;
  /** Bytes of the jobs started and not finished. */
  pendingBytes = 0;
  /** Jobs whose write failed and that are not finished yet (waiting to be tried again, or being tried again). */
  private readonly failed = new Set<Job>();

  constructor(
    private readonly write: (job: MaterialiseJob) => Promise<void>,
    private readonly onFailure: (job: MaterialiseJob, e: unknown, first: boolean) => void,
    private readonly concurrency = MATERIALISE_CONCURRENCY,
  ) {}

  /** A job for a delivery about to be logged; nothing happens until start(). */
  create(recs: IndexRecord[], raw: Buffer): MaterialiseJob {
    let finish: (ok: boolean) => void = () => undefined;
    const done = new Promise<boolean>((resolve) => (finish = resolve));
    const job: Job = { recs, raw, written: new Set(), cancelled: new Set(), done, state: 'new', failures: 0, finish: (ok) => finish(ok) };
    return job;
  }

  /** The job's records are durable in the log: from now it is readable here and its files get written. */
  start(j: MaterialiseJob): void {
    const job = j as Job;
    if (job.state !== 'new') return;
    for (const r of job.recs) this.byId.set(r.meta.id, job);
    this.pendingBytes += job.raw.length;
    this.jobs++;
    job.state = 'queued';
    this.queue.push(job);
    this.pump();
  }

  /** The log write failed: the job's files are never written. */
  abandon(j: MaterialiseJob): void {
    const job = j as Job;
    if (job.state === 'new') {
      job.state = 'finished';
      job.finish(true);
    }
  }

  /** The bytes of a message whose file is not written yet (undefined once it is, or when unknown). */
  bytesOf(id: string): Buffer | undefined {
    return this.byId.get(id)?.raw;
  }

  /**
   * Before removing messages: the ones not written yet never will be, and a write in progress
   * is waited for (the caller then unlinks what it wrote).
   */
  async settle(ids: string[]): Promise<void> {
    const jobs = new Set<Job>();
    for (const id of ids) {
      const job = this.byId.get(id);
      if (!job) continue;
      job.cancelled.add(id);
      jobs.add(job);
    }
    for (const job of jobs) {
      if (job.running) await job.running.catch(() => undefined);
      if (job.state === 'finished' || job.state === 'running' || !this.complete(job)) continue;
      if (job.state === 'waiting') clearTimeout(job.retry);
      this.finishJob(job, true);
    }
  }

  /** Jobs whose write failed and are not finished: a checkpoint waits for them until they succeed. */
  get failing(): number {
    return this.failed.size;
  }

  /** Test hook: holds every write back until the returned function is called (or the store closes). */
  hold(): () => void {
    this.held = true;
    return () => {
      this.held = false;
      this.pump();
    };
  }

  /** Resolves once the backlog is below MATERIALISE_BACKLOG_BYTES (at once, mostly). */
  room(): Promise<void> {
    if (this.pendingBytes <= MATERIALISE_BACKLOG_BYTES || this.stopping) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once no job is waiting or running (every acknowledged file written, or cancelled). */
  idle(): Promise<void> {
    if (this.jobs === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The store is closing: nothing is held back any more, and a failed write is not tried again (its log generation is kept). */
  stop(): void {
    this.stopping = true;
    this.held = false;
    for (const job of [...this.byId.values()]) {
      if (job.state === 'waiting') {
        clearTimeout(job.retry);
        this.finishJob(job, false);
      }
    }
    this.wakeRoom();
    this.pump();
  }

  private pump(): void {
    while ((!this.held || this.stopping) && this.active < this.concurrency && this.queue.length > 0) {
      const job = this.queue.shift() as Job;
      if (job.state !== 'queued') continue;
      if (this.complete(job)) {
        this.finishJob(job, true);
        continue;
      }
      this.run(job);
    }
  }

  private run(job: Job): void {
    this.active++;
    job.state = 'running';
    let failure: unknown;
    let failed = false;
    job.running = this.write(job).catch((e: unknown) => {
      failed = true;
      failure = e;
    });
    void job.running.then(() => {
      job.running = undefined;
      this.active--;
      if (this.complete(job)) this.finishJob(job, true);
      else if (!failed) this.requeue(job); // cancelled or added meanwhile: look again
      else if (this.stopping) this.finishJob(job, false);
      else {
        this.onFailure(job, failure, job.failures === 0);
        job.failures++;
        job.state = 'waiting';
        this.failed.add(job);
        job.retry = setTimeout(() => this.requeue(job), MATERIALISE_RETRY_MS);
        job.retry.unref();
      }
      this.pump();
    });
  }

  private requeue(job: Job): void {
    job.state = 'queued';
    this.queue.push(job);
    this.pump();
  }

  private complete(job: Job): boolean {
    return job.recs.every((r) => job.written.has(r.meta.id) || job.cancelled.has(r.meta.id));
  }

  private finishJob(job: Job, ok: boolean): void {
    if (job.state === 'finished') return;
    job.state = 'finished';
    this.failed.delete(job);
    for (const r of job.recs) if (this.byId.get(r.meta.id) === job) this.byId.delete(r.meta.id);
    this.pendingBytes -= job.raw.length;
    this.jobs--;
    job.finish(ok);
    this.wakeRoom();
    if (this.jobs === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private wakeRoom(): void {
    if (this.roomWaiters.length === 0 || (this.pendingBytes > MATERIALISE_BACKLOG_BYTES && !this.stopping)) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }
}
