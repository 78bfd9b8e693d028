// The index journal: an append-only file in the data dir with one JSON line per stored
// or removed message, so a start with 100,000 messages does not have to open every file.
// It is a cache, not the truth: on start the store reconciles it with a readdir of each
// inbox (a file without a line gets its headers parsed, a line without a file is dropped),
// so a torn last line or a lost append costs a re-parse, never a message.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { MessageMeta, MessageSource } from './types';

/** File name of the journal inside the store dir; the leading dot keeps it apart from domain directories. */
export const JOURNAL_FILE = '.index-journal';
/** Journal format version written as the first line of a compacted journal. */
const JOURNAL_VERSION = 1;

const SOURCES: ReadonlySet<string> = new Set<MessageSource>(['smtp', 'inject', 'webhook']);

export interface JournalState {
  /** Live entries by id, in journal order. */
  entries: Map<string, MessageMeta>;
  /** Highest message counter the journal has seen, including removed messages. */
  maxCounter: number;
  /** Lines read, good or bad. */
  lines: number;
  /** Lines that could not be read (torn or damaged). */
  badLines: number;
}

export function addLine(m: MessageMeta): string {
  return JSON.stringify(['a', m.id, m.domain, m.inbox, m.time, m.size, m.source, m.from, m.subject]) + '\n';
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
  /** Lines in the journal file now (for the compaction trigger). */
  lineCount = 0;

  constructor(readonly dir: string) {
    this.file = path.join(dir, JOURNAL_FILE);
  }

  /** Reads the journal; a missing file is an empty journal. */
  async load(counterOf: (id: string) => number | undefined): Promise<JournalState> {
    const state: JournalState = { entries: new Map(), maxCounter: 0, lines: 0, badLines: 0 };
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return state;
      throw e;
    }
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end < 0) end = text.length;
      const line = text.slice(start, end);
      start = end + 1;
      if (line.length === 0) continue;
      state.lines++;
      if (!applyLine(state, line, counterOf)) state.badLines++;
    }
    this.lineCount = state.lines;
    return state;
  }

  async openForAppend(): Promise<void> {
    this.fh = await fs.open(this.file, 'a');
  }

  /** Appends lines with one write. Not fsynced: the files on disk are the truth (see above). */
  append(text: string, lines: number): Promise<void> {
    return this.enqueue(async () => {
      if (!this.fh) return;
      await this.fh.write(text);
      this.lineCount += lines;
    });
  }

  /** Rewrites the journal with only the live entries (atomically: tmp file, fsync, rename). */
  compact(live: Iterable<MessageMeta>, maxCounter: number): Promise<void> {
    return this.enqueue(async () => {
      const tmp = this.file + '.tmp';
      const parts: string[] = [JSON.stringify(['v', JOURNAL_VERSION]) + '\n', counterLine(maxCounter)];
      let n = 2;
      for (const m of live) {
        parts.push(addLine(m));
        n++;
      }
      const fh = await fs.open(tmp, 'w');
      try {
        await fh.writeFile(parts.join(''));
        await fh.datasync();
      } finally {
        await fh.close();
      }
      await this.fh?.close();
      this.fh = undefined;
      await fs.rename(tmp, this.file);
      this.fh = await fs.open(this.file, 'a');
      this.lineCount = n;
    });
  }

  close(): Promise<void> {
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

function applyLine(state: JournalState, line: string, counterOf: (id: string) => number | undefined): boolean {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return false;
  }
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
      state.entries.delete(v[1]);
      return true;
    case 'a': {
      const [, id, domain, inbox, time, size, source, from, subject] = v as unknown[];
      if (
        typeof id !== 'string' || typeof domain !== 'string' || typeof inbox !== 'string' || typeof time !== 'number' ||
        typeof size !== 'number' || typeof source !== 'string' || !SOURCES.has(source) || typeof from !== 'string' || typeof subject !== 'string'
      ) {
        return false;
      }
      const counter = counterOf(id);
      if (counter === undefined) return false;
      state.maxCounter = Math.max(state.maxCounter, counter);
      state.entries.set(id, { id, domain, inbox, time, size, source: source as MessageSource, from, subject });
      return true;
    }
    default:
      return false;
  }
}
