// Receiving one message body without holding it in memory. The first bytes
// stay in memory while the shared ByteBudget has room and the message is small; past
// SPOOL_THRESHOLD_BYTES, or when the budget is taken, the body goes to a file of its own in
// the spool folder (mode 0600, removed once the message is stored). A spooled body is never
// read back whole: the store links the spool file into place (store/types.ts FileBody) and
// reads only its head, holding budget for that meanwhile, so the bytes in memory across all
// connections stay within the budget.
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type Readable, Writable } from 'node:stream';
import type { ByteBudget, Release } from './budget';
import { OwnFieldFilter } from './ownFields';
import { isNoSpace } from './store/errors';
import { StoreError } from './store/errors';
import type { FileBody, MessageBody } from './store/types';

/** Why a sink's lifetime ended (the budget's holders only look at `aborted`). */
const SINK_ENDED = new Error('the message sink is done');

/** A spool write that failed: a full disk is the store's FULL (452 4.3.1 / 507), like every other write of mail. */
function spoolFailure(e: unknown): Error {
  if (isNoSpace(e) && !StoreError.is(e)) return new StoreError('full', 'the disk of the spool folder is full; the message was not stored (delete messages or free space, then try again)', { cause: e });
  return e as Error;
}

/** Bodies up to 256 KB stay in memory (the spool costs a file create and a read); larger ones go to disk. */
export const SPOOL_THRESHOLD_BYTES = 256 * 1024;
/** Owner only, like every file of the data folder: spooled mail is mail. */
const SPOOL_FILE_MODE = 0o600;
const SPOOL_DIR_MODE = 0o700;

/** A received body: read it (holding budget for its size) to store it, then dispose of it. */
interface ReceivedBody {
  readonly size: number;
  /** True when the body went to a spool file. */
  readonly spooled: boolean;
  /**
   * What the store takes: the bytes when they are in memory, else the spool file with its first
   * `headBytes` (the budget for those stays held until dispose()). The file stays until dispose().
   */
  body(headBytes: number): Promise<MessageBody>;
  /** Releases the budget and removes the spool file; safe to call more than once. */
  dispose(): Promise<void>;
}

interface SpoolOptions {
  budget: ByteBudget;
  /** Folder of the spool files; created on first use. */
  dir: string;
  thresholdBytes?: number;
  /** Bytes past this are counted but not kept (the caller refuses the message). */
  maxBytes?: number;
  /**
   * The server's own `X-Test-Inbox-*` header fields (CRLF-ended lines), written before the
   * message. Those of the message itself, which a sender wrote, are dropped (ownFields.ts).
   */
  ownFields?: string;
}

/**
 * A Writable that keeps a body in memory or spools it to disk; `received()` once it finished.
 * Every message a sender wrote is stored through one: the `X-Test-Inbox-*` fields of its header
 * block are dropped on the way (ownFields.ts), and the server's own written first.
 */
export class SpoolingSink extends Writable {
  private chunks: Buffer[] = [];
  private held: Release[] = [];
  private memBytes = 0;
  private file: fs.FileHandle | undefined;
  private filePath: string | undefined;
  private total = 0;
  private readonly threshold: number;
  /** Ends at dispose (or destroy): every grant of this body goes back then, and a wait for one ends. */
  private readonly life = new AbortController();
  private readonly own = new OwnFieldFilter();
  /** The server's own fields, until they are written ahead of the first bytes. */
  private ownFields: Buffer | undefined;

  constructor(private readonly o: SpoolOptions) {
    // Not destroyed on finish: the body is read after that, and dispose() cleans up.
    super({ autoDestroy: false });
    this.threshold = o.thresholdBytes ?? SPOOL_THRESHOLD_BYTES;
    this.ownFields = o.ownFields ? Buffer.from(o.ownFields, 'utf8') : undefined;
  }

  /** Bytes received so far (including any past maxBytes). */
  get size(): number {
    return this.total;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    this.put(this.withOwn(this.own.push(chunk)), done);
  }

  override _final(done: (e?: Error | null) => void): void {
    const rest = this.withOwn(this.own.end());
    if (rest.length === 0) return this.closeFile(done);
    this.put(rest, (e) => (e ? done(e) : this.closeFile(done)));
  }

  /** `data`, after the server's own fields when they are not written yet. */
  private withOwn(data: Buffer): Buffer {
    const own = this.ownFields;
    if (own === undefined) return data;
    this.ownFields = undefined;
    return data.length === 0 ? own : Buffer.concat([own, data]);
  }

