// The code-reading step of the Maildir store: a message's one-time code is read after its
// acknowledgement (acknowledging needs only the header fields, the log record and the index
// entry). Acknowledged deliveries wait here in order and are read a few at a time, on the
// server's worker threads when it gives a detector (workers/pool.ts detectCode); a read that
// returns one of their messages starts its job at once and waits for it (`of`). Once a job's
// codes are kept in its records, the store journals and announces its messages (`kept`), so
// every `message` event (push streams, wait=) carries its code. Deliveries wait for room while
// too many messages, or too many bytes of heads, wait for their code.
import type { MessageMeta, MessageParts, StoreLog } from '../types';
import { CODE_SCAN_MAX_BYTES, detectCode } from '../code';
import { type CodeDetector, indexedCodes } from '../incoming';
import { isPhoneInbox } from '../../../core/ids';
import type { IndexRecord } from './ordered';

/**
 * Codes read at once after their acknowledgements (each a MIME parse and a scan, a few hundred µs
 * of CPU): enough that the codes of a group commit go to a worker together (workers/pool.ts detectCode).
 */
const CODE_CONCURRENCY = 32;
/**
 * Deliveries wait while this many acknowledged messages still wait for their code, or their
 * heads hold this many bytes: the code is read within a bounded time of the acknowledgement
 * (a few hundred messages' worth of work), and a flood cannot pile up heads in memory.
 */
const MAX_PENDING_CODES = 256;
const MAX_PENDING_CODE_BYTES = 8 * 1024 * 1024;

/** Acknowledged messages (one body, one record per recipient) whose one-time code is still to be read. */
export interface CodeJob {
  recs: IndexRecord[];
  head: Buffer;
  parts: MessageParts | undefined;
  /** Set once the job started; resolves when its codes are kept, journaled and announced. */
  done?: Promise<void>;
}

/** A delivery's code job: its head is read no further than a code is looked for (CODE_SCAN_MAX_BYTES). */
export function codeJob(recs: IndexRecord[], head: Buffer, parts: MessageParts | undefined): CodeJob {
  return { recs, head: head.length > CODE_SCAN_MAX_BYTES ? head.subarray(0, CODE_SCAN_MAX_BYTES) : head, parts };
}

export class CodeReadings {
  private readonly codeJobs: CodeJob[] = [];
  private readonly pendingCodes = new Map<string, CodeJob>();
  private pendingCodeBytes = 0;
  private codesRunning = 0;
  private codesHeld = 0;
  private codeRoomWaiters: Array<() => void> = [];
  private readonly detect: CodeDetector;

  /**
   * `elsewhere` reads a code off this thread (the server's workers; default: code.ts detectCode
   * here); `track` keeps the store's close waiting for a running job; `kept` journals and
   * announces a job's messages still stored, once their codes are kept.
   */
  constructor(
    elsewhere: CodeDetector | undefined,
    private readonly log: StoreLog,
    private readonly track: (p: Promise<void>) => Promise<void>,
    private readonly kept: (live: readonly IndexRecord[]) => void,
  ) {
    // The same detector either way: a worker that cannot answer (stopping, died) leaves the work to this thread.
    this.detect = elsewhere ? (head, sms) => elsewhere(head, sms).catch(() => detectCode(head, sms)) : detectCode;
  }

  /** Messages acknowledged whose code is still to be read. */
  get waiting(): number {
    return this.pendingCodes.size;
  }

  /** How many deliveries a commit may take now, so the bound holds per message (at least one). */
  roomLeft(): number {
    return Math.max(1, MAX_PENDING_CODES - this.pendingCodes.size);
  }

  /** An acknowledged delivery's job joins the queue (`pump` starts it). */
  add(job: CodeJob): void {
    for (const r of job.recs) this.pendingCodes.set(r.meta.id, job);
    this.pendingCodeBytes += job.head.length;
    this.codeJobs.push(job);
  }

  /** Ends every hold (the store's close reads every code). */
  release(): void {
    this.codesHeld = 0;
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

  pump(): void {
    if (this.codesHeld > 0) return;
    while (this.codesRunning < CODE_CONCURRENCY && this.codeJobs.length > 0) void this.start(this.codeJobs.shift()!);
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
    job.done = this.track(this.read(job)).finally(() => {
      this.codesRunning--;
      this.pump();
    });
    return job.done;
  }

  /**
   * Reads a delivery's code (as an email and as an SMS, for the kinds among its recipients),
   * keeps it in the index, and has the store journal the messages and announce them. A code is a convenience:
   * one that cannot be read leaves the message without one.
   */
  private async read(job: CodeJob): Promise<void> {
    let codes: Map<boolean, string | undefined>;
    try {
      codes = await indexedCodes(job.recs.map((r) => r.meta), job.head, job.parts, this.detect);
    } catch (e) {
      this.log('warn', `store: reading the code of ${job.recs[0]?.meta.id} failed: ${(e as Error).message}`);
      codes = new Map();
    }
    const live = job.recs.filter((r) => !r.dead);
    for (const r of job.recs) {
      const code = codes.get(isPhoneInbox(r.meta.inbox));
      if (code) r.meta.code = code;
      this.pendingCodes.delete(r.meta.id);
    }
    this.pendingCodeBytes -= job.head.length;
    const at = this.codeJobs.indexOf(job);
    if (at >= 0) this.codeJobs.splice(at, 1);
    this.kept(live);
    if (this.pendingCodes.size < MAX_PENDING_CODES && this.pendingCodeBytes < MAX_PENDING_CODE_BYTES) {
      for (const wake of this.codeRoomWaiters.splice(0)) wake();
    }
  }

  /** Waits while too many acknowledged messages wait for their code (MAX_PENDING_CODES). */
  room(): Promise<void> | void {
    if (this.pendingCodes.size < MAX_PENDING_CODES && this.pendingCodeBytes < MAX_PENDING_CODE_BYTES) return;
    return new Promise((resolve) => this.codeRoomWaiters.push(resolve));
  }

  /** Resolves once every acknowledged message's code is read. */
  async drain(): Promise<void> {
    while (this.pendingCodes.size > 0) {
      const jobs = new Set(this.pendingCodes.values());
      await Promise.allSettled([...jobs].map((j) => this.start(j)));
    }
  }
}
