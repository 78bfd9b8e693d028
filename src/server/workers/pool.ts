// Runs the MIME work of the read views and the provider routes (workers/jobs.ts) on worker threads,
// so parsing an 18 MB message with 200k links, or composing a 20 MB provider message, never
// holds the event loop that answers /healthz, other requests and SMTP. Jobs queue for MIME_WORKERS threads, started on first use and
// stopped when idle. A worker that cannot start (or dies) fails its job with an error; the
// pool then starts a new one for the next job.
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { FileWrite } from '../store/maildir/fileWrites';
import { type MimeJob, type MimeResults, runMimeJob } from './jobs';
import type { Composed, ComposeSpool, OutgoingMail } from '../mime/outgoing';

/** Two threads: the machine has at least two cores, and one huge message never blocks every other reader. */
export const MIME_WORKERS = 2;
/** A worker idle this long is stopped: reading messages comes in bursts, and a thread holds ~10 MB. */
const IDLE_STOP_MS = 30_000;
/** workerData marker of a MIME worker (workerMain.ts serves jobs only when it sees it). */
const MIME_WORKER_ROLE = 'test-inbox-mime';

/** Counters for tests: jobs a worker thread answered, by op (every pool of this process). */
export const mimeJobsDone: Partial<Record<MimeJob['op'], number>> = {};

/** A queued job whose request ended before a worker took it. */
export class MimeJobDropped extends Error {
  constructor() {
    super('the request ended before its message was parsed');
    this.name = 'MimeJobDropped';
  }
}

interface Pending {
  job: MimeJob;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  busy?: Pending;
  idle?: NodeJS.Timeout;
}

/** File name of the worker's own bundle, which every build that bundles the server emits beside it. */
const MIME_WORKER_BUNDLE = 'mimeWorker.js';

/**
 * Where the worker's code is and how to start it. Bundled, the server runs `mimeWorker.js` from
 * its own folder, never blindly the bundle that holds the server: that one may be an extension
 * host's test suite, whose top level cannot run in a thread. Each build that bundles the server
 * writes that entry: beside cli.js a line that loads cli.js (esbuild.mjs), in the integration
 * build a bundle of workerMain.ts. From source (tests through tsx) it runs workerMain.ts.
 */
