// The index journal: an append-only file in the data dir with one JSON line per stored
// or removed message, so a start with 100,000 messages does not have to open every file.
// It is a cache, not the truth: on start the store reconciles it with a readdir of each
// inbox (a file without a line gets its headers parsed, a line without a file is dropped),
// so a torn last line or a lost append costs a re-parse, never a message.

import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import type { IndexRecord } from './ordered';
import type { MessageMeta, MessageSource } from '../types';
import { retryBusy } from '../../../shared/portableFs';

/** File name of the journal inside the store dir; the leading dot keeps it apart from domain directories. */
export const JOURNAL_FILE = '.index-journal';
/** Journal bytes read at once on open: large enough for few reads, small enough to keep the peak memory low. */
const JOURNAL_READ_CHUNK_BYTES = 1024 * 1024;
/** Appended lines are written at most this often (one write for every line meanwhile): a write per delivery costs a thread-pool round trip each, and a crash in between costs only a re-parse of the files it missed. */
export const JOURNAL_FLUSH_MS = 200;
/** ...or as soon as this much text is waiting. */
const JOURNAL_FLUSH_BYTES = 1024 * 1024;
/** Distinct strings (domains, inboxes, senders) shared while loading, at most. */
const MAX_INTERNED = 100_000;
/** Journal format version written as the first line of a compacted journal. */
const JOURNAL_VERSION = 1;

const SOURCES: ReadonlySet<string> = new Set<MessageSource>(['smtp', 'inject', 'webhook']);

interface JournalState {
  /** Live entries by id, in journal order (about receipt order). */
  entries: Map<string, IndexRecord>;
  /** Highest message counter the journal has seen, including removed messages. */
  maxCounter: number;
  /** Lines read, good or bad. */
  lines: number;
  /** Lines that could not be read (torn or damaged). */
  badLines: number;
  /** Bytes read: the journal's length when it was read. */
  bytes: number;
  /** Removals of ids the lines read did not add (read from an offset: removals of the packed index's messages). */
  removed: string[];
}

export function addLine(m: MessageMeta): string {
  // The code is a trailing optional field: lines written before it existed still read.
  return JSON.stringify(m.code ? ['a', m.id, m.domain, m.inbox, m.time, m.size, m.source, m.from, m.subject, m.code] : ['a', m.id, m.domain, m.inbox, m.time, m.size, m.source, m.from, m.subject]) + '\n';
}

export function deleteLine(id: string): string {
  return JSON.stringify(['d', id]) + '\n';
}

function counterLine(maxCounter: number): string {
  return JSON.stringify(['c', maxCounter]) + '\n';
}

export class Journal {
  readonly file: string;
  private fh: fs.FileHandle | undefined;
  /** Appends and compactions run one at a time, in call order. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Lines in the journal file now, and those waiting to be written (for the compaction trigger). */
  lineCount = 0;
  /** Lines appended since the last write. */
  private waiting: string[] = [];
  private waitingBytes = 0;
  private flushTimer: NodeJS.Timeout | undefined;

  /** `onError` hears about a write that failed (the journal is a cache: the store goes on). */
  constructor(
    readonly dir: string,
    private readonly onError: (e: Error) => void = () => undefined,
  ) {
    this.file = path.join(dir, JOURNAL_FILE);
  }

