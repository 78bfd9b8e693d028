// A list of index records kept sorted by (epoch second of the id, counter), which is
// receipt order, so "newest 50" is a slice from the end. It has two tiers: the records of the
// packed index (packedIndex.ts) that the store opened with, as slots into its columns (an
// Int32Array, no object per record), and the records added since, as objects. A read walks
// both in order and turns only the slots it returns into records. Deletions leave tombstones
// (the record's `dead` flag, shared by every list holding it; for a packed record, a flag per
// slot) that are swept out when they outnumber the live records, so retention of the oldest
// stays cheap.

import type { SearchableMeta } from '../../../core/search';
import type { MessageMeta } from '../types';

export interface IndexRecord {
  meta: MessageMeta;
  /** Epoch seconds of the id. */
  seconds: number;
  /** Store-wide counter of the id. */
  counter: number;
  dead: boolean;
  /** Slot in the packed index the store opened with, when the record came from it. */
  slot?: number;
}

/** The packed records as the lists see them (memoryIndex.ts owns them). */
export interface PackedRecords {
  readonly seconds: Float64Array;
  readonly counter: Float64Array;
  /** 1 for a removed slot. */
  readonly dead: Uint8Array;
  /** The slot as a record (a new object on each call). */
  record(slot: number): IndexRecord;
  /** Whether `test` holds for the slot, read without making it a record. */
  matches(slot: number, test: (meta: SearchableMeta) => boolean): boolean;
}

/** Sweep tombstones only past this many, so small lists never bother. */
const MIN_TOMBSTONES_BEFORE_SWEEP = 64;

function compareKey(aSeconds: number, aCounter: number, b: IndexRecord): number {
  return aSeconds !== b.seconds ? aSeconds - b.seconds : aCounter - b.counter;
}

export class OrderedList {
  private recs: IndexRecord[] = [];
  private dead = 0;
  private liveCount: number;
  private slots: Int32Array;
  private deadSlots = 0;

  /** `slots`: the live packed records of this list, in order. */
  constructor(
    private readonly packed?: PackedRecords,
    slots?: Int32Array,
  ) {
    this.slots = slots ?? new Int32Array(0);
    this.liveCount = this.slots.length;
  }

  get size(): number {
    return this.liveCount;
  }

  insert(rec: IndexRecord): void {
    const n = this.recs.length;
    if (n === 0 || compareKey(rec.seconds, rec.counter, this.recs[n - 1]) > 0) this.recs.push(rec);
    else this.recs.splice(this.upperBound(rec.seconds, rec.counter), 0, rec);
    this.liveCount++;
  }

  /** Call after marking dead a record this list holds (`packed`: one of its slots). */
  noteDeleted(packed = false): void {
    this.liveCount--;
    if (packed) {
      this.deadSlots++;
      if (this.deadSlots > MIN_TOMBSTONES_BEFORE_SWEEP && this.deadSlots > this.liveCount) this.sweepSlots();
      return;
    }
    this.dead++;
    if (this.dead > MIN_TOMBSTONES_BEFORE_SWEEP && this.dead > this.liveCount) this.sweep();
  }

  /** Oldest live record, or undefined. */
  oldest(): IndexRecord | undefined {
    return this.page('ascending', 0, 1).recs[0];
  }

  newest(): IndexRecord | undefined {
    return this.page('descending', 0, 1).recs[0];
  }

  /** Live records in ascending order (oldest first). */
  *ascending(): Generator<IndexRecord> {
    const step = this.walker('ascending');
    for (let pos = step(); pos !== undefined; pos = step()) yield this.recordAt(pos);
  }

  /**
   * Live records newest first (after the key, when given) for which `test` holds: the matches
   * numbered `wanted.from` (from 0) up to before `wanted.to` as records, every other match as
   * `true` (a count needs no record), and null for each record walked that fails the test, so
   * a caller can yield to the event loop every so many steps.
   */
  *descendingMatching(test: (meta: SearchableMeta) => boolean, wanted: { from: number; to: number }, after?: { seconds: number; counter: number }): Generator<IndexRecord | true | null> {
    const step = this.walker('descending', after);
    let matched = 0;
    for (let pos = step(); pos !== undefined; pos = step()) {
      const r = pos >= 0 ? undefined : this.recs[-pos - 1];
      if (!(r ? test(r.meta) : this.packed!.matches(pos, test))) {
        yield null;
        continue;
      }
      const i = matched++;
      if (i < wanted.from || i >= wanted.to) yield true;
      else yield r ?? this.packed!.record(pos);
    }
  }

