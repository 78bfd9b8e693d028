// The packed index: the whole in-memory index written at a clean close as one binary file,
// so a start with a million messages reads one file into typed arrays instead of parsing the
// JSON index journal (journal.ts) into a million objects. Records are fixed-width columns in
// receipt order (seconds, counter of the id), domains and inboxes are interned in a small
// string table, and the id, sender, subject and code of each record sit in one byte blob;
// a record becomes a MessageMeta only when it is read (a listing, a fetch).
//
// It is a cache of the journal, never the truth: the file names the journal it describes (its
// length then and a hash of its first and last bytes before that length), and a start uses it
// only when the journal still starts with exactly those bytes. The journal is append-only
// between compactions, so what came after (a later run that crashed) is replayed from that
// offset; a compacted, truncated or replaced journal, or a torn, foreign or damaged packed file
// (wrong magic or version, wrong length, checksum mismatch, out-of-range fields, records out
// of order), makes the start read the whole journal as before. The index snapshot
// (snapshot.ts) then decides per inbox, as before, whether its files must be listed.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { fsyncDir } from './layout';
import type { SearchableMeta } from '../../../core/search';
import type { MessageMeta, MessageSource } from '../types';

export const PACKED_INDEX_FILE = '.index-packed';
const MAGIC = 'TINBXIDX';
const VERSION = 1;
const HEADER_BYTES = 128;
/** Bytes hashed at each end of the journal's described prefix to recognise it: its start (version and generation line) and the lines just before the offset. */
const JOURNAL_PROBE_BYTES = 64 * 1024;
/** The blob grows by doubling from this; a million 4 KB test messages need ~70 MB. */
const INITIAL_BLOB_BYTES = 1024 * 1024;
/** Columns of 8 bytes per record: seconds, counter, time, size, blob offset. */
const F64_COLUMNS = 5;
/** Columns of 4 bytes per record: domain, inbox (string table), id, from, subject, code lengths. */
const U32_COLUMNS = 6;

const SOURCES: readonly MessageSource[] = ['smtp', 'inject', 'webhook'];

/** What a packed index says about the journal it was written beside. */
interface JournalMark {
  /** Journal bytes the packed index covers. */
  bytes: number;
  /** Lines in those bytes (for the journal's compaction trigger). */
  lines: number;
  /** sha256 of the first and last JOURNAL_PROBE_BYTES of those bytes, hex. */
  hash: string;
}

const pad8 = (n: number): number => (n + 7) & ~7;

/** The mark of the journal's first `bytes` bytes, or undefined when the journal is shorter (or missing). */
export async function markJournal(file: string, bytes: number, lines: number): Promise<JournalMark | undefined> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, 'r');
  } catch {
    return bytes === 0 ? { bytes, lines, hash: hashProbes(Buffer.alloc(0), Buffer.alloc(0)) } : undefined;
  }
  try {
    const st = await fh.stat();
    if (st.size < bytes) return undefined;
    const headLen = Math.min(JOURNAL_PROBE_BYTES, bytes);
    const tailLen = Math.min(JOURNAL_PROBE_BYTES, bytes);
    const head = Buffer.alloc(headLen);
    const tail = Buffer.alloc(tailLen);
    if (headLen > 0) await fh.read(head, 0, headLen, 0);
    if (tailLen > 0) await fh.read(tail, 0, tailLen, bytes - tailLen);
    return { bytes, lines, hash: hashProbes(head, tail) };
  } finally {
    await fh.close();
  }
}

function hashProbes(head: Buffer, tail: Buffer): string {
  return createHash('sha256').update(head).update(tail).digest('hex');
}

/** A loaded packed index: columns over one buffer; records sorted by (seconds, counter). */
export class PackedTable {
  readonly count: number;
  readonly seconds: Float64Array;
  readonly counter: Float64Array;
  readonly time: Float64Array;
  readonly size: Float64Array;
  readonly offset: Float64Array;
  readonly domain: Uint32Array;
  readonly inbox: Uint32Array;
  readonly idLen: Uint32Array;
  readonly fromLen: Uint32Array;
  readonly subjectLen: Uint32Array;
  readonly codeLen: Uint32Array;
  readonly source: Uint8Array;
  /** Domains and inboxes. */
  readonly strings: string[];
  private readonly blob: Buffer;

