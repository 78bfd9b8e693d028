// The code-reading step of the Maildir store: a message's one-time code is read after its
// acknowledgement (acknowledging needs only the header fields and the file), when it is wanted,
// at most CODE_CONCURRENCY at once, in this order:
// 1. asked: a read that returns a message whose code is unread (a listing, a fetch, a search)
//    starts its read at once and waits for it (`of`, `settle`);
// 2. announced: while anyone listens for `message` events (a push stream, a wait=, the debug log)
//    each delivery's code is read as it is acknowledged, ahead of any backlog, so every event
//    carries its code; deliveries wait while MAX_ANNOUNCED_WAITING of these wait (`room`);
// 3. background: the rest, in arrival order, once deliveries pause (CODE_IDLE_MS), or once the
//    oldest has waited CODE_LAG_MS (a steady flow that never pauses).
// So a burst of mail no one watches pays for its acknowledgements first (issue 36: the code read
// was 0.55 of 1.46 ms of CPU per message). Reads run on the server's worker threads when it
// gives a detector (workers/pool.ts detectCode). Once a job's codes are kept in its records, the
// store journals its messages and, when someone listened at their acknowledgement, announces them
// (`kept`). Memory: past MAX_PENDING_CODE_BYTES of heads waiting, a job keeps only its records and
// reads the first CODE_SCAN_MAX_BYTES of its file when its turn comes; a job whose messages were
// all removed meanwhile is dropped (`forget`).
import type { MessageMeta, MessageParts, StoreLog } from '../types';
import { CODE_SCAN_MAX_BYTES, detectCode } from '../code';
import { type CodeDetector, indexedCodes } from '../incoming';
import { isPhoneInbox } from '../../../core/ids';
import type { IndexRecord } from './ordered';

/**
 * Codes read at once (each a MIME parse and a scan, a few hundred µs of CPU, and for a job past
 * the memory bound an open file): enough that a group commit's codes go to a worker together
 * (workers/pool.ts detectCode), and a bound on the files open for them.
 */
export const CODE_CONCURRENCY = 32;
/** Background reads start once no delivery was committed for this long. */
export const CODE_IDLE_MS = 20;
/** ...or once the oldest background job has waited this long (deliveries that never pause). */
export const CODE_LAG_MS = 30_000;
/** Heads (or composed parts) kept in memory for codes still to read; beyond, a job reads its file. */
export const MAX_PENDING_CODE_BYTES = 8 * 1024 * 1024;
/** While someone listens, deliveries wait while this many announced messages wait for their code. */
const MAX_ANNOUNCED_WAITING = 256;

/** Acknowledged messages (one body, one record per recipient) whose one-time code is still to be read. */
export interface CodeJob {
  recs: IndexRecord[];
  /** The message's head, or its composed parts (injected, webhook); neither once evicted: then its file is read. */
  head: Buffer | undefined;
  parts: MessageParts | undefined;
  /** Bytes this job holds in memory (counted in the bound). */
  bytes: number;
  /** Whether anyone listened for `message` events at its acknowledgement: only then is it announced. */
  announce: boolean;
  /** When it was queued (performance.now()). */
  at: number;
  state: 'queued' | 'running' | 'done';
  /** Waiting for it to be done. */
  waiters?: Array<() => void>;
}

/**
 * A delivery's code job: its head is read no further than a code is looked for
 * (CODE_SCAN_MAX_BYTES), copied when it is a slice of a larger buffer so that the bound counts
 * what it holds; composed parts make the head unneeded (incoming.ts indexedCodes).
 */
export function codeJob(recs: IndexRecord[], head: Buffer, parts: MessageParts | undefined): CodeJob {
  const job: CodeJob = { recs, head: undefined, parts, bytes: 0, announce: false, at: 0, state: 'queued' };
  if (parts) job.bytes = parts.subject.length + parts.text.length;
  else {
    const kept = head.length > CODE_SCAN_MAX_BYTES ? head.subarray(0, CODE_SCAN_MAX_BYTES) : head;
    job.head = kept.buffer.byteLength > 2 * kept.length ? Buffer.from(kept) : kept;
    job.bytes = job.head.length;
  }
  return job;
}

/** A first-in, first-out queue of jobs (an array with a moving head: shift() on a large array is O(n)). */
class JobQueue {
  private items: CodeJob[] = [];
  private head = 0;

  push(job: CodeJob): void {
    this.items.push(job);
  }