  /**
   * Up to `limit` live records after `skip`, in `sort` order, starting after the record with
   * key (`afterSeconds`, `afterCounter`) when given. `more` says whether live records remain.
   */
  page(sort: 'ascending' | 'descending', skip: number, limit: number, after?: { seconds: number; counter: number }): { recs: IndexRecord[]; more: boolean } {
    const out: IndexRecord[] = [];
    let toSkip = skip;
    const step = this.walker(sort, after);
    for (let pos = step(); pos !== undefined; pos = step()) {
      if (toSkip > 0) {
        toSkip--;
        continue;
      }
      if (out.length === limit) return { recs: out, more: true };
      out.push(this.recordAt(pos));
    }
    return { recs: out, more: false };
  }

  /** A position: >= 0 a packed slot, < 0 the object record at index -pos - 1. */
  private recordAt(pos: number): IndexRecord {
    return pos >= 0 ? this.packed!.record(pos) : this.recs[-pos - 1];
  }

  /** A function that returns the next live position in `sort` order (after the key, when given), then undefined. */
  private walker(sort: 'ascending' | 'descending', after?: { seconds: number; counter: number }): () => number | undefined {
    const recs = this.recs;
    const slots = this.slots;
    const p = this.packed;
    let i: number;
    let j: number;
    if (sort === 'descending') {
      i = after ? this.lowerBound(after.seconds, after.counter) - 1 : recs.length - 1;
      j = after ? this.slotBound(after.seconds, after.counter, false) - 1 : slots.length - 1;
      return () => {
        for (;;) {
          while (i >= 0 && recs[i].dead) i--;
          if (p) while (j >= 0 && p.dead[slots[j]] === 1) j--;
          if (i < 0 && j < 0) return undefined;
          // The newer of the two heads; a packed record first on a tie.
          if (j < 0 || (i >= 0 && compareKey(p!.seconds[slots[j]], p!.counter[slots[j]], recs[i]) < 0)) return -(i--) - 1;
          return slots[j--];
        }
      };
    }
    i = after ? this.upperBound(after.seconds, after.counter) : 0;
    j = after ? this.slotBound(after.seconds, after.counter, true) : 0;
    return () => {
      for (;;) {
        while (i < recs.length && recs[i].dead) i++;
        if (p) while (j < slots.length && p.dead[slots[j]] === 1) j++;
        if (i >= recs.length && j >= slots.length) return undefined;
        if (j >= slots.length || (i < recs.length && compareKey(p!.seconds[slots[j]], p!.counter[slots[j]], recs[i]) > 0)) return -(i++) - 1;
        return slots[j++];
      }
    };
  }

  private sweep(): void {
    this.recs = this.recs.filter((r) => !r.dead);
    this.dead = 0;
  }

  private sweepSlots(): void {
    const dead = this.packed!.dead;
    this.slots = this.slots.filter((s) => dead[s] !== 1);
    this.deadSlots = 0;
  }

  /** First slot index whose key is > the given key (`strict`), or >= it. */
  private slotBound(seconds: number, counter: number, strict: boolean): number {
    const p = this.packed;
    if (!p) return 0;
    let lo = 0;
    let hi = this.slots.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = p.seconds[this.slots[mid]];
      const c = p.counter[this.slots[mid]];
      const cmp = seconds !== s ? seconds - s : counter - c;
      if (cmp > 0 || (strict && cmp === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is >= the given key. */
  private lowerBound(seconds: number, counter: number): number {
    let lo = 0;
    let hi = this.recs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(seconds, counter, this.recs[mid]) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is > the given key. */
  private upperBound(seconds: number, counter: number): number {
    let lo = 0;
    let hi = this.recs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(seconds, counter, this.recs[mid]) >= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