  constructor(
    buf: Buffer,
    count: number,
    strings: string[],
    blobStart: number,
    blobBytes: number,
    readonly maxCounter: number,
    readonly journal: JournalMark,
  ) {
    this.count = count;
    let at = buf.byteOffset + HEADER_BYTES;
    const f64 = (): Float64Array => {
      const a = new Float64Array(buf.buffer, at, count);
      at += 8 * count;
      return a;
    };
    const u32 = (): Uint32Array => {
      const a = new Uint32Array(buf.buffer, at, count);
      at += 4 * count;
      return a;
    };
    this.seconds = f64();
    this.counter = f64();
    this.time = f64();
    this.size = f64();
    this.offset = f64();
    this.domain = u32();
    this.inbox = u32();
    this.idLen = u32();
    this.fromLen = u32();
    this.subjectLen = u32();
    this.codeLen = u32();
    this.source = new Uint8Array(buf.buffer, at, count);
    this.strings = strings;
    this.blob = buf.subarray(blobStart, blobStart + blobBytes);
  }

  /** The message id of a record: stored when it is not `<inbox>-<seconds>-<counter>`. */
  id(slot: number): string {
    const n = this.idLen[slot];
    if (n === 0) return `${this.strings[this.inbox[slot]]}-${this.seconds[slot]}-${this.counter[slot]}`;
    const at = this.offset[slot];
    return this.blob.toString('utf8', at, at + n);
  }

  meta(slot: number): MessageMeta {
    const meta: MessageMeta = {
      id: this.id(slot),
      domain: this.strings[this.domain[slot]],
      inbox: this.strings[this.inbox[slot]],
      time: this.time[slot],
      from: this.from(slot),
      subject: this.subject(slot),
      size: this.size[slot],
      source: SOURCES[this.source[slot]],
    };
    const code = this.code(slot);
    if (code !== undefined) meta.code = code;
    return meta;
  }

  /** The blob holds a record's id (when stored), sender, subject and code, in that order. */
  from(slot: number): string {
    const at = this.offset[slot] + this.idLen[slot];
    return this.blob.toString('utf8', at, at + this.fromLen[slot]);
  }

  subject(slot: number): string {
    const at = this.offset[slot] + this.idLen[slot] + this.fromLen[slot];
    return this.blob.toString('utf8', at, at + this.subjectLen[slot]);
  }

  code(slot: number): string | undefined {
    const n = this.codeLen[slot];
    if (n === 0) return undefined;
    const at = this.offset[slot] + this.idLen[slot] + this.fromLen[slot] + this.subjectLen[slot];
    return this.blob.toString('utf8', at, at + n);
  }

  /**
   * One reusable view of a slot's searchable fields, decoded only when read: a search tests
   * every record it walks, and building a MessageMeta for each (its id, sender and subject
   * decoded, whatever the query asks) was most of a full scan's time.
   */
  view(): PackedView {
    return new PackedView(this);
  }

  /** Slot of the record with this id, or -1. */
  find(id: string, seconds: number, counter: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.seconds[mid];
      if (s < seconds || (s === seconds && this.counter[mid] < counter)) lo = mid + 1;
      else hi = mid;
    }
    // Ids of a foreign store may share (seconds, counter) across inboxes: check each.
    for (let i = lo; i < this.count && this.seconds[i] === seconds && this.counter[i] === counter; i++) if (this.id(i) === id) return i;
    return -1;
  }
}

/** A growing byte buffer for the blob and the string table. */
class Bytes {
  buf = Buffer.allocUnsafe(INITIAL_BLOB_BYTES);
  length = 0;

  /** Appends a string as UTF-8; returns its byte length. */
  write(s: string): number {
    if (s.length === 0) return 0;
    this.reserve(s.length * 3);
    const n = this.buf.write(s, this.length, 'utf8');
    this.length += n;
    return n;
  }

