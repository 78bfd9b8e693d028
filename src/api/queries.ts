// The client's queries, one of each, for every surface that reads through the API: the test
// library and the CLI, the language-model tools, the MCP tools, the editor's Wait for Next Code.
// The answers come from core/message.ts (the same functions the server runs); this module adds
// what a client needs around them: which inboxes have mail, the newest message as plain data,
// `since: "now"` resolved on the SERVER's clock, and one wait for the next matching message.
// No vscode import; cancellation is an AbortSignal.
import { htmlToText } from '../core/html';
import { isPhoneInbox, PRIVATE_DOMAIN } from '../core/ids';
import { isLinkKindParam, LINK_KINDS, type LinkKindParam } from '../core/clickKinds';
import { type ClickLink, codeOf, contentOf, linkToClick, messageBodies, messagesAfter, type SincePoint } from '../core/message';
import { sleep as sleepFor } from '../core/sleep';
import type { MessageSummary } from '../core/wire';
import { ApiError } from './errors';
import type { InboxApi } from './types';
import type { Message } from '../core/wire';

/** Recent messages read per domain to list its inboxes (the tree reads as many). */
export const LIST_LOOK_BACK = 100;
/** Newest messages of an inbox looked at for a code or a link (list path). */
const FIND_LOOK_BACK = 50;
/** Longest wait one tool call accepts, in seconds (the list route's own limit). */
export const MAX_TOOL_WAIT_SECONDS = 60;
/** Pause between two listings when the server cannot long-poll (a hosted service counts calls). */
const POLL_MS = 2000;
/** Longest single long poll: the server's own limit (MAX_WAIT_SECONDS of server/http/api/wait.ts). */
const MAX_LONG_POLL_MS = 60_000;
/** Most characters of a message's text handed to a model (a message view, not an archive). */
const MAX_TOOL_TEXT = 8000;

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

function address(inbox: string, domain: string): string {
  return isPhoneInbox(inbox) || domain === PRIVATE_DOMAIN ? inbox : `${inbox}@${domain}`;
}

interface InboxInfo {
  inbox: string;
  address: string;
  kind: 'email' | 'sms';
  /** Messages among the domain's most recent LIST_LOOK_BACK. */
  recentMessages: number;
  newest: { id: string; subject: string; from: string; time: string };
}

interface DomainInboxes {
  domain: string;
  inboxes: InboxInfo[];
  /** Set when the domain could not be read. */
  error?: string;
}

