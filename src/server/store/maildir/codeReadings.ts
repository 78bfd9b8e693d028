// The code-reading step of the Maildir store: a message's one-time code is read after its
// acknowledgement (acknowledging needs only the header fields and the file), and only when it is
// wanted. A read that returns a message whose code is still unread (a listing, a fetch, a search)
// reads it at once and waits for it (`of`); while anyone listens for `message` events (a push
// stream, a wait=, the debug log) every code is read as its message is acknowledged, so every
// event carries its code; otherwise codes are read in the background once deliveries pause
// (IDLE_MS), so a burst of mail pays for its acknowledgements first (issue 36: the code read was
// 0.55 of 1.46 ms of CPU per message). Reads run on the server's worker threads when it gives a
// detector (workers/pool.ts detectCode). Once a job's codes are kept in its records, the store
// journals its messages and, when someone listened at their acknowledgement, announces them
// (`kept`). Memory stays bounded: past
// MAX_PENDING_CODE_BYTES of heads waiting, a job keeps only its records and reads the first
// CODE_SCAN_MAX_BYTES of its file when its turn comes.
import type { MessageMeta, MessageParts, StoreLog } from '../types';
import { CODE_SCAN_MAX_BYTES, detectCode } from '../code';
import { type CodeDetector, indexedCodes } from '../incoming';
import { isPhoneInbox } from '../../../core/ids';
import type { IndexRecord } from './ordered';

/**
 * Codes read at once (each a MIME parse and a scan, a few hundred µs of CPU): enough that a
 * group commit's codes go to a worker together (workers/pool.ts detectCode).
 */
const CODE_CONCURRENCY = 32;
/** Background reads start once no delivery was committed for this long. */
export const CODE_IDLE_MS = 20;
/** Heads (or composed parts) kept in memory for codes still to read; beyond, a job reads its file. */
export const MAX_PENDING_CODE_BYTES = 8 * 1024 * 1024;

/** Acknowledged messages (one body, one record per recipient) whose one-time code is still to be read. */
export interface CodeJob {
  recs: IndexRecord[];
  /** The message's head, or its composed parts (injected, webhook); neither once evicted: then its file is read. */
  head: Buffer | undefined;
  parts: MessageParts | undefined;
  /** Whether anyone listened for `message` events at its acknowledgement: only then is it announced. */
  announce: boolean;
  /** Bytes this job holds in memory (counted in the bound). */
  bytes: number;
  /** Set once the job started; resolves when its codes are kept, journaled and announced. */
  done?: Promise<void>;
}

/**
 * A delivery's code job: its head is read no further than a code is looked for
 * (CODE_SCAN_MAX_BYTES); composed parts make the head unneeded (incoming.ts indexedCodes).
 */
export function codeJob(recs: IndexRecord[], head: Buffer, parts: MessageParts | undefined): CodeJob {
  if (parts) return { recs, head: undefined, parts, announce: false, bytes: parts.subject.length + parts.text.length };
  const kept = head.length > CODE_SCAN_MAX_BYTES ? head.subarray(0, CODE_SCAN_MAX_BYTES) : head;
  return { recs, head: kept, parts: undefined, announce: false, bytes: kept.length };
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
  /** True while someone listens for the store's `message` events: codes are read at once. */
  wanted: () => boolean;
  /** The first `max` bytes of a stored message (an evicted job's head). */
  readHead: (meta: MessageMeta, max: number) => Promise<Buffer>;
}

export class CodeReadings {
  private readonly codeJobs: CodeJob[] = [];
  private readonly pendingCodes = new Map<string, CodeJob>();
  private pendingCodeBytes = 0;
  private codesRunning = 0;
  private codesHeld = 0;
  private lastDelivery = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly detect: CodeDetector;

  constructor(private readonly deps: CodeReadingsDeps) {
    // The same detector either way: a worker that cannot answer (stopping, died) leaves the work to this thread.
    const elsewhere = deps.elsewhere;
    this.detect = elsewhere ? (head, sms) => elsewhere(head, sms).catch(() => detectCode(head, sms)) : detectCode;
  }

  /** Messages acknowledged whose code is still to be read. */
  get waiting(): number {
    return this.pendingCodes.size;
  }

