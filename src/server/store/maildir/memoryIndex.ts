// The in-memory index of the Maildir store (headers only, no bodies): every live message by
// id, in receipt order store-wide, per domain, per inbox of a domain, and per inbox name
// across domains (what the `private` domain reads). Pure memory: no I/O, no events; the
// store facade (store.ts) fills it on open and keeps it in step with the files. The
// messages of the packed index the store opened with (packedIndex.ts) stay in its columns,
// one flag per slot when removed; only those added since are objects (ordered.ts).
import { ALL_INBOXES, normalizeInbox, parseMessageId } from '../../../core/ids';
import { StoreError } from '../errors';
import { type IndexRecord, OrderedList, type PackedRecords } from './ordered';
import type { SearchableMeta } from '../../../core/search';
import type { PackedTable, PackedView } from './packedIndex';
import type { ListOptions, ListResult, MessageMeta } from '../types';

interface DomainIndex {
  list: OrderedList;
  inboxes: Map<string, OrderedList>;
}

/** The packed table as the lists read it, with its removal flags. */
class PackedRecordsOf implements PackedRecords {
  readonly seconds: Float64Array;
  readonly counter: Float64Array;
  readonly dead: Uint8Array;
  /** The one view a search moves from slot to slot. */
  private readonly view: PackedView;

  constructor(readonly table: PackedTable) {
    this.seconds = table.seconds;
    this.counter = table.counter;
    this.dead = new Uint8Array(table.count);
    this.view = table.view();
  }

  record(slot: number): IndexRecord {
    return { meta: this.table.meta(slot), seconds: this.seconds[slot], counter: this.counter[slot], dead: this.dead[slot] === 1, slot };
  }

  matches(slot: number, test: (meta: SearchableMeta) => boolean): boolean {
    return test(this.view.at(slot));
  }
}

export class MessageIndex {
  /** Records added since the packed index (all of them when there is none). */
  private readonly byId = new Map<string, IndexRecord>();
  private packed: PackedRecordsOf | undefined;
  /** Live slots of the packed index. */
  private packedLive = 0;
  private all = new OrderedList();
  private readonly byDomain = new Map<string, DomainIndex>();
  /** Same-named inboxes across every domain (what the `private` domain reads). */
  private readonly byName = new Map<string, OrderedList>();
  /** Inserts and removals since the index was filled: 0 means it still equals the packed index it was opened with. */
  changes = 0;

  /** Live messages. */
  get size(): number {
    return this.byId.size + this.packedLive;
  }

  get domainCount(): number {
    return this.byDomain.size;
  }

  /** (domain, inbox) pairs that hold messages. */
  get inboxCount(): number {
    let n = 0;
    for (const d of this.byDomain.values()) n += d.inboxes.size;
    return n;
  }

  /** The packed index this one was filled from, when it is unchanged since. */
  get unchangedPacked(): PackedTable | undefined {
    return this.changes === 0 ? this.packed?.table : undefined;
  }

