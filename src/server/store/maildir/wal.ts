// The write-ahead log that makes a delivery durable with one fsync per batch instead of
// one per message. A batch of messages is written to the log and fdatasynced once, and is then
// acknowledged: the log alone holds it until the materialiser writes its .eml files. They are
// flushed later, all at once, by a checkpoint, after which the log generation is deleted. After a crash, open() replays the
// surviving generations: a message whose file is missing or differs is written again.
//
// Record format: a JSON header line, then for a message exactly `length` raw bytes and '\n'.
//   ["m", id, domain, inbox, time, source, length]\n<raw>\n     a stored message
//   ["l", id, domain, inbox, time, source, firstId]\n             another recipient's copy of
//                                                                 message firstId (same batch)
//   ["x", id]\n                                                    a removed message

import { promises as fs, writeSync, writevSync } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import type { MessageSource } from '../types';
import type { SyncFd } from './layout';

/** Log files are `<dir>/.wal-<generation>`; the dot keeps them apart from domain directories. */
export const WAL_PREFIX = '.wal-';

export interface WalMessage {
  id: string;
  domain: string;
  inbox: string;
  time: number;
  source: MessageSource;
  raw: Buffer;
}

export function messageRecord(m: Omit<WalMessage, 'raw'>, raw: Buffer): Buffer[] {
  return [Buffer.from(JSON.stringify(['m', m.id, m.domain, m.inbox, m.time, m.source, raw.length]) + '\n'), raw, Buffer.from('\n')];
}

/** A further recipient of the message logged as `firstId` in the same batch: its bytes are not repeated. */
export function linkRecord(m: Omit<WalMessage, 'raw'>, firstId: string): Buffer {
  return Buffer.from(JSON.stringify(['l', m.id, m.domain, m.inbox, m.time, m.source, firstId]) + '\n');
}

function removalRecord(id: string): Buffer {
  return Buffer.from(JSON.stringify(['x', id]) + '\n');
}

interface WalRecovery {
  /** Messages the surviving generations hold, removals applied, in log order. */
  messages: Map<string, WalMessage>;
  /** Files of those generations (deleted once their messages are flushed). */
  files: string[];
  /** Highest generation found (0 when none). */
  lastGeneration: number;
  /** Generations that ended in a torn record (a crash mid-write of an unacknowledged batch). */
  tornFiles: string[];
}

export class WriteAheadLog {
  private fh: fs.FileHandle | undefined;
  private generation = 0;
  private chain: Promise<unknown> = Promise.resolve();
  /** Bytes written to the current generation. */
  bytes = 0;
  /**
   * Whether a record was handed in since the last rotation was asked for: what a checkpoint must
   * go by to rotate. `bytes` lags behind the queue (a rotation asked for resets it only when it
   * runs), so a second checkpoint in between rotated an empty generation and kept its file.
   */
  hasRecordsToRotate = false;

  constructor(
    readonly dir: string,
    /** fdatasync of the log's descriptor; a test seam may hold it. Default: the file handle's datasync. */
    private readonly sync?: SyncFd,
  ) {}

  fileOf(generation: number): string {
    return path.join(this.dir, `${WAL_PREFIX}${generation}`);
  }

  async recover(): Promise<WalRecovery> {
    const gens: number[] = [];
    for (const name of await fs.readdir(this.dir)) {
      if (name.startsWith(WAL_PREFIX) && /^\d+$/.test(name.slice(WAL_PREFIX.length))) gens.push(Number(name.slice(WAL_PREFIX.length)));
    }
    gens.sort((a, b) => a - b);
    const out: WalRecovery = { messages: new Map(), files: [], lastGeneration: gens[gens.length - 1] ?? 0, tornFiles: [] };
    const bodies = new Map<string, Buffer>();
    for (const g of gens) {
      const file = this.fileOf(g);
      out.files.push(file);
      if (!readRecords(await fs.readFile(file), out.messages, bodies)) out.tornFiles.push(file);
    }
    return out;
  }

  /** Starts writing generation `generation`. */
  async start(generation: number): Promise<void> {
    this.generation = generation;
    this.fh = await fs.open(this.fileOf(generation), 'a', PRIVATE_FILE_MODE);
    this.bytes = 0;
  }

