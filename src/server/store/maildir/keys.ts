// The message keys of the Maildir store (MessageKey in types.ts: a Twilio Message SID, its
// Account SID as scope, and the caller's record of the message, stored verbatim). A key exists
// only because a caller passed it to add(): no header, file or byte of the message makes one,
// so mail that arrives by SMTP can never carry one.
//
// `<data>/.message-keys` holds one JSON line per keyed message, `["k", key, scope, id, data]`.
// A line is appended (and under the strict rule fdatasynced) before the message's own
// write-ahead record or file, so every acknowledged keyed message has its line; a line whose message was never acknowledged (a
// crash, a failed commit), or that was removed since, names an id the index lacks and is
// dropped when the store opens (ids are never handed out twice: they carry the second and a
// counter that only grows). Removals write nothing: the file is rewritten without the lines
// of removed messages on open, and while running once they outnumber the live ones.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { StoreError } from '../errors';
import { fsyncDir } from './layout';
import type { MessageKey } from '../types';
import { retryBusy } from '../../../shared/portableFs';

const KEYS_FILE = '.message-keys';
/** Lines of removed messages tolerated in the file before it is rewritten while running (and at least as many as live ones). */
const REWRITE_MIN_STALE = 10_000;

interface KeyEntry extends MessageKey {
  /** The store's id of the keyed message. */
  id: string;
}

export class KeyLog {
  readonly file: string;
  readonly #byKey = new Map<string, KeyEntry>();
  /** Keys of one scope in the order added. */
  readonly #byScope = new Map<string, Set<string>>();
  readonly #byId = new Map<string, string>();
  /** Keys being added (their line written, their message not acknowledged yet). */
  readonly #pending = new Set<string>();
  #fh: fs.FileHandle | undefined;
  /** Appends and rewrites run one at a time, in call order. */
  #chain: Promise<unknown> = Promise.resolve();
  #stale = 0;

  constructor(dir: string) {
    this.file = path.join(dir, KEYS_FILE);
  }

  /** Reads the file, keeps the lines whose message `exists`, rewrites it when it dropped any. */
  async open(exists: (id: string) => boolean, log: (msg: string) => void): Promise<void> {
    let text = '';
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    let dropped = 0;
    let bad = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const entry = parseLine(line);
      if (!entry) {
        bad++; // a torn last line: its message was never acknowledged
        continue;
      }
      if (!exists(entry.id) || this.#byKey.has(entry.key)) {
        dropped++;
        continue;
      }
      this.#insert(entry);
    }
    if (bad > 0) log(`store: ${bad} unreadable line(s) in ${this.file} skipped (a write cut off before its message was acknowledged)`);
    if (dropped > 0 || bad > 0 || text === '') await this.#rewrite();
    else this.#fh = await fs.open(this.file, 'a', PRIVATE_FILE_MODE);
  }

  async close(): Promise<void> {
    await this.#chain.catch(() => undefined);
    await this.#fh?.close();
    this.#fh = undefined;
  }

  find(key: string): KeyEntry | undefined {
    return this.#byKey.get(key);
  }

  /** The entries of a scope, in the order added. */
  scope(scope: string): KeyEntry[] {
    const out: KeyEntry[] = [];
    for (const key of this.#byScope.get(scope) ?? []) {
      const e = this.#byKey.get(key);
      if (e) out.push(e);
    }
    return out;
  }

  /** Reserves the key (StoreError duplicate_key when held or being added); `release` when the add fails. */
  reserve(key: string): void {
    if (this.#byKey.has(key) || this.#pending.has(key)) throw new StoreError('duplicate_key', `a message with key ${key} is stored already`);
    this.#pending.add(key);
  }

  release(key: string): void {
    this.#pending.delete(key);
  }

  /** Writes the entry's line (before its message is committed); `sync`: durably, for the strict rule (else the store's background flush syncs the file). */
  write(entry: KeyEntry, sync: boolean): Promise<void> {
    return this.#run(async () => {
      if (!this.#fh) throw new StoreError('not_open', 'the message keys are not open');
      await this.#fh.appendFile(lineOf(entry));
      if (sync) await this.#fh.datasync();
    });
  }

  /** The entry's message is acknowledged: it is found from now on. */
  commit(entry: KeyEntry): void {
    this.#pending.delete(entry.key);
    this.#insert(entry);
  }

  /** The messages were removed: their keys go (the lines stay until the next rewrite). */
  forget(ids: Iterable<string>): void {
    for (const id of ids) {
      const key = this.#byId.get(id);
      if (key === undefined) continue;
      const e = this.#byKey.get(key);
      this.#byId.delete(id);
      this.#byKey.delete(key);
      if (e) this.#byScope.get(e.scope)?.delete(key);
      this.#stale++;
    }
    if (this.#stale > REWRITE_MIN_STALE && this.#stale > this.#byKey.size) void this.#run(() => this.#rewrite()).catch(() => undefined);
  }

  #insert(e: KeyEntry): void {
    this.#byKey.set(e.key, e);
    this.#byId.set(e.id, e.key);
    let keys = this.#byScope.get(e.scope);
    if (!keys) this.#byScope.set(e.scope, (keys = new Set()));
    keys.add(e.key);
  }

  #run<T>(work: () => Promise<T>): Promise<T> {
    const p = this.#chain.then(work, work);
    this.#chain = p.catch(() => undefined);
    return p;
  }

  /** The live entries into a new file, synced, renamed over the old one. */
  async #rewrite(): Promise<void> {
    const tmp = `${this.file}.tmp`;
    let text = '';
    for (const e of this.#byKey.values()) text += lineOf(e);
    const fh = await fs.open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(text);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await retryBusy(() => fs.rename(tmp, this.file));
    await fsyncDir(path.dirname(this.file));
    await this.#fh?.close();
    this.#fh = await fs.open(this.file, 'a', PRIVATE_FILE_MODE);
    this.#stale = 0;
  }
}

function lineOf(e: KeyEntry): string {
  return JSON.stringify(['k', e.key, e.scope, e.id, e.data]) + '\n';
}

function parseLine(line: string): KeyEntry | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    if (!Array.isArray(v) || v[0] !== 'k' || v.length !== 5 || !v.slice(1).every((x) => typeof x === 'string')) return undefined;
    const [, key, scope, id, data] = v as string[];
    return { key, scope, id, data };
  } catch {
    return undefined;
  }
}