  private put(chunk: Buffer, done: (e?: Error | null) => void): void {
    if (chunk.length === 0) return done();
    const over = this.o.maxBytes !== undefined && this.total + chunk.length > this.o.maxBytes;
    this.total += chunk.length;
    if (over) return done();
    if (!this.file) {
      const release = this.memBytes + chunk.length <= this.threshold ? this.o.budget.tryTake(chunk.length, this.life.signal) : undefined;
      if (release) {
        this.held.push(release);
        this.chunks.push(chunk);
        this.memBytes += chunk.length;
        return done();
      }
      this.spill(chunk).then(() => done(), (e: unknown) => done(spoolFailure(e)));
      return;
    }
    this.file.write(chunk).then(() => done(), (e: unknown) => done(spoolFailure(e)));
  }

  private closeFile(done: (e?: Error | null) => void): void {
    if (!this.file) return done();
    this.file.close().then(
      () => {
        this.file = undefined;
        done();
      },
      (e: unknown) => done(spoolFailure(e)),
    );
  }

  override _destroy(err: Error | null, done: (e?: Error | null) => void): void {
    this.cleanup().then(() => done(err), () => done(err));
  }

  /** Moves what is in memory to a new spool file, then appends `chunk`. */
  private async spill(chunk: Buffer): Promise<void> {
    await fs.mkdir(this.o.dir, { recursive: true, mode: SPOOL_DIR_MODE });
    this.filePath = path.join(this.o.dir, `${randomUUID()}.eml`);
    this.file = await fs.open(this.filePath, 'wx', SPOOL_FILE_MODE);
    if (this.chunks.length > 0) await this.file.writev(this.chunks);
    this.chunks = [];
    this.memBytes = 0;
    this.releaseHeld();
    await this.file.write(chunk);
  }

  private releaseHeld(): void {
    for (const r of this.held.splice(0)) r();
  }

  private async cleanup(): Promise<void> {
    this.chunks = [];
    this.memBytes = 0;
    this.releaseHeld();
    // A reason of its own: abort() without one makes a DOMException, stack and all, per message.
    this.life.abort(SINK_ENDED);
    const fh = this.file;
    this.file = undefined;
    await fh?.close().catch(() => undefined);
    if (this.filePath) await fs.rm(this.filePath, { force: true });
    this.filePath = undefined;
  }

  /** The spool file, handed over to the caller, who removes it: dispose() then leaves it. Call once the sink has finished. */
  takeFile(): string {
    const file = this.filePath;
    if (file === undefined) throw new Error('the body is not spooled');
    this.filePath = undefined;
    return file;
  }

  /** The body, once the sink finished (call after 'finish'). */
  received(): ReceivedBody {
    const spooled = this.filePath !== undefined;
    const size = Math.min(this.total, this.o.maxBytes ?? this.total);
    return {
      size,
      spooled,
      body: async (headBytes: number) => {
        if (!spooled) {
          const chunks = this.chunks;
          // The concatenated copy replaces the chunks: one copy at a time, still within the budget held for them.
          this.chunks = [];
          return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.memBytes);
        }
        return spooledBody(this.filePath!, size, headBytes, this.o.budget, this.life.signal, this.held);
      },
      dispose: async () => {
        await this.cleanup();
      },
    };
  }
}

/**
 * What the store takes of a spooled body: the file and its first `headBytes`, read under the
 * budget (the grant is pushed to `held`, and goes back when `lifetime` ends). Rejects
 * (BudgetError) when `lifetime` ends, or the server stops, while it waits for the grant.
 */
export async function spooledBody(file: string, size: number, headBytes: number, budget: ByteBudget, lifetime: AbortSignal, held: Release[]): Promise<FileBody> {
  const headSize = Math.min(headBytes, size);
  held.push(await budget.take(headSize, lifetime));
  const fh = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(headSize);
    let got = 0;
    while (got < headSize) {
      const { bytesRead } = await fh.read(head, got, headSize - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { file, size, head: head.subarray(0, got) };
  } finally {
    await fh.close();
  }
}

/**
 * Pipes a message's bytes (SMTP's data stream, a provider route's MIME) into its sink: resolves
 * once the sink has finished, rejects with the first error of either, destroying the other as
 * `stream/promises` pipeline does. Not that pipeline: it makes an AbortController per call and aborts it at the end, a DOMException with
 * its stack for every message (about 3 % of the server's CPU per message).
 */
export function drainInto(stream: Readable, sink: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: Error): void => {
      if (settled) return;
      settled = true;
      stream.unpipe(sink);
      stream.destroy(e);
      sink.destroy(e);
      reject(e);
    };
    // Kept, not once: a destroyed stream may still say more, and an error without a listener would end the process.
    stream.on('error', fail);
    sink.on('error', fail);
    stream.once('close', () => {
      if (!stream.readableEnded) fail(Object.assign(new Error('the message stream closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
    sink.once('finish', () => {
      if (settled) return;
      settled = true;
      resolve();
    });
    stream.pipe(sink);
  });
}
