// The in-memory index of the Maildir store (headers only, no bodies): every live message by
// id, in receipt order store-wide, per domain, per inbox of a domain, and per inbox name
// across domains (what the `private` domain reads). Pure memory: no I/O, no events; the
// store facade (maildir.ts) fills it on open and keeps it in step with the files.
import { ALL_INBOXES, normalizeInbox, parseMessageId } from '../../core/ids';
import { StoreError } from './errors';
import { type IndexRecord, OrderedList } from './ordered';
import type { ListOptions, ListResult, MessageMeta } from './types';

interface DomainIndex {
  list: OrderedList;
  inboxes: Map<string, OrderedList>;
}

export class MessageIndex {
  private readonly byId = new Map<string, IndexRecord>();
  private readonly all = new OrderedList();
  private readonly byDomain = new Map<string, DomainIndex>();
  /** Same-named inboxes across every domain (what the `private` domain reads). */
  private readonly byName = new Map<string, OrderedList>();

  /** Live messages. */
  get size(): number {
    return this.byId.size;
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

  record(id: string): IndexRecord | undefined {
    return this.byId.get(id);
  }

  insert(r: IndexRecord): void {
    const { domain, inbox, id } = r.meta;
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

  /** Marks the record dead in every list holding it, dropping lists that become empty. */
  remove(r: IndexRecord): void {
    const { domain, inbox, id } = r.meta;
    r.dead = true;
    this.byId.delete(id);
    this.all.noteDeleted();
    const d = this.byDomain.get(domain);
    if (d) {
      d.list.noteDeleted();
      const il = d.inboxes.get(inbox);
      if (il) {
        il.noteDeleted();
        if (il.size === 0) d.inboxes.delete(inbox);
      }
      if (d.list.size === 0) this.byDomain.delete(domain);
    }
    const nl = this.byName.get(inbox);
    if (nl) {
      nl.noteDeleted();
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
      const known = this.byId.get(options.cursor);
      const parsed = known ?? parseMessageId(options.cursor);
      if (!parsed) throw new StoreError('BAD_CURSOR', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
      after = { seconds: parsed.seconds, counter: parsed.counter };
    }
    const limit = Math.max(0, Math.floor(options.limit));
    const skip = Math.max(0, Math.floor(options.skip));
    const page = list.page(options.sort === 'ascending' ? 'ascending' : 'descending', skip, limit, after);
    const msgs = page.recs.map((r) => r.meta);
    return { msgs, total: list.size, ...(page.more && msgs.length > 0 ? { nextCursor: msgs[msgs.length - 1].id } : {}) };
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