  /** An acknowledged delivery's job joins the queue; past the memory bound it keeps only its records. */
  add(job: CodeJob): void {
    // A listener that comes later asked for what arrives from then on.
    job.announce = this.deps.wanted();
    if (this.pendingCodeBytes + job.bytes > MAX_PENDING_CODE_BYTES) {
      job.head = undefined;
      job.parts = undefined;
      job.bytes = 0;
    }
    for (const r of job.recs) this.pendingCodes.set(r.meta.id, job);
    this.pendingCodeBytes += job.bytes;
    this.codeJobs.push(job);
  }

  /** A batch of deliveries was committed: background reads wait until they pause (CODE_IDLE_MS). */
  delivered(): void {
    this.lastDelivery = performance.now();
    this.idleTimer ??= setTimeout(() => this.onIdleTimer(), CODE_IDLE_MS).unref();
  }

  /** Ends every hold and the idle timer (the store's close reads every code). */
  release(): void {
    this.codesHeld = 0;
    this.lastDelivery = -Infinity;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** Undefined when every one of `metas` has its code read; else starts their jobs and resolves once they are done. */
  of(metas: readonly MessageMeta[]): Promise<void> | undefined {
    if (this.pendingCodes.size === 0) return undefined;
    const jobs = new Set<Promise<void>>();
    for (const m of metas) {
      const job = this.pendingCodes.get(m.id);
      if (job) jobs.add(this.start(job));
    }
    return jobs.size > 0 ? Promise.all(jobs).then(() => undefined) : undefined;
  }

  /** Starts queued jobs, up to CODE_CONCURRENCY, when their codes are wanted now or deliveries have paused. */
  pump(): void {
    if (this.codesHeld > 0 || this.codeJobs.length === 0) return;
    if (!this.deps.wanted() && performance.now() - this.lastDelivery < CODE_IDLE_MS) {
      this.idleTimer ??= setTimeout(() => this.onIdleTimer(), CODE_IDLE_MS).unref();
      return;
    }
    while (this.codesRunning < CODE_CONCURRENCY && this.codeJobs.length > 0) {
      const job = this.codeJobs.shift()!;
      // One a read already started (`of`) is done or running.
      if (!job.done) void this.start(job);
    }
  }

  private onIdleTimer(): void {
    this.idleTimer = undefined;
    const quiet = performance.now() - this.lastDelivery;
    if (quiet >= CODE_IDLE_MS) this.pump();
    else this.idleTimer = setTimeout(() => this.onIdleTimer(), CODE_IDLE_MS - quiet).unref();
  }

  /** Test hook: the background reading of codes waits (a read that needs one still reads it) until the returned function is called. */
  hold(): () => void {
    this.codesHeld++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.codesHeld--;
      this.pump();
    };
  }

  private start(job: CodeJob): Promise<void> {
    if (job.done) return job.done;
    this.codesRunning++;
    job.done = this.deps.track(this.read(job)).finally(() => {
      this.codesRunning--;
      this.pump();
    });
    return job.done;
  }

  /**
   * Reads a delivery's code (as an email and as an SMS, for the kinds among its recipients),
   * keeps it in the index, and has the store journal the messages and announce them. A code is a convenience:
   * one that cannot be read leaves the message without one. Messages all removed meanwhile are not read.
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
    const live = job.recs.filter((r) => !r.dead);
    for (const r of job.recs) {
      const code = codes.get(isPhoneInbox(r.meta.inbox));
      if (code) r.meta.code = code;
      this.pendingCodes.delete(r.meta.id);
    }
    this.pendingCodeBytes -= job.bytes;
    job.head = undefined;
    job.parts = undefined;
    job.bytes = 0;
    this.deps.kept(live, job.announce);
  }

  /** Resolves once the codes of the messages acknowledged so far are read (not of those acknowledged meanwhile). */
  settle(): Promise<void> | undefined {
    if (this.pendingCodes.size === 0) return undefined;
    return Promise.allSettled([...new Set(this.pendingCodes.values())].map((j) => this.start(j))).then(() => undefined);
  }

  /** Resolves once every acknowledged message's code is read (the store's close: no delivery comes meanwhile). */
  async drain(): Promise<void> {
    while (this.pendingCodes.size > 0) await this.settle();
  }
}