  /**
   * Fills an empty index with the packed records except the `dead` slots (removed since, or
   * whose files are gone). Call before any insert.
   */
  fillPacked(table: PackedTable, dead: Uint8Array): void {
    if (this.size > 0 || this.packed) throw new Error('fillPacked: the index is not empty');
    const p = new PackedRecordsOf(table);
    p.dead.set(dead);
    this.packed = p;
    const n = table.count;
    const nStrings = table.strings.length;
    // Count per list, then fill each list's slots in order: typed arrays, no object per record.
    const perDomain = new Int32Array(nStrings);
    const perName = new Int32Array(nStrings);
    const perInbox = new Map<number, number>();
    const pairOf = (slot: number): number => table.domain[slot] * nStrings + table.inbox[slot];
    let live = 0;
    for (let s = 0; s < n; s++) {
      if (dead[s] === 1) continue;
      live++;
      perDomain[table.domain[s]]++;
      perName[table.inbox[s]]++;
      const pair = pairOf(s);
      perInbox.set(pair, (perInbox.get(pair) ?? 0) + 1);
    }
    const allSlots = new Int32Array(live);
    const domainSlots = new Map<number, { slots: Int32Array; at: number }>();
    const nameSlots = new Map<number, { slots: Int32Array; at: number }>();
    const inboxSlots = new Map<number, { slots: Int32Array; at: number }>();
    let at = 0;
    for (let s = 0; s < n; s++) {
      if (dead[s] === 1) continue;
      allSlots[at++] = s;
      const d = table.domain[s];
      const i = table.inbox[s];
      const pair = pairOf(s);
      let ds = domainSlots.get(d);
      if (!ds) domainSlots.set(d, (ds = { slots: new Int32Array(perDomain[d]), at: 0 }));
      ds.slots[ds.at++] = s;
      let ns = nameSlots.get(i);
      if (!ns) nameSlots.set(i, (ns = { slots: new Int32Array(perName[i]), at: 0 }));
      ns.slots[ns.at++] = s;
      let is = inboxSlots.get(pair);
      if (!is) inboxSlots.set(pair, (is = { slots: new Int32Array(perInbox.get(pair) ?? 0), at: 0 }));
      is.slots[is.at++] = s;
    }
    this.packedLive = live;
    this.all = new OrderedList(p, allSlots);
    for (const [d, { slots }] of domainSlots) this.byDomain.set(table.strings[d], { list: new OrderedList(p, slots), inboxes: new Map() });
    for (const [pair, { slots }] of inboxSlots) {
      const d = Math.floor(pair / nStrings);
      this.byDomain.get(table.strings[d])!.inboxes.set(table.strings[pair - d * nStrings], new OrderedList(p, slots));
    }
    for (const [i, { slots }] of nameSlots) this.byName.set(table.strings[i], new OrderedList(p, slots));
  }

  record(id: string): IndexRecord | undefined {
    const r = this.byId.get(id);
    if (r || !this.packed) return r;
    const parsed = parseMessageId(id);
    if (!parsed) return undefined;
    const slot = this.packed.table.find(id, parsed.seconds, parsed.counter);
    return slot < 0 || this.packed.dead[slot] === 1 ? undefined : this.packed.record(slot);
  }

  insert(r: IndexRecord): void {
    const { domain, inbox, id } = r.meta;
    this.changes++;
    this.byId.set(id, r);
    this.all.insert(r);
    let d = this.byDomain.get(domain);
    if (!d) this.byDomain.set(domain, (d = { list: new OrderedList(), inboxes: new Map() }));
    d.list.insert(r);
    let il = d.inboxes.get(inbox);
    if (!il) d.inboxes.set(inbox, (il = new OrderedList()));
    il.insert(r);
    let nl = this.byName.get(inbox);
    if (!nl) this.byName.set(inbox, (nl = new OrderedList()));
    nl.insert(r);
  }

  /** Marks the record dead in every list holding it, dropping lists that become empty. A record removed already is left alone. */
  remove(r: IndexRecord): void {
    const { domain, inbox, id } = r.meta;
    const packed = r.slot !== undefined;
    if (packed) {
      if (!this.packed || this.packed.dead[r.slot!] === 1) {
        r.dead = true;
        return;
      }
      this.packed.dead[r.slot!] = 1;
      this.packedLive--;
    } else {
      if (r.dead) return;
      this.byId.delete(id);
    }
    this.changes++;
    r.dead = true;
    this.all.noteDeleted(packed);
    const d = this.byDomain.get(domain);
    if (d) {
      d.list.noteDeleted(packed);
      const il = d.inboxes.get(inbox);
      if (il) {
        il.noteDeleted(packed);
        if (il.size === 0) d.inboxes.delete(inbox);
      }
      if (d.list.size === 0) this.byDomain.delete(domain);
    }
    const nl = this.byName.get(inbox);
    if (nl) {
      nl.noteDeleted(packed);
      if (nl.size === 0) this.byName.delete(inbox);
    }
  }