  /** The oldest job still queued (those started meanwhile are dropped on the way). */
  peek(): CodeJob | undefined {
    while (this.head < this.items.length && this.items[this.head].state !== 'queued') this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return this.items[this.head];
  }

  shift(): CodeJob | undefined {
    const job = this.peek();
    if (job) this.head++;
    return job;
  }
}

/** What the store gives the code readings. */
export interface CodeReadingsDeps {
  /** Reads a code off this thread (the server's workers); default: code.ts detectCode here. */
  elsewhere: CodeDetector | undefined;
  log: StoreLog;
  /** Keeps the store's close waiting for a running job. */
  track: (p: Promise<void>) => Promise<void>;
  /** Journals a job's messages still stored once their codes are kept, and announces them when `announce`. */
  kept: (live: readonly IndexRecord[], announce: boolean) => void;
  /** True while someone listens for the store's `message` events. */
  wanted: () => boolean;
  /** The first `max` bytes of a stored message (an evicted job's head). */
  readHead: (meta: MessageMeta, max: number) => Promise<Buffer>;
  /** Test seams: CODE_IDLE_MS, CODE_LAG_MS. */
  idleMs?: number;
  lagMs?: number;
}

export class CodeReadings {
  private readonly asked = new JobQueue();
  private readonly announced = new JobQueue();
  private readonly background = new JobQueue();
  private readonly pendingCodes = new Map<string, CodeJob>();
  private pendingCodeBytes = 0;
  private announcedWaiting = 0;
  private running = 0;
  private readonly runningReads = new Set<Promise<void>>();
  private held = 0;
  private lastDelivery = 0;
  private timer: NodeJS.Timeout | undefined;
  private roomWaiters: Array<() => void> = [];
  private readonly detect: CodeDetector;
  private readonly idleMs: number;
  private readonly lagMs: number;

  constructor(private readonly deps: CodeReadingsDeps) {
    // The same detector either way: a worker that cannot answer (stopping, died) leaves the work to this thread.
    const elsewhere = deps.elsewhere;
    this.detect = elsewhere ? (head, sms) => elsewhere(head, sms).catch(() => detectCode(head, sms)) : detectCode;
    this.idleMs = deps.idleMs ?? CODE_IDLE_MS;
    this.lagMs = deps.lagMs ?? CODE_LAG_MS;
  }

  /** Messages acknowledged whose code is still to be read. */
  get waiting(): number {
    return this.pendingCodes.size;
  }

  /** Bytes of heads and parts held for codes still to read (tests). */
  get bytesHeld(): number {
    return this.pendingCodeBytes;
  }

  /** Whether message `id`'s code is still to be read. */
  isPending(id: string): boolean {
    return this.pendingCodes.has(id);
  }

  /** An acknowledged delivery's job joins its queue; past the memory bound it keeps only its records. */
  add(job: CodeJob): void {
    // A listener that comes later asked for what arrives from then on.
    job.announce = this.deps.wanted();
    job.at = performance.now();
    if (this.pendingCodeBytes + job.bytes > MAX_PENDING_CODE_BYTES) {
      job.head = undefined;
      job.parts = undefined;
      job.bytes = 0;
    }
    for (const r of job.recs) this.pendingCodes.set(r.meta.id, job);
    this.pendingCodeBytes += job.bytes;
    if (job.announce) {
      this.announcedWaiting++;
      this.announced.push(job);
    } else this.background.push(job);
  }

  /** A batch of deliveries was committed: background reads wait until they pause (CODE_IDLE_MS). */
  delivered(): void {
    this.lastDelivery = performance.now();
  }

  /** Messages removed from the store: their codes are not read (a job of removed messages only is dropped). */
  forget(metas: readonly MessageMeta[]): void {
    for (const m of metas) {
      const job = this.pendingCodes.get(m.id);
      if (!job) continue;
      this.pendingCodes.delete(m.id);
      if (job.state === 'queued' && job.recs.every((r) => r.dead)) this.finish(job, []);
    }
  }

  /** Undefined when every one of `metas` has its code read; else starts their reads first and resolves once they are done. */
  of(metas: readonly MessageMeta[]): Promise<void> | undefined {
    if (this.pendingCodes.size === 0) return undefined;
    const jobs = new Set<CodeJob>();
    for (const m of metas) {
      const job = this.pendingCodes.get(m.id);
      if (job) jobs.add(job);
    }
    return jobs.size > 0 ? this.want(jobs) : undefined;
  }