  /**
   * Reads the journal; a missing file is an empty journal. Read in chunks, so memory stays flat
   * on a large store. From `offset` (the end of what the packed index covers, packedIndex.ts),
   * with the lines before it counted as `linesBefore`, when given.
   */
  async load(offset = 0, linesBefore = 0): Promise<JournalState> {
    const state: JournalState = { entries: new Map(), maxCounter: 0, lines: 0, badLines: 0, bytes: offset, removed: [] };
    const tail = offset > 0;
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(this.file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return state;
      throw e;
    }
    const strings = new Map<string, string>();
    const intern = (s: string): string => {
      const known = strings.get(s);
      if (known !== undefined) return known;
      // Bounded: senders repeat (one copy each saves ~40 bytes a message), but a journal of
      // unique senders must not grow a second copy of them all here.
      if (strings.size < MAX_INTERNED) strings.set(s, s);
      return s;
    };
    const decoder = new StringDecoder('utf8');
    const buf = Buffer.allocUnsafe(JOURNAL_READ_CHUNK_BYTES);
    let rest = '';
    try {
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, state.bytes);
        if (bytesRead === 0) break;
        state.bytes += bytesRead;
        const text = rest + decoder.write(buf.subarray(0, bytesRead));
        const cut = text.lastIndexOf('\n');
        if (cut < 0) {
          rest = text;
          continue;
        }
        applyLines(state, text.slice(0, cut), intern, tail);
        rest = text.slice(cut + 1);
      }
    } finally {
      await fh.close();
    }
    rest += decoder.end();
    if (rest.length > 0) applyLines(state, rest, intern, tail);
    this.lineCount = linesBefore + state.lines;
    return state;
  }

  async openForAppend(): Promise<void> {
    this.fh = await fs.open(this.file, 'a', PRIVATE_FILE_MODE);
  }

  /** Queues lines for the next write (within JOURNAL_FLUSH_MS). Never fsynced: the files on disk are the truth (see above). */
  append(text: string, lines: number): void {
    this.waiting.push(text);
    this.waitingBytes += text.length;
    this.lineCount += lines;
    if (this.waitingBytes >= JOURNAL_FLUSH_BYTES) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), JOURNAL_FLUSH_MS).unref();
  }

  /** Writes the queued lines now; resolves once they are written (or the failure was reported). */
  flush(): Promise<void> {
    const text = this.takeWaiting();
    if (text === '') return this.chain.then(() => undefined);
    return this.enqueue(async () => {
      if (this.fh) await this.fh.write(text);
    }).catch((e: unknown) => this.onError(e as Error));
  }

  /** Rewrites the journal with only the live entries (atomically: tmp file, fsync, rename). */
  compact(live: Iterable<MessageMeta>, maxCounter: number): Promise<void> {
    return this.enqueue(async () => {
      // The snapshot below is taken now, so it covers every line still waiting.
      this.takeWaiting();
      const countedBefore = this.lineCount;
      const tmp = this.file + '.tmp';
      // A new generation id: a packed index of the journal before (packedIndex.ts) cannot mistake this one for it.
      const parts: string[] = [JSON.stringify(['v', JOURNAL_VERSION, randomBytes(8).toString('hex')]) + '\n', counterLine(maxCounter)];
      let n = 2;
      for (const m of live) {
        parts.push(addLine(m));
        n++;
      }
      const fh = await fs.open(tmp, 'w', PRIVATE_FILE_MODE);
      try {
        await fh.writeFile(parts.join(''));
        await fh.datasync();
      } finally {
        await fh.close();
      }
      await this.fh?.close();
      this.fh = undefined;
      await retryBusy(() => fs.rename(tmp, this.file));
      this.fh = await fs.open(this.file, 'a', PRIVATE_FILE_MODE);
      // ...plus the lines appended while it was written, which are still to come.
      this.lineCount = n + (this.lineCount - countedBefore);
    });
  }

  /** The queued lines as one text ('' when none), no longer queued; cancels the pending write. */
  private takeWaiting(): string {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const text = this.waiting.join('');
    this.waiting = [];
    this.waitingBytes = 0;
    return text;
  }

  async close(): Promise<void> {
    await this.flush();
    return this.enqueue(async () => {
      await this.fh?.close();
      this.fh = undefined;
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task, task);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

/** Applies complete lines (no trailing newline). Every line is JSON without raw newlines, so the block parses as one array; a torn or damaged line makes it fall back to line by line. */
function applyLines(state: JournalState, block: string, intern: (s: string) => string, tail: boolean): void {
  let values: unknown[] | undefined;
  try {
    values = JSON.parse(`[${block.replace(/\n+/g, ',').replace(/^,|,$/g, '')}]`) as unknown[];
  } catch {
    values = undefined;
  }
  if (values) {
    state.lines += values.length;
    for (const v of values) if (!applyValue(state, v, intern, tail)) state.badLines++;
    return;
  }
  for (const line of block.split('\n')) {
    if (line.length === 0) continue;
    state.lines++;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      state.badLines++;
      continue;
    }
    if (!applyValue(state, v, intern, tail)) state.badLines++;
  }
}

/** `<inbox>-<seconds>-<counter>` split without validation (the store validated it when writing; files are matched by name on open). */
function idNumbers(id: string): { seconds: number; counter: number } | undefined {
  const b = id.lastIndexOf('-');
  const a = id.lastIndexOf('-', b - 1);
  if (a <= 0) return undefined;
  const seconds = Number(id.slice(a + 1, b));
  const counter = Number(id.slice(b + 1));
  return Number.isSafeInteger(seconds) && Number.isSafeInteger(counter) && seconds >= 0 && counter >= 0 ? { seconds, counter } : undefined;
}

function applyValue(state: JournalState, v: unknown, intern: (s: string) => string, tail: boolean): boolean {
  if (!Array.isArray(v) || typeof v[0] !== 'string') return false;
  switch (v[0]) {
    case 'v':
      return true;
    case 'c':
      if (typeof v[1] !== 'number') return false;
      state.maxCounter = Math.max(state.maxCounter, v[1]);
      return true;
    case 'd':
      if (typeof v[1] !== 'string') return false;
      if (!state.entries.delete(v[1]) && tail) state.removed.push(v[1]);
      return true;
    case 'a': {
      const [, id, domain, inbox, time, size, source, from, subject, code] = v as unknown[];
      if (
        typeof id !== 'string' || typeof domain !== 'string' || typeof inbox !== 'string' || typeof time !== 'number' ||
        typeof size !== 'number' || typeof source !== 'string' || !SOURCES.has(source) || typeof from !== 'string' || typeof subject !== 'string' ||
        (code !== undefined && (typeof code !== 'string' || code === ''))
      ) {
        return false;
      }
      const n = idNumbers(id);
      if (!n) return false;
      state.maxCounter = Math.max(state.maxCounter, n.counter);
      const meta: MessageMeta = { id, domain: intern(domain), inbox: intern(inbox), time, size, source: intern(source) as MessageSource, from: intern(from), subject, ...(typeof code === 'string' ? { code } : {}) };
      state.entries.set(id, { meta, seconds: n.seconds, counter: n.counter, dead: false });
      return true;
    }
    default:
      return false;
  }
}