  u32(v: number): void {
    this.reserve(4);
    this.buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  get bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * Writes the packed index of `count` live messages, given in receipt order (the index's own
 * order), atomically (tmp file, fdatasync, rename, directory fsync).
 */
export async function writePackedIndex(dataDir: string, metas: Iterable<MessageMeta>, count: number, maxCounter: number, journal: JournalMark): Promise<void> {
  const f64 = new Float64Array(F64_COLUMNS * count);
  const u32 = new Uint32Array(U32_COLUMNS * count);
  const source = new Uint8Array(pad8(count));
  const blob = new Bytes();
  const stringIds = new Map<string, number>();
  const strings = new Bytes();
  const intern = (s: string): number => {
    let n = stringIds.get(s);
    if (n === undefined) {
      stringIds.set(s, (n = stringIds.size));
      strings.u32(Buffer.byteLength(s));
      strings.write(s);
    }
    return n;
  };
  let i = 0;
  let lastSeconds = -1;
  let lastCounter = -1;
  for (const m of metas) {
    if (i === count) throw new Error('packed index: more messages than counted');
    const b = m.id.lastIndexOf('-');
    const a = m.id.lastIndexOf('-', b - 1);
    const seconds = Number(m.id.slice(a + 1, b));
    const counter = Number(m.id.slice(b + 1));
    if (a <= 0 || !Number.isSafeInteger(seconds) || !Number.isSafeInteger(counter)) throw new Error(`packed index: bad message id ${JSON.stringify(m.id)}`);
    if (seconds < lastSeconds || (seconds === lastSeconds && counter < lastCounter)) throw new Error('packed index: messages out of receipt order');
    lastSeconds = seconds;
    lastCounter = counter;
    f64[i] = seconds;
    f64[count + i] = counter;
    f64[2 * count + i] = m.time;
    f64[3 * count + i] = m.size;
    f64[4 * count + i] = blob.length;
    u32[i] = intern(m.domain);
    u32[count + i] = intern(m.inbox);
    u32[2 * count + i] = m.id === `${m.inbox}-${seconds}-${counter}` ? 0 : blob.write(m.id);
    u32[3 * count + i] = blob.write(m.from);
    u32[4 * count + i] = blob.write(m.subject);
    u32[5 * count + i] = m.code ? blob.write(m.code) : 0;
    source[i] = SOURCES.indexOf(m.source);
    i++;
  }
  if (i !== count) throw new Error(`packed index: ${i} messages, not the ${count} counted`);
  const stringBytes = strings.bytes;
  const blobBytes = blob.bytes;
  const body = [
    Buffer.from(f64.buffer, f64.byteOffset, f64.byteLength),
    Buffer.from(u32.buffer, u32.byteOffset, u32.byteLength),
    Buffer.from(source.buffer, source.byteOffset, source.byteLength),
    stringBytes,
    Buffer.alloc(pad8(stringBytes.length) - stringBytes.length),
    blobBytes,
  ];
  let crc = 0;
  for (const part of body) crc = zlib.crc32(part, crc);
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(VERSION, 8);
  header.writeUInt32LE(count, 12);
  header.writeDoubleLE(maxCounter, 16);
  header.writeDoubleLE(journal.bytes, 24);
  header.writeDoubleLE(journal.lines, 32);
  header.write(journal.hash, 40, 'hex');
  header.writeUInt32LE(stringIds.size, 72);
  header.writeUInt32LE(stringBytes.length, 76);
  header.writeDoubleLE(blobBytes.length, 80);
  header.writeUInt32LE(crc, 88);
  const file = path.join(dataDir, PACKED_INDEX_FILE);
  const tmp = `${file}.tmp`;
  const fh = await fs.open(tmp, 'w', PRIVATE_FILE_MODE);
  try {
    await fh.writev([header, ...body]);
    await fh.datasync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, file);
  await fsyncDir(dataDir);
}

/** The packed index, or undefined (with the reason when there is a file that cannot be used). */
export async function loadPackedIndex(dataDir: string): Promise<{ table?: PackedTable; problem?: string }> {
  const file = path.join(dataDir, PACKED_INDEX_FILE);
  let buf: Buffer;
  try {
    buf = await fs.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { problem: (e as Error).message };
  }
  const bad = (why: string): { problem: string } => ({ problem: `${file} ${why}` });
  if (buf.length < HEADER_BYTES || buf.toString('latin1', 0, 8) !== MAGIC) return bad('is not a packed index');
  if (buf.readUInt32LE(8) !== VERSION) return bad(`is not a version ${VERSION} packed index`);
  // Typed arrays need aligned views: readFile's buffer starts its own allocation, but be sure.
  if (buf.byteOffset % 8 !== 0) buf = Buffer.from(buf);
  const count = buf.readUInt32LE(12);
  const maxCounter = buf.readDoubleLE(16);
  const journal: JournalMark = { bytes: buf.readDoubleLE(24), lines: buf.readDoubleLE(32), hash: buf.toString('hex', 40, 72) };
  const stringCount = buf.readUInt32LE(72);
  const stringBytes = buf.readUInt32LE(76);
  const blobBytes = buf.readDoubleLE(80);
  const crc = buf.readUInt32LE(88);
  const stringsStart = HEADER_BYTES + (F64_COLUMNS * 8 + U32_COLUMNS * 4) * count + pad8(count);
  const blobStart = stringsStart + pad8(stringBytes);
  if (!Number.isSafeInteger(blobBytes) || !Number.isSafeInteger(journal.bytes) || !Number.isSafeInteger(journal.lines) || !Number.isSafeInteger(maxCounter)) return bad('is damaged (a bad header)');
  if (buf.length !== blobStart + blobBytes) return bad(`is torn or damaged (${buf.length} bytes, not ${blobStart + blobBytes})`);
  if (zlib.crc32(buf.subarray(HEADER_BYTES)) !== crc) return bad('is damaged (checksum mismatch)');
  const strings: string[] = [];
  for (let at = stringsStart; strings.length < stringCount; ) {
    if (at + 4 > stringsStart + stringBytes) return bad('is damaged (string table)');
    const n = buf.readUInt32LE(at);
    if (at + 4 + n > stringsStart + stringBytes) return bad('is damaged (string table)');
    strings.push(buf.toString('utf8', at + 4, at + 4 + n));
    at += 4 + n;
  }
  const table = new PackedTable(buf, count, strings, blobStart, blobBytes, maxCounter, journal);
  const problem = checkTable(table, blobBytes);
  return problem ? bad(`is damaged (${problem})`) : { table };
}

/** Range and order checks of every record, so no read of a record can fail later. */
function checkTable(t: PackedTable, blobBytes: number): string | undefined {
  const cols = t;
  const n = t.strings.length;
  for (let i = 0; i < t.count; i++) {
    const s = t.seconds[i];
    const c = t.counter[i];
    if (!Number.isSafeInteger(s) || !Number.isSafeInteger(c) || s < 0 || c < 0 || c > t.maxCounter) return 'a bad id';
    if (i > 0 && (s < t.seconds[i - 1] || (s === t.seconds[i - 1] && c < t.counter[i - 1]))) return 'records out of order';
    if (t.domain[i] >= n || t.inbox[i] >= n || cols.source[i] >= SOURCES.length) return 'a bad field';
    if (!Number.isFinite(cols.time[i]) || !Number.isSafeInteger(cols.size[i]) || cols.size[i] < 0) return 'a bad field';
    const end = cols.offset[i] + cols.idLen[i] + cols.fromLen[i] + cols.subjectLen[i] + cols.codeLen[i];
    if (!Number.isSafeInteger(cols.offset[i]) || end > blobBytes) return 'a field beyond the blob';
  }
  return undefined;
}

/** A slot's searchable fields (core/search.ts SearchableMeta), read from the columns on access; `at(slot)` moves it. */
export class PackedView implements SearchableMeta {
  private slot = 0;

  constructor(private readonly t: PackedTable) {}

  at(slot: number): this {
    this.slot = slot;
    return this;
  }

  get domain(): string {
    return this.t.strings[this.t.domain[this.slot]];
  }

  get inbox(): string {
    return this.t.strings[this.t.inbox[this.slot]];
  }

  get time(): number {
    return this.t.time[this.slot];
  }

  get from(): string {
    return this.t.from(this.slot);
  }

  get subject(): string {
    return this.t.subject(this.slot);
  }

  get code(): string | undefined {
    return this.t.code(this.slot);
  }
}