  /** The list a (domain, inbox) read covers: domain undefined = every domain, inbox `*` = every inbox. */
  listFor(domain: string | undefined, inbox: string): OrderedList | undefined {
    const d = domain?.toLowerCase();
    const i = normalizeInbox(inbox);
    if (i === ALL_INBOXES) return d === undefined ? this.all : this.byDomain.get(d)?.list;
    return d === undefined ? this.byName.get(i) : this.byDomain.get(d)?.inboxes.get(i);
  }

  list(domain: string | undefined, inbox: string, options: ListOptions): ListResult {
    const list = this.listFor(domain, inbox);
    if (!list) return { msgs: [], total: 0 };
    let after: { seconds: number; counter: number } | undefined;
    if (options.cursor !== undefined) {
      const known = this.record(options.cursor);
      const parsed = known ?? parseMessageId(options.cursor);
      if (!parsed) throw new StoreError('bad_cursor', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
      after = { seconds: parsed.seconds, counter: parsed.counter };
    }
    const limit = Math.max(0, Math.floor(options.limit));
    const skip = Math.max(0, Math.floor(options.skip));
    const page = list.page(options.sort === 'ascending' ? 'ascending' : 'descending', skip, limit, after);
    const msgs = page.recs.map((r) => r.meta);
    return { msgs, total: list.size, ...(page.more && msgs.length > 0 ? { nextCursor: msgs[msgs.length - 1].id } : {}) };
  }

  /**
   * The live records a search walks, newest first: the list of the inbox or domain its terms
   * name (all of them otherwise), after the cursor's key when given.
   */
  searchWalk(domain: string | undefined, inbox: string | undefined, cursor: string | undefined, test: (meta: SearchableMeta) => boolean, wanted: { from: number; to: number }): Generator<IndexRecord | true | null> | undefined {
    const list = this.listFor(domain, inbox ?? ALL_INBOXES);
    if (!list) return undefined;
    let after: { seconds: number; counter: number } | undefined;
    if (cursor !== undefined) {
      const parsed = parseMessageId(cursor);
      if (!parsed) throw new StoreError('bad_cursor', `cursor ${JSON.stringify(cursor)} is not a message id`);
      after = { seconds: parsed.seconds, counter: parsed.counter };
    }
    return list.descendingMatching(test, wanted, after);
  }

  domains(): Array<{ name: string; inboxes: number; messages: number }> {
    return [...this.byDomain].map(([name, d]) => ({ name, inboxes: d.inboxes.size, messages: d.list.size })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  inboxes(domain: string | undefined): Array<{ domain: string; inbox: string; count: number; latest: number }> {
    const out: Array<{ domain: string; inbox: string; count: number; latest: number }> = [];
    const wanted = domain === undefined ? [...this.byDomain] : [[domain.toLowerCase(), this.byDomain.get(domain.toLowerCase())] as const];
    for (const [name, d] of wanted) {
      if (!d) continue;
      for (const [inbox, list] of d.inboxes) out.push({ domain: name, inbox, count: list.size, latest: list.newest()?.meta.time ?? 0 });
    }
    return out.sort((a, b) => b.latest - a.latest);
  }

  /** Every (domain, inbox) pair that holds messages. */
  *inboxKeys(): Generator<{ domain: string; inbox: string }> {
    for (const [domain, d] of this.byDomain) for (const inbox of [...d.inboxes.keys()]) yield { domain, inbox };
  }

  /** The oldest records of an inbox beyond the newest `max` (none when max is 0 = unlimited). */
  excess(domain: string, inbox: string, max: number): IndexRecord[] {
    const list = this.byDomain.get(domain)?.inboxes.get(inbox);
    if (max === 0 || !list || list.size <= max) return [];
    return list.page('ascending', 0, list.size - max).recs;
  }

  /** Records received before `cutoff` (epoch ms), oldest first. */
  olderThan(cutoff: number): IndexRecord[] {
    const old: IndexRecord[] = [];
    for (const r of this.all.ascending()) {
      if (r.meta.time >= cutoff) break;
      old.push(r);
    }
    return old;
  }

  *liveMetas(): Generator<MessageMeta> {
    for (const r of this.all.ascending()) yield r.meta;
  }
}
