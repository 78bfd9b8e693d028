// The tree's data: domains → inboxes → messages, cached, with live updates applied in
// place. Every loader catches and returns an error node: nothing here throws into the
// tree. No vscode import (the provider in provider.ts maps nodes to TreeItems).
import type { InboxApi } from '../../api/types';
import { ALL_INBOXES, isPhoneInbox, PRIVATE_DOMAIN } from '../../core/ids';
import type { MessageSummary } from '../../core/wire';
import { describeError, type ErrorAction } from '../errors';
import { Emitter } from '../util/emitter';
import { inboxKey, type InboxRef } from '../inboxRef';
import type { AddedInboxes, ReadState } from './state';

/** Messages of a whole domain fetched to discover its inboxes and count unread mail. */
const RECENT_LIMIT = 100;
/** Messages shown per inbox before "load more": a screenful. */
export const PAGE_SIZE = 25;
/** Codes remembered from fetched messages: a long session's worth, bounded. */
const MAX_LEARNED_CODES = 2000;
/** At most this many pages per inbox, so "load more" cannot grow the tree without bound. */
export const MAX_PAGES = 40;

export interface DomainNode {
  kind: 'domain';
  id: string;
  domain: string;
  inboxCount?: number;
  unread: number;
}
export interface InboxNode {
  kind: 'inbox';
  id: string;
  domain: string;
  inbox: string;
  added: boolean;
  phone: boolean;
  unread: number;
  /** `inbox@domain` for email inboxes of a named domain. */
  address?: string;
  /** Shown expanded: an inbox whose first message just arrived (its message is what the user waits for). */
  expand?: boolean;
}
export interface MessageNode {
  kind: 'message';
  id: string;
  domain: string;
  inbox: string;
  summary: MessageSummary;
  unread: boolean;
  phone: boolean;
  /** Its one-time code: from the listing (the local server's `code`) or learned when the message was fetched. */
  code?: string;
}
interface LoadMoreNode {
  kind: 'loadMore';
  id: string;
  domain: string;
  inbox: string;
}
interface ErrorNode {
  kind: 'error';
  id: string;
  message: string;
  actions: ErrorAction[];
}
/** A fix offered under the view's message while the server is not ready (Retry, Set API Token…). */
export interface ActionNode {
  kind: 'action';
  id: string;
  action: ErrorAction;
  /** The row's title where it is not the action's usual one ("Attach Again"). */
  title?: string;
}
interface EmptyNode {
  kind: 'empty';
  id: string;
  domain: string;
  inbox: string;
  message: string;
}
export type TreeNode = DomainNode | InboxNode | MessageNode | LoadMoreNode | ErrorNode | ActionNode | EmptyNode;

/** The id of a domain's row (TreeItem.id: VS Code matches rows by it). */
export function domainRowId(domain: string): string {
  return `domain:${domain}`;
}

/** The id of an inbox's row. */
export function inboxRowId(domain: string, inbox: string): string {
  return `inbox:${domain}/${inbox}`;
}

/**
 * What a change touched, when it stays under one row: a domain (its row, its inboxes and their
 * messages) or one inbox (its row and its messages). The tree then redraws that row alone, not
 * every row of every expanded inbox (tree/provider.ts). A change without one touches anything.
 */
export interface TreeChange {
  domain: string;
  inbox?: string;
}

interface DomainData {
  msgs: MessageSummary[];
  error?: unknown;
}
interface InboxData {
  msgs: MessageSummary[];
  cursor?: string;
  more: boolean;
  pages: number;
}

interface ModelDeps {
  api(): Promise<InboxApi>;
  /** Domains to show, in order. */
  domains(api: InboxApi, signal?: AbortSignal): Promise<string[]>;
  added: () => AddedInboxes;
  readState: () => ReadState;
  /** For empty-inbox hints: the SMTP address mail can be sent to, if there is one. */
  smtp?: () => { host: string; port: number } | undefined;
}