function workerEntry(): { file: string; execArgv?: string[] } {
  if (__filename.endsWith('.ts')) return { file: path.join(__dirname, 'workerMain.ts'), execArgv: ['--require', 'tsx/cjs'] };
  return { file: path.join(__dirname, MIME_WORKER_BUNDLE) };
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;

  constructor(private readonly size: number = MIME_WORKERS) {}

  /**
   * Runs `job` on a worker. With `signal`: a job still queued when it ends is dropped (rejects
   * MimeJobDropped), so a client that left costs no parse; a job already running finishes.
   */
  run<K extends MimeJob['op']>(job: Extract<MimeJob, { op: K }>, signal?: AbortSignal): Promise<MimeResults[K]> {
    if (this.closed) return Promise.reject(new Error('the MIME workers are stopped'));
    if (signal?.aborted) return Promise.reject(new MimeJobDropped());
    return new Promise<MimeResults[K]>((resolve, reject) => {
      const pending: Pending = { job, resolve: resolve as (v: unknown) => void, reject };
      if (signal) {
        const drop = (): void => {
          const i = this.queue.indexOf(pending);
          if (i >= 0) {
            this.queue.splice(i, 1);
            reject(new MimeJobDropped());
          }
        };
        signal.addEventListener('abort', drop, { once: true });
        const settle = (): void => signal.removeEventListener('abort', drop);
        pending.resolve = (v) => (settle(), (resolve as (v: unknown) => void)(v));
        pending.reject = (e) => (settle(), reject(e));
      }
      this.queue.push(pending);
      this.pump();
    });
  }

  /** The code of a message (store/code.ts detectCode), read on a worker; the codes of one turn of the event loop go together (batched). */
  readonly detectCode = batched((jobs: Array<{ raw: Uint8Array; sms: boolean }>) => this.run({ op: 'codes', jobs: jobs.map((j) => ({ raw: compact(j.raw), sms: j.sms })) }));

  /** A message file written (store/maildir/fileWrites.ts) on a worker; the writes of one turn of the event loop go together. */
  readonly writeFile = batched((ops: FileWrite[]) => this.run({ op: 'writeFiles', ops: ops.map((op) => ('raw' in op ? { ...op, raw: compact(op.raw) } : op)) }));

  /** A provider route's message composed on a worker (mime/outgoing.ts composeToSpool); each attachment's bytes alone go over. */
  composeMail(mail: OutgoingMail, domain: string, spool: ComposeSpool): Promise<Composed> {
    const attachments = mail.attachments?.map((a) => ({ ...a, content: compact(a.content) }));
    return this.run({ op: 'composeMail', mail: attachments ? { ...mail, attachments } : mail, domain, spool });
  }

  /** The To, Cc and Bcc addresses of a raw message, parsed on a worker (mime/outgoing.ts rawRecipients). */
  rawRecipients(raw: Uint8Array): Promise<string[]> {
    return this.run({ op: 'rawRecipients', raw: compact(raw) });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('the MIME workers are stopped'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const next = this.queue.shift()!;
      clearTimeout(slot.idle);
      slot.busy = next;
      // The raw bytes are copied to the worker (the caller keeps its buffer); results come back by structured clone.
      slot.worker.postMessage(next.job);
    }
  }

  private spawn(): Slot {
    const { file, execArgv } = workerEntry();
    const worker = new Worker(file, { workerData: { role: MIME_WORKER_ROLE }, ...(execArgv ? { execArgv } : {}) });
    const slot: Slot = { worker };
    worker.unref();
    worker.on('message', (m: { ok: true; value: unknown } | { ok: false; message: string }) => {
      const p = slot.busy;
      slot.busy = undefined;
      if (p) {
        if (m.ok) mimeJobsDone[p.job.op] = (mimeJobsDone[p.job.op] ?? 0) + 1;
        if (m.ok) p.resolve(m.value);
        else p.reject(new Error(m.message));
      }
      slot.idle = setTimeout(() => this.retire(slot), IDLE_STOP_MS);
      slot.idle.unref();
      this.pump();
    });
    const fail = (e: Error): void => {
      this.drop(slot);
      slot.busy?.reject(e);
      slot.busy = undefined;
      this.pump();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a MIME worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private drop(slot: Slot): void {
    clearTimeout(slot.idle);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
  }

  private retire(slot: Slot): void {
    if (slot.busy) return;
    this.drop(slot);
    void slot.worker.terminate();
  }
}

/**
 * Calls made in one turn of the event loop, run as one job: a message to a worker thread costs the
 * main thread a structured clone and a wake-up, more than a batch's share of one.
 */
function batched<I, O>(run: (items: I[]) => Promise<O[]>): (item: I) => Promise<O> {
  let batch: Array<{ item: I; resolve: (o: O) => void; reject: (e: Error) => void }> = [];
  const flush = (): void => {
    const taken = batch;
    batch = [];
    run(taken.map((b) => b.item)).then(
      (out) => taken.forEach((b, i) => b.resolve(out[i])),
      (e: Error) => taken.forEach((b) => b.reject(e)),
    );
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      if (batch.length === 0) setImmediate(flush);
      batch.push({ item, resolve, reject });
    });
}

/** The bytes alone: a view into a larger buffer would be cloned to the worker whole. */
function compact(raw: Uint8Array): Uint8Array {
  return raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw);
}

/** True in a thread started by WorkerPool. */
export function isMimeWorker(): boolean {
  return !isMainThread && (workerData as { role?: string } | null)?.role === MIME_WORKER_ROLE;
}

/** The worker's loop: one job at a time, each answered `{ok, value}` or `{ok: false, message}`. */
export function serveMimeJobs(): void {
  parentPort!.on('message', (job: MimeJob) => {
    runMimeJob(job).then(
      (value) => parentPort!.postMessage({ ok: true, value }),
      (e: unknown) => parentPort!.postMessage({ ok: false, message: e instanceof Error ? e.message : String(e) }),
    );
  });
}