/** The inboxes with recent mail in each domain, newest activity first. */
export async function listInboxes(api: InboxApi, domains: string[], signal?: AbortSignal): Promise<DomainInboxes[]> {
  const out: DomainInboxes[] = [];
  for (const domain of domains) {
    try {
      const listing = await api.listInbox(domain, '*', { limit: LIST_LOOK_BACK }, { signal });
      const byInbox = new Map<string, MessageSummary[]>();
      for (const m of [...listing.msgs].sort((a, b) => b.time - a.time)) {
        const list = byInbox.get(m.to) ?? [];
        list.push(m);
        byInbox.set(m.to, list);
      }
      out.push({
        domain,
        inboxes: [...byInbox].map(([inbox, msgs]) => ({
          inbox,
          address: address(inbox, domain),
          kind: isPhoneInbox(inbox) ? 'sms' : 'email',
          recentMessages: msgs.length,
          newest: { id: msgs[0].id, subject: msgs[0].subject, from: msgs[0].from, time: iso(msgs[0].time) },
        })),
      });
    } catch (e) {
      if (ApiError.is(e, 'cancelled')) throw e;
      out.push({ domain, inboxes: [], error: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

interface MessageRead {
  id: string;
  domain: string;
  inbox: string;
  kind: 'email' | 'sms';
  subject: string;
  from: string;
  to: string;
  time: string;
  code?: string;
  verificationLink?: ClickLink;
  /** The text a reader sees (the text part, else the HTML's visible text), cut at MAX_TOOL_TEXT. */
  text: string;
  truncated?: true;
}

/** The message as the tools hand it over: its fields, its code and link, its visible text. */
function readMessage(domain: string, inbox: string, m: Message): MessageRead {
  const bodies = messageBodies(m);
  const full = bodies.text?.trim() ? bodies.text : bodies.html ? htmlToText(bodies.html) : '';
  const out: MessageRead = {
    id: m.id,
    domain,
    inbox,
    kind: m.kind,
    subject: m.subject,
    from: m.kind === 'email' ? m.fromfull || m.from : m.fromfull,
    to: m.to,
    time: iso(m.time),
    text: full.length > MAX_TOOL_TEXT ? full.slice(0, MAX_TOOL_TEXT) : full,
  };
  const content = contentOf(m);
  const code = codeOf(content);
  if (code) out.code = code;
  const link = linkToClick(content);
  if (link) out.verificationLink = link;
  if (full.length > MAX_TOOL_TEXT) out.truncated = true;
  return out;
}

/** The newest message of an inbox, or undefined when it has none. */
export async function newestMessage(api: InboxApi, domain: string, inbox: string, signal?: AbortSignal): Promise<MessageRead | undefined> {
  const listing = await api.listInbox(domain, inbox, { limit: 1 }, { signal });
  const newest = [...listing.msgs].sort((a, b) => b.time - a.time)[0];
  if (!newest) return undefined;
  return readMessage(domain, inbox, await api.getMessage(domain, inbox, newest.id, { signal }));
}

/** Where messages start to count: `'now'` (the server's clock), a time in ms, a Date, or a message id. */
type Since = 'now' | number | Date | string;

/** A `since` as given, checked: 'now', a time in ms, or a message id. */
type SinceRef = 'now' | { time: number } | { id: string };

/** Reads a `since` of any surface (option, flag, tool input); an `invalid_input` error naming the problem. */
function parseSince(since: unknown): SinceRef | undefined {
  const bad = (got: string): never => {
    throw new ApiError('invalid_input', `since must be 'now', a time in ms, a Date or a message id (got ${got})`, { field: 'since' });
  };
  if (since === undefined || since === null) return undefined;
  if (since === 'now') return 'now';
  if (since instanceof Date) {
    const t = since.getTime();
    return Number.isSafeInteger(t) && t >= 0 ? { time: t } : bad('an invalid Date');
  }
  if (typeof since === 'number') return Number.isSafeInteger(since) && since >= 0 ? { time: since } : bad(String(since));
  if (typeof since !== 'string') return bad(typeof since);
  if (/^[0-9]{1,15}$/.test(since)) return { time: Number(since) };
  if (since.trim() === '') return bad('an empty string');
  return { id: since };
}

/** Which inbox a query reads, and how to reach it. */
interface Target {
  api: InboxApi;
  domain: string;
  inbox: string;
  /** A Test Inbox server (its code and link routes, `wait=`, its clock in /healthz); false for a hosted service. */
  testInbox: boolean;
  signal?: AbortSignal;
}

/**
 * `since` as a point on the server's timeline. `'now'` is the server's time, never the
 * client's: a Test Inbox server's clock (`/healthz` `now`); on a hosted service, the newest
 * message the inbox holds now (every message listed after it counts; none when it is empty).
 */
async function resolveSince(t: Target, since: Since | SinceRef | undefined): Promise<SincePoint | { id: string } | undefined> {
  const ref = typeof since === 'object' && !(since instanceof Date) ? since : parseSince(since);
  if (ref !== 'now') return ref;
  if (t.testInbox) {
    const health = await t.api.health({ signal: t.signal });
    // A message stamped in the millisecond the server answered was there before the answer; a
    // fresh one comes after the client read it, so later.
    if (health.now !== undefined) return { time: health.now };
  }
  const { msgs } = await t.api.listInbox(t.domain, t.inbox, { limit: 1, sort: 'descending' }, { signal: t.signal });
  const newest = msgs[0];
  return newest === undefined ? undefined : { time: newest.time, id: newest.id };
}

export interface FindOptions extends Target {
  since?: Since | SinceRef;
  /** How long to wait for a match, in ms: 0 answers from what is there; Infinity waits until cancelled. */
  waitMs?: number;
  /** Delete the message once found; of two waiters that find it, only one gets it. */
  delete?: boolean;
  /** Pause between two listings when the server cannot long-poll (default POLL_MS). */
  pollMs?: number;
  /**
   * Called for each message after `since` without a match. Given, the inbox is listed and each
   * new message read here (long-polled on a Test Inbox server) instead of asking its code or
   * link route, which does not say what it skipped.
   */
  onSkipped?(summary: MessageSummary): void;
  /** Called once `since` is resolved: from here on a message counts. */
  onWaiting?(): void;
  /** The client's clock, for deadlines only (tests skew it; `since: 'now'` never reads it). */
  clock?: () => number;
}

export interface Found<T> {
  value: T;
  id: string;
  /** When the server received it (ms, the server's clock). */
  time: number;
  subject: string;
  from: string;
}

/** What a find looks for: the answer of core/message.ts, from a summary (when the server put it there) or a fetched message. */
interface Want<T> {
  route(o: FindOptions, since: string | number | undefined, waitSeconds: number): Promise<Found<T>>;
  fromSummary?(s: MessageSummary, testInbox: boolean): T | undefined | null;
  fromMessage(m: Message): T | undefined;
}

/** The one-time code of the newest message after `since`, waiting up to `waitMs` for one. */
export function findCode(o: FindOptions): Promise<Found<string> | undefined> {
  return find(o, {
    route: async (f, since, wait) => {
      const r = await f.api.getCode(f.domain, f.inbox, { since, wait, delete: f.delete === true }, { signal: f.signal });
      return { value: r.code, id: r.id, time: r.time, subject: r.subject, from: r.from };
    },
    // A Test Inbox server's summary carries the code its ingest found (core/message.ts codeOf): no code there is no code.
    fromSummary: (s, testInbox) => (s.code !== undefined ? s.code : testInbox ? null : undefined),
    fromMessage: (m) => codeOf(contentOf(m)),
  });
}

/** The link a person must click (of `kind`, default any: verify, else sign-in, else reset) in the newest message after `since` that has one. */
export function findLink(o: FindOptions & { kind?: LinkKindParam }): Promise<Found<ClickLink> | undefined> {
  const kind = o.kind ?? 'any';
  if (!isLinkKindParam(kind)) throw new ApiError('invalid_input', `kind must be one of ${Object.keys(LINK_KINDS).join(', ')} (got ${JSON.stringify(kind)})`, { field: 'kind' });
  return find(o, {
    route: async (f, since, wait) => {
      const r = await f.api.getLink(f.domain, f.inbox, { since, wait, delete: f.delete === true, kind }, { signal: f.signal });
      const value: ClickLink = r.text ? { url: r.url, text: r.text, kind: r.kind as ClickLink['kind'] } : { url: r.url, kind: r.kind as ClickLink['kind'] };
      return { value, id: r.id, time: r.time, subject: r.subject, from: r.from };
    },
    fromMessage: (m) => linkToClick(contentOf(m), kind),
  });
}

/** Resolves after `ms`, or rejects with ApiError `cancelled` when `signal` aborts first (core/sleep.ts). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, signal, () => new ApiError('cancelled', 'Cancelled.'));
}

/** The one wait: the server's route when it has one (it answers with the same rule), else list, read and pick here. */
async function find<T>(o: FindOptions, want: Want<T>): Promise<Found<T> | undefined> {
  const clock = o.clock ?? Date.now;
  const waitMs = Math.max(0, o.waitMs ?? 0);
  const deadline = clock() + waitMs;
  const since = await resolveSince(o, o.since);
  o.onWaiting?.();
  return o.testInbox && !o.onSkipped ? viaRoutes(o, want, since, deadline, clock) : viaList(o, want, since, deadline, clock);
}

async function viaRoutes<T>(o: FindOptions, want: Want<T>, since: SincePoint | { id: string } | undefined, deadline: number, clock: () => number): Promise<Found<T> | undefined> {
  const param = since === undefined ? undefined : since.id ?? (since as SincePoint).time;
  for (;;) {
    const polled = clock();
    const waitMs = Math.max(0, Math.min(deadline - polled, MAX_LONG_POLL_MS));
    try {
      return await want.route(o, param, waitMs / 1000);
    } catch (e) {
      // 404 with a JSON message: nothing arrived during this poll.
      if (!ApiError.is(e, 'not_found') || e.serverMessage === undefined) throw e;
    }
    const now = clock();
    if (now >= deadline) return undefined;
    // Answered well before its wait (a server stopping): pause instead of asking again at once.
    if (now - polled < waitMs / 2) await sleep(Math.min(o.pollMs ?? POLL_MS, deadline - now), o.signal);
  }
}

async function viaList<T>(o: FindOptions, want: Want<T>, since: SincePoint | { id: string } | undefined, deadline: number, clock: () => number): Promise<Found<T> | undefined> {
  const checked = new Set<string>();
  let longPoll = o.testInbox;
  for (;;) {
    const { msgs } = await o.api.listInbox(o.domain, o.inbox, { limit: FIND_LOOK_BACK }, { signal: o.signal });
    const newestFirst = [...msgs].sort((a, b) => b.time - a.time);
    for (const s of messagesAfter(newestFirst, pointOf(newestFirst, since))) {
      if (checked.has(s.id)) continue;
      checked.add(s.id);
      const quick = want.fromSummary?.(s, o.testInbox);
      const value = quick === null ? undefined : quick ?? want.fromMessage(await o.api.getMessage(o.domain, o.inbox, s.id, { signal: o.signal }));
      if (value === undefined) {
        o.onSkipped?.(s);
        continue;
      }
      if (o.delete) {
        try {
          await o.api.deleteMessage(o.domain, o.inbox, s.id, { signal: o.signal });
        } catch (e) {
          if (ApiError.is(e, 'not_found')) continue; // another waiter claimed it
          throw e;
        }
      }
      return { value, id: s.id, time: s.time, subject: s.subject, from: s.from };
    }
    const left = deadline - clock();
    if (left <= 0) return undefined;
    if (longPoll) {
      // Wake at the next arrival: ascending after the newest listed message matches only newer mail.
      const seconds = Math.max(1, Math.floor(Math.min(left, MAX_LONG_POLL_MS) / 1000));
      const params = newestFirst[0] ? { sort: 'ascending' as const, cursor: newestFirst[0].id, limit: 1, wait: seconds } : { limit: 1, wait: seconds };
      try {
        await o.api.listInbox(o.domain, o.inbox, params, { signal: o.signal, timeoutMs: (seconds + 15) * 1000 });
      } catch (e) {
        // The cursor message was deleted meanwhile: poll instead.
        if (!ApiError.is(e, 'bad_request') && !ApiError.is(e, 'not_found')) throw e;
        longPoll = false;
      }
    }
    if (!longPoll) await sleep(Math.min(o.pollMs ?? POLL_MS, Math.max(0, deadline - clock())), o.signal);
  }
}

/** The point `since` names in a newest-first listing: a message id is looked up there. */
function pointOf(newestFirst: readonly MessageSummary[], since: SincePoint | { id: string } | undefined): SincePoint | undefined {
  if (since === undefined || 'time' in since) return since as SincePoint | undefined;
  const m = newestFirst.find((s) => s.id === since.id);
  if (!m) throw new ApiError('invalid_input', `since ${JSON.stringify(since.id)} is not the id of one of the inbox's newest ${FIND_LOOK_BACK} messages`, { field: 'since' });
  return { time: m.time, id: m.id };
}