function byNewest(a: MessageSummary, b: MessageSummary): number {
  return b.time - a.time || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

function errorNode(scope: string, e: unknown): ErrorNode {
  const d = describeError(e);
  // A cancelled load (the server changed meanwhile) is not an error; offer to load again.
  if (d.silent) return { kind: 'error', id: `error:${scope}`, message: 'Loading was interrupted.', actions: ['retry'] };
  return { kind: 'error', id: `error:${scope}`, message: d.message, actions: d.actions };
}

export class InboxModel {
  private domainList: string[] | undefined;
  private readonly domainData = new Map<string, DomainData>();
  private readonly inboxData = new Map<string, InboxData>();
  private readonly changeEmitter = new Emitter<TreeChange | undefined>();
  /** Inboxes (inboxKey) whose first message just arrived: their row is shown expanded, once. */
  private readonly firstArrivals = new Set<string>();
  /** Codes of fetched messages by id (oldest forgotten first). */
  private readonly learnedCodes = new Map<string, string>();
  /** Fires when cached data changed and the tree should re-read it (all of it, or what the TreeChange names). */
  readonly onDidChange = this.changeEmitter.event;

  constructor(private readonly deps: ModelDeps) {}

  /** Drops every cache: the next read goes to the server. */
  invalidate(): void {
    this.domainList = undefined;
    this.domainData.clear();
    this.inboxData.clear();
    this.changeEmitter.fire(undefined);
  }

  async roots(): Promise<TreeNode[]> {
    try {
      if (!this.domainList) {
        const api = await this.deps.api();
        this.domainList = await this.deps.domains(api);
      }
    } catch (e) {
      return [errorNode('domains', e)];
    }
    // Each domain's recent mail first (its children need it anyway): the row then says how many
    // inboxes and unread messages it has from its first paint, for sight and for screen readers.
    await Promise.all(this.domainList.map((d) => this.loadDomain(d)));
    return this.domainList.map((domain) => this.domainNode(domain, this.domainData.get(domain)));
  }

  private domainNode(domain: string, data: DomainData | undefined): DomainNode {
    return {
      kind: 'domain',
      id: domainRowId(domain),
      domain,
      inboxCount: data ? this.inboxNames(domain, data.msgs).length : undefined,
      unread: data ? this.unreadIn(data.msgs) : 0,
    };
  }

  private inboxNode(domain: string, inbox: string, data: DomainData): InboxNode {
    const phone = isPhoneInbox(inbox);
    return {
      kind: 'inbox',
      id: inboxRowId(domain, inbox),
      domain,
      inbox,
      added: this.deps.added().has({ domain, inbox }),
      phone,
      unread: this.unreadIn(data.msgs.filter((m) => m.to.toLowerCase() === inbox)),
      address: domain !== PRIVATE_DOMAIN && !phone ? `${inbox}@${domain}` : undefined,
      ...(this.firstArrivals.has(inboxKey({ domain, inbox })) ? { expand: true } : {}),
    };
  }

  /**
   * Notes the inboxes whose first message is among `fresh` (none of theirs in `known`): their
   * row opens, since that message is what the user waits for. Bounded like the codes.
   */
  private noteFirstArrivals(domain: string, known: MessageSummary[], fresh: MessageSummary[]): void {
    const had = new Set(known.map((m) => m.to.toLowerCase()));
    for (const m of fresh) {
      const inbox = m.to.toLowerCase();
      if (had.has(inbox)) continue;
      if (this.firstArrivals.size >= MAX_LEARNED_CODES) this.firstArrivals.delete(this.firstArrivals.values().next().value as string);
      this.firstArrivals.add(inboxKey({ domain, inbox }));
    }
  }

  /** The tree showed these rows (VS Code has them now): an inbox opened for its first message opens once, and then as the user leaves it. */
  rowsShown(nodes: TreeNode[]): void {
    for (const n of nodes) if (n.kind === 'inbox' && n.expand) this.firstArrivals.delete(inboxKey(n));
  }

  /**
   * A domain's or an inbox's row as it is now, from what is cached (never a read): for a redraw
   * of that row alone after a TreeChange. Undefined when its data is not loaded (or the inbox is
   * no longer listed): the whole tree must be read again.
   */
  rowNow(change: TreeChange): DomainNode | InboxNode | undefined {
    const data = this.domainData.get(change.domain);
    if (!data || data.error || !this.domainList?.includes(change.domain)) return undefined;
    if (change.inbox === undefined) return this.domainNode(change.domain, data);
    if (!this.inboxNames(change.domain, data.msgs).includes(change.inbox)) return undefined;
    return this.inboxNode(change.domain, change.inbox, data);
  }

  /** Loads the domain's recent mail (list inbox `*`) when not cached. */
  private async loadDomain(domain: string, force = false): Promise<DomainData> {
    const cached = this.domainData.get(domain);
    if (cached && !cached.error && !force) return cached;
    try {
      const api = await this.deps.api();
      const listing = await api.listInbox(domain, ALL_INBOXES, { limit: RECENT_LIMIT });
      const data: DomainData = { msgs: [...listing.msgs].sort(byNewest) };
      this.domainData.set(domain, data);
      return data;
    } catch (e) {
      const data: DomainData = { msgs: cached?.msgs ?? [], error: e };
      this.domainData.set(domain, data);
      return data;
    }
  }

  private inboxNames(domain: string, msgs: MessageSummary[]): string[] {
    const names: string[] = [];
    for (const m of msgs) {
      const name = m.to.toLowerCase();
      if (!names.includes(name)) names.push(name);
    }
    for (const r of this.deps.added().list(domain)) if (!names.includes(r.inbox)) names.push(r.inbox);
    return names;
  }

  private unreadIn(msgs: MessageSummary[]): number {
    const rs = this.deps.readState();
    return msgs.filter((m) => rs.isUnread(m)).length;
  }

  async domainChildren(domain: string): Promise<TreeNode[]> {
    const data = await this.loadDomain(domain);
    const nodes: TreeNode[] = [];
    if (data.error) nodes.push(errorNode(`domain:${domain}`, data.error));
    for (const inbox of this.inboxNames(domain, data.msgs)) nodes.push(this.inboxNode(domain, inbox, data));
    return nodes;
  }

  async inboxChildren(domain: string, inbox: string): Promise<TreeNode[]> {
    const key = inboxKey({ domain, inbox });
    let data = this.inboxData.get(key);
    if (!data) {
      try {
        data = await this.fetchPage(domain, inbox, undefined);
        this.inboxData.set(key, data);
      } catch (e) {
        return [errorNode(`inbox:${key}`, e)];
      }
    }
    return this.inboxNodes(domain, inbox, data);
  }

  private inboxNodes(domain: string, inbox: string, data: InboxData): TreeNode[] {
    const rs = this.deps.readState();
    const phone = isPhoneInbox(inbox);
    if (data.msgs.length === 0) {
      const smtp = this.deps.smtp?.();
      const where =
        phone || domain === PRIVATE_DOMAIN
          ? 'Inject a test message or send one to it.'
          : smtp
            ? `Send mail to ${inbox}@${domain} (SMTP ${smtp.host}:${smtp.port}) or inject a test message.`
            : `Send mail to ${inbox}@${domain} or inject a test message.`;
      return [{ kind: 'empty', id: `empty:${domain}/${inbox}`, domain, inbox, message: `No messages yet. ${where}` }];
    }
    const nodes: TreeNode[] = data.msgs.map((m) => ({
      kind: 'message' as const,
      id: `message:${domain}/${inbox}/${m.id}`,
      domain,
      inbox,
      summary: m,
      unread: rs.isUnread(m),
      phone,
      ...this.codeOf(m),
    }));
    if (data.more && data.pages < MAX_PAGES) nodes.push({ kind: 'loadMore', id: `more:${domain}/${inbox}`, domain, inbox });
    return nodes;
  }

  private async fetchPage(domain: string, inbox: string, prev: InboxData | undefined, signal?: AbortSignal): Promise<InboxData> {
    const api = await this.deps.api();
    const params = prev?.cursor ? { limit: PAGE_SIZE, cursor: prev.cursor } : { limit: PAGE_SIZE, skip: prev?.msgs.length ?? 0 };
    const listing = await api.listInbox(domain, inbox, params, { signal });
    const seen = new Set(prev?.msgs.map((m) => m.id));
    const fresh = listing.msgs.filter((m) => !seen.has(m.id));
    const msgs = [...(prev?.msgs ?? []), ...fresh].sort(byNewest);
    // A server that pages by cursor says so; one that does not has more when the page was full.
    const more = listing.cursor !== undefined ? true : listing.msgs.length >= PAGE_SIZE && fresh.length > 0;
    return { msgs, cursor: listing.cursor, more, pages: (prev?.pages ?? 0) + 1 };
  }

  /** Appends the next page of an inbox. Throws on failure (the command reports it). */
  async loadMore(ref: InboxRef, signal?: AbortSignal): Promise<number> {
    const key = inboxKey(ref);
    const prev = this.inboxData.get(key);
    if (!prev) {
      this.inboxData.set(key, await this.fetchPage(ref.domain, ref.inbox, undefined, signal));
      this.changeEmitter.fire({ domain: ref.domain, inbox: ref.inbox });
      return this.inboxData.get(key)!.msgs.length;
    }
    const next = await this.fetchPage(ref.domain, ref.inbox, prev, signal);
    this.inboxData.set(key, next);
    this.changeEmitter.fire({ domain: ref.domain, inbox: ref.inbox });
    return next.msgs.length - prev.msgs.length;
  }

  /** Adds messages announced by the stream or found by polling. Returns those that were new. */
  applyNew(domain: string, msgs: MessageSummary[]): MessageSummary[] {
    const data = this.domainData.get(domain);
    if (!data) {
      // Not loaded yet: the first read will list them; they are still news.
      this.changeEmitter.fire(undefined);
      return msgs;
    }
    const known = new Set(data.msgs.map((m) => m.id));
    const fresh = msgs.filter((m) => !known.has(m.id));
    if (fresh.length === 0) return [];
    this.noteFirstArrivals(domain, data.msgs, fresh);
    data.msgs = [...fresh, ...data.msgs].sort(byNewest).slice(0, Math.max(RECENT_LIMIT, data.msgs.length));
    for (const m of fresh) {
      const ib = this.inboxData.get(inboxKey({ domain, inbox: m.to.toLowerCase() }));
      if (ib && !ib.msgs.some((x) => x.id === m.id)) ib.msgs = [m, ...ib.msgs].sort(byNewest);
    }
    this.changeEmitter.fire({ domain });
    return fresh;
  }

  /** Removes messages deleted elsewhere (stream `delete` events, or our own deletes). */
  applyDelete(domain: string, ids: string[]): void {
    const gone = new Set(ids);
    const data = this.domainData.get(domain);
    if (data) data.msgs = data.msgs.filter((m) => !gone.has(m.id));
    for (const [key, ib] of this.inboxData) if (key.startsWith(`${domain}/`)) ib.msgs = ib.msgs.filter((m) => !gone.has(m.id));
    // The whole tree: the last message gone leaves an empty tree, whose welcome view says so.
    this.changeEmitter.fire(undefined);
  }

  /** Forgets an inbox's messages after it was cleared. */
  applyClear(ref: InboxRef): void {
    const data = this.domainData.get(ref.domain);
    if (data) data.msgs = data.msgs.filter((m) => m.to.toLowerCase() !== ref.inbox);
    this.inboxData.set(inboxKey(ref), { msgs: [], more: false, pages: 1 });
    this.changeEmitter.fire(undefined);
  }

  /**
   * Re-reads the recent mail of every shown domain (polling when there is no stream).
   * Returns the messages not seen before. Errors become error nodes at the next read.
   */
  async poll(domains: string[] | undefined = this.domainList): Promise<MessageSummary[]> {
    const fresh: MessageSummary[] = [];
    for (const domain of domains ?? []) {
      const before = this.domainData.get(domain);
      if (!before) continue; // never expanded: nothing to compare with yet
      const known = new Set(before.msgs.map((m) => m.id));
      const after = await this.loadDomain(domain, true);
      if (after.error) {
        this.changeEmitter.fire(undefined);
        continue;
      }
      const news = after.msgs.filter((m) => !known.has(m.id));
      this.noteFirstArrivals(domain, before.msgs, news);
      const goneIds = before.msgs.filter((m) => !after.msgs.some((x) => x.id === m.id)).map((m) => m.id);
      for (const m of news) {
        const ib = this.inboxData.get(inboxKey({ domain, inbox: m.to.toLowerCase() }));
        if (ib && !ib.msgs.some((x) => x.id === m.id)) ib.msgs = [m, ...ib.msgs].sort(byNewest);
      }
      if (goneIds.length > 0) this.applyDelete(domain, goneIds);
      if (before.error) this.changeEmitter.fire(undefined);
      else if (news.length > 0) this.changeEmitter.fire({ domain });
      fresh.push(...news);
    }
    return fresh;
  }

  /** Domains currently shown (after the first read). */
  get shownDomains(): string[] {
    return this.domainList ?? [];
  }

  /** Every unread message known to the tree. */
  unreadCount(): number {
    const rs = this.deps.readState();
    const ids = new Set<string>();
    for (const d of this.domainData.values()) for (const m of d.msgs) if (rs.isUnread(m)) ids.add(m.id);
    for (const ib of this.inboxData.values()) for (const m of ib.msgs) if (rs.isUnread(m)) ids.add(m.id);
    return ids.size;
  }

  /** A known message summary by id. */
  findSummary(id: string): MessageSummary | undefined {
    for (const d of this.domainData.values()) for (const m of d.msgs) if (m.id === id) return m;
    for (const ib of this.inboxData.values()) for (const m of ib.msgs) if (m.id === id) return m;
    return undefined;
  }

  /** Inbox names known for a domain (for pickers). */
  knownInboxes(domain: string): string[] {
    return this.inboxNames(domain, this.domainData.get(domain)?.msgs ?? []);
  }

  private codeOf(m: MessageSummary): { code?: string } {
    const code = m.code ?? this.learnedCodes.get(m.id);
    return code ? { code } : {};
  }

  /**
   * Records the code found in a fetched message (a hosted server's listings carry none), so its
   * row offers Copy One-Time Code and says "has code"; redraws the tree when that changes.
   */
  noteCode(id: string, code: string | undefined): void {
    if (!code || this.learnedCodes.get(id) === code) return;
    if (this.learnedCodes.size >= MAX_LEARNED_CODES) this.learnedCodes.delete(this.learnedCodes.keys().next().value as string);
    this.learnedCodes.set(id, code);
    this.changeEmitter.fire(undefined);
  }

  /** Takes in read marks another window stored; redraws when any changed what is unread here. */
  syncReadState(): void {
    if (this.deps.readState().sync()) this.changeEmitter.fire(undefined);
  }

  /** Tells the tree that read state changed. */
  refreshView(): void {
    this.changeEmitter.fire(undefined);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }
}