  /** Appends a batch and flushes it to disk; resolves once it is durable. */
  commit(parts: Buffer[]): Promise<void> {
    this.hasRecordsToRotate = true;
    return this.enqueue(async () => {
      const fh = this.requireOpen();
      const before = this.bytes;
      try {
        // Written synchronously (a page-cache copy of a few kB): the batch then waits for one
        // thread-pool round trip, the fdatasync, instead of two.
        const total = parts.reduce((n, p) => n + p.length, 0);
        writeAllSync(fh.fd, parts, total);
        this.bytes += total;
        await this.datasync(fh);
      } catch (e) {
        // Cut a partial batch off, so the records appended after it stay readable on replay.
        await fh.truncate(before).catch(() => undefined);
        this.bytes = before;
        throw e;
      }
    });
  }

  /** Appends removal records; `sync` flushes them (a delete that was answered must not come back on replay). */
  remove(ids: string[], sync: boolean): Promise<void> {
    this.hasRecordsToRotate = true;
    return this.enqueue(async () => {
      const fh = this.requireOpen();
      const buf = Buffer.concat(ids.map(removalRecord));
      const before = this.bytes;
      try {
        writeAllSync(fh.fd, [buf], buf.length);
        this.bytes += buf.length;
        if (sync) await this.datasync(fh);
      } catch (e) {
        await fh.truncate(before).catch(() => undefined);
        this.bytes = before;
        throw e;
      }
    });
  }

  /** Switches to the next generation; resolves the file of the previous one. */
  rotate(): Promise<string> {
    this.hasRecordsToRotate = false;
    return this.enqueue(async () => {
      const old = this.fileOf(this.generation);
      await this.fh?.close();
      await this.start(this.generation + 1);
      return old;
    });
  }

  close(): Promise<string> {
    return this.enqueue(async () => {
      await this.fh?.close();
      this.fh = undefined;
      return this.fileOf(this.generation);
    });
  }

  private datasync(fh: fs.FileHandle): Promise<void> {
    const sync = this.sync;
    if (!sync) return fh.datasync();
    return new Promise((resolve, reject) => sync(fh.fd, (e) => (e ? reject(e) : resolve())));
  }

  private requireOpen(): fs.FileHandle {
    if (!this.fh) throw new Error('write-ahead log is not open');
    return this.fh;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task, task);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/** writev until every byte is written (a regular file takes it in one call unless the disk is full). */
function writeAllSync(fd: number, parts: Buffer[], total: number): void {
  let written = writevSync(fd, parts);
  if (written === total) return;
  const all = Buffer.concat(parts, total);
  while (written < total) written += writeSync(fd, all, written, total - written);
}

/**
 * Applies the records of one generation; false when it ends in a torn or damaged record.
 * `bodies` keeps every logged body by id, removed or not, for the link records that name it.
 */
function readRecords(buf: Buffer, into: Map<string, WalMessage>, bodies: Map<string, Buffer>): boolean {
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) return false;
    let header: unknown;
    try {
      header = JSON.parse(buf.subarray(pos, nl).toString('utf8'));
    } catch {
      return false;
    }
    if (!Array.isArray(header)) return false;
    if (header[0] === 'x' && typeof header[1] === 'string') {
      into.delete(header[1]);
      pos = nl + 1;
      continue;
    }
    const [kind, id, domain, inbox, time, source, length] = header as unknown[];
    if ((kind !== 'm' && kind !== 'l') || typeof id !== 'string' || typeof domain !== 'string' || typeof inbox !== 'string' || typeof time !== 'number' || (source !== 'smtp' && source !== 'inject' && source !== 'webhook')) {
      return false;
    }
    if (kind === 'l') {
      const raw = typeof length === 'string' ? bodies.get(length) : undefined;
      if (!raw) return false;
      into.set(id, { id, domain, inbox, time, source, raw });
      pos = nl + 1;
      continue;
    }
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) return false;
    const end = nl + 1 + length;
    if (end + 1 > buf.length || buf[end] !== 0x0a) return false;
    const raw = Buffer.from(buf.subarray(nl + 1, end));
    bodies.set(id, raw);
    into.set(id, { id, domain, inbox, time, source, raw });
    pos = end + 1;
  }
  return true;
}