  /** Resolves once the codes of the messages acknowledged so far are read (not of those acknowledged meanwhile). */
  settle(): Promise<void> | undefined {
    return this.pendingCodes.size > 0 ? this.want(new Set(this.pendingCodes.values())) : undefined;
  }

  /** Resolves once every acknowledged message's code is read (the store's close: no delivery comes meanwhile). */
  async drain(): Promise<void> {
    while (this.pendingCodes.size > 0 || this.runningReads.size > 0) await Promise.all([this.settle(), ...this.runningReads]);
  }

  /** While someone listens, waits while too many announced messages wait for their code (MAX_ANNOUNCED_WAITING). */
  room(): Promise<void> | void {
    if (this.announcedWaiting < MAX_ANNOUNCED_WAITING) return;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Ends every hold and the timer: every code is read as soon as it can be (the store's close). */
  release(): void {
    this.held = 0;
    this.lastDelivery = -Infinity;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pump();
  }

  /** Test hook: announced and background reads wait (a read that is asked for still runs) until the returned function is called. */
  hold(): () => void {
    this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held = Math.max(0, this.held - 1);
      this.pump();
    };
  }

  /** Starts queued reads, up to CODE_CONCURRENCY: asked first, then announced, then the background when it may run. */
  pump(): void {
    while (this.running < CODE_CONCURRENCY) {
      const job = this.asked.shift() ?? (this.held > 0 ? undefined : (this.announced.shift() ?? (this.backgroundMayRun() ? this.background.shift() : undefined)));
      if (!job) break;
      void this.start(job);
    }
    this.armTimer();
  }

  private want(jobs: ReadonlySet<CodeJob>): Promise<void> {
    const done: Array<Promise<void>> = [];
    for (const job of jobs) {
      if (job.state === 'done') continue;
      done.push(new Promise<void>((resolve) => (job.waiters ??= []).push(resolve)));
      if (job.state === 'queued') this.asked.push(job);
    }
    this.pump();
    return Promise.all(done).then(() => undefined);
  }

  private backgroundMayRun(): boolean {
    const oldest = this.background.peek();
    if (!oldest) return false;
    const now = performance.now();
    return now - this.lastDelivery >= this.idleMs || now - oldest.at >= this.lagMs;
  }

  /** While background jobs wait, a timer looks again once deliveries may have paused. */
  private armTimer(): void {
    if (this.timer || this.held > 0 || !this.background.peek()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, this.idleMs).unref();
  }

  private start(job: CodeJob): Promise<void> {
    job.state = 'running';
    this.running++;
    const p = this.deps.track(
      this.read(job).finally(() => {
        this.running--;
        this.runningReads.delete(p);
        this.pump();
      }),
    );
    this.runningReads.add(p);
    return p;
  }

  /**
   * Reads a delivery's code (as an email and as an SMS, for the kinds among its recipients) and
   * keeps it in the index. A code is a convenience: one that cannot be read leaves the message
   * without one. Messages all removed meanwhile are not read.
   */
  private async read(job: CodeJob): Promise<void> {
    let codes = new Map<boolean, string | undefined>();
    const first = job.recs.find((r) => !r.dead);
    if (first) {
      try {
        const head = job.head ?? (job.parts ? Buffer.alloc(0) : await this.deps.readHead(first.meta, CODE_SCAN_MAX_BYTES));
        codes = await indexedCodes(job.recs.map((r) => r.meta), head, job.parts, this.detect);
      } catch (e) {
        if (!first.dead) this.deps.log('warn', `store: reading the code of ${first.meta.id} failed: ${(e as Error).message}`);
      }
    }
    for (const r of job.recs) {
      const code = codes.get(isPhoneInbox(r.meta.inbox));
      if (code) r.meta.code = code;
    }
    this.finish(job, job.recs.filter((r) => !r.dead));
  }

  /** The job is done: it leaves the counts, its messages still stored are journaled (and announced), its waiters resume. */
  private finish(job: CodeJob, live: readonly IndexRecord[]): void {
    job.state = 'done';
    for (const r of job.recs) if (this.pendingCodes.get(r.meta.id) === job) this.pendingCodes.delete(r.meta.id);
    this.pendingCodeBytes -= job.bytes;
    job.head = undefined;
    job.parts = undefined;
    job.bytes = 0;
    if (job.announce && --this.announcedWaiting < MAX_ANNOUNCED_WAITING) for (const wake of this.roomWaiters.splice(0)) wake();
    this.deps.kept(live, job.announce);
    for (const resolve of job.waiters?.splice(0) ?? []) resolve();
  }
}
