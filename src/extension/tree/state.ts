// Persistent per-server state of the tree: inboxes the user added and which messages were
// read. No vscode import: the store is anything shaped like a Memento (globalState).
import type { InboxRef } from '../inboxRef';
import type { MementoLike } from '../util/memento';

/** Read ids kept per server; older ones fall off (they are long out of the listing by then). */
export const MAX_READ_IDS = 5000;
/** Inboxes a user can add per server: a tree longer than this is unusable anyway. */
const MAX_ADDED_INBOXES = 200;

export class AddedInboxes {
  constructor(
    private readonly memento: MementoLike,
    private readonly serverKey: string,
  ) {}

  private get key(): string {
    return `testInbox.addedInboxes:${this.serverKey}`;
  }

  list(domain?: string): InboxRef[] {
    const all = (this.memento.get<InboxRef[]>(this.key) ?? []).filter(
      (r) => r && typeof r.domain === 'string' && typeof r.inbox === 'string',
    );
    return domain === undefined ? all : all.filter((r) => r.domain === domain);
  }

  has(ref: InboxRef): boolean {
    return this.list().some((r) => r.domain === ref.domain && r.inbox === ref.inbox);
  }

  /** False when it was already there. */
  async add(ref: InboxRef): Promise<boolean> {
    const all = this.list();
    if (all.some((r) => r.domain === ref.domain && r.inbox === ref.inbox)) return false;
    if (all.length >= MAX_ADDED_INBOXES) throw new Error(`At most ${MAX_ADDED_INBOXES} inboxes can be added; remove one first.`);
    await this.memento.update(this.key, [...all, { domain: ref.domain, inbox: ref.inbox }]);
    return true;
  }

  async remove(ref: InboxRef): Promise<boolean> {
    const all = this.list();
    const rest = all.filter((r) => !(r.domain === ref.domain && r.inbox === ref.inbox));
    if (rest.length === all.length) return false;
    await this.memento.update(this.key, rest);
    return true;
  }
}

/**
 * Unread = not opened here and, for a hosted server, received after it was first shown (so a
 * first connection to a busy hosted inbox does not show hundreds of unread messages). On the
 * local server every message is test mail of this machine: all of it starts unread, so a first
 * run shows its mail (the samples of `npm start`) as new.
 */
export class ReadState {
  private read: Set<string>;
  private readonly baseline: number;

  constructor(
    private readonly memento: MementoLike,
    private readonly serverKey: string,
    now: number,
    opts: { allUnread?: boolean } = {},
  ) {
    this.read = new Set(memento.get<string[]>(this.readKey) ?? []);
    if (opts.allUnread) {
      this.baseline = 0;
      return;
    }
    const stored = memento.get<number>(this.baselineKey);
    this.baseline = typeof stored === 'number' ? stored : now;
    if (typeof stored !== 'number') void memento.update(this.baselineKey, now);
  }

  /** The store keys of a server's read state. */
  static keys(serverKey: string): { read: string; baseline: string } {
    return { read: `testInbox.read:${serverKey}`, baseline: `testInbox.baseline:${serverKey}` };
  }
  private get readKey(): string {
    return ReadState.keys(this.serverKey).read;
  }
  private get baselineKey(): string {
    return ReadState.keys(this.serverKey).baseline;
  }

  isUnread(msg: { id: string; time: number }): boolean {
    return msg.time >= this.baseline && !this.read.has(msg.id);
  }

  /** The stored list as it was last taken in: its length and last id (the list only grows at its end, and is cut at its start). */
  private seen: { length: number; last: string | undefined } | undefined;

  /**
   * Takes in what another window stored (a file every window on the machine reads,
   * tree/sharedMemento.ts): the store is the one source of truth, this set only its copy. True
   * when that changed what is read here (the tree then redraws).
   */
  sync(): boolean {
    this.memento.refresh?.();
    const stored = this.memento.get<string[]>(this.readKey) ?? [];
    const now = { length: stored.length, last: stored[stored.length - 1] };
    if (this.seen && this.seen.length === now.length && this.seen.last === now.last) return false;
    this.seen = now;
    const before = this.read.size;
    const next = new Set(stored);
    const changed = next.size !== before || [...next].some((id) => !this.read.has(id));
    this.read = next;
    return changed;
  }

  async markRead(ids: string[]): Promise<void> {
    // What another window marked meanwhile first: written back together, so neither loses the other's.
    this.sync();
    let changed = false;
    for (const id of ids) {
      if (!this.read.has(id)) {
        this.read.add(id);
        changed = true;
      }
    }
    if (!changed) return;
    let list = [...this.read];
    if (list.length > MAX_READ_IDS) {
      list = list.slice(list.length - MAX_READ_IDS);
      this.read = new Set(list);
    }
    this.seen = { length: list.length, last: list[list.length - 1] };
    await this.memento.update(this.readKey, list);
  }
}
