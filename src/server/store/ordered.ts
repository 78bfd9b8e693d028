// A list of index records kept sorted by (epoch second of the id, counter), which is
// receipt order, so "newest 50" is a slice from the end. Deletions leave tombstones
// (the record's `dead` flag, shared by every list holding it) that are swept out when
// they outnumber the live records, so retention of the oldest stays cheap.

import type { MessageMeta } from './types';

export interface IndexRecord {
  meta: MessageMeta;
  /** Epoch seconds of the id. */
  seconds: number;
  /** Store-wide counter of the id. */
  counter: number;
  dead: boolean;
}

/** Sweep tombstones only past this many, so small lists never bother. */
const MIN_TOMBSTONES_BEFORE_SWEEP = 64;

export function compareKey(aSeconds: number, aCounter: number, b: IndexRecord): number {
  return aSeconds !== b.seconds ? aSeconds - b.seconds : aCounter - b.counter;
}

export class OrderedList {
  private recs: IndexRecord[] = [];
  private dead = 0;
  private liveCount = 0;

  get size(): number {
    return this.liveCount;
  }

  insert(rec: IndexRecord): void {
    const n = this.recs.length;
    if (n === 0 || compareKey(rec.seconds, rec.counter, this.recs[n - 1]) > 0) this.recs.push(rec);
    else this.recs.splice(this.upperBound(rec.seconds, rec.counter), 0, rec);
    this.liveCount++;
  }

  /** Call after setting `rec.dead` on a record this list holds. */
  noteDeleted(): void {
    this.liveCount--;
    this.dead++;
    if (this.dead > MIN_TOMBSTONES_BEFORE_SWEEP && this.dead > this.liveCount) this.sweep();
  }

  /** Oldest live record, or undefined. */
  oldest(): IndexRecord | undefined {
    for (const r of this.recs) if (!r.dead) return r;
    return undefined;
  }

  newest(): IndexRecord | undefined {
    for (let i = this.recs.length - 1; i >= 0; i--) if (!this.recs[i].dead) return this.recs[i];
    return undefined;
  }

  /** Live records in ascending order (oldest first). */
  *ascending(): Generator<IndexRecord> {
    for (const r of this.recs) if (!r.dead) yield r;
  }

  /**
   * Up to `limit` live records after `skip`, in `sort` order, starting after the record with
   * key (`afterSeconds`, `afterCounter`) when given. `more` says whether live records remain.
   */
  page(sort: 'ascending' | 'descending', skip: number, limit: number, after?: { seconds: number; counter: number }): { recs: IndexRecord[]; more: boolean } {
    const out: IndexRecord[] = [];
    let toSkip = skip;
    const step = sort === 'descending' ? -1 : 1;
    let i: number;
    if (sort === 'descending') i = after ? this.lowerBound(after.seconds, after.counter) - 1 : this.recs.length - 1;
    else i = after ? this.upperBound(after.seconds, after.counter) : 0;
    for (; i >= 0 && i < this.recs.length; i += step) {
      const r = this.recs[i];
      if (r.dead) continue;
      if (toSkip > 0) {
        toSkip--;
        continue;
      }
      if (out.length === limit) return { recs: out, more: true };
      out.push(r);
    }
    return { recs: out, more: false };
  }

  private sweep(): void {
    this.recs = this.recs.filter((r) => !r.dead);
    this.dead = 0;
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
