// What the language-model tools read, as plain data: the inboxes of the shown domains, the
// newest message of an inbox, the newest one-time code and the newest verification link
// (optionally only after a time, optionally waiting for it). Built on the list and fetch of the
// API alone, so it works against the local server and a hosted one alike. No vscode import.
import { ApiError } from '../../api/errors';
import type { InboxApi, Message } from '../../api/types';
import { htmlToText } from '../../core/html';
import { isPhoneInbox } from '../../core/ids';
import { bestCode } from '../../core/otp';
import type { MessageSummary } from '../../core/wire';
import { messageBodies, messageTexts } from '../messageText';
import { verificationLinkOf, type VerificationLink } from '../verificationLink';

/** Recent messages read per domain to list its inboxes (the tree reads as many). */
export const LIST_LOOK_BACK = 100;
/** Newest messages of an inbox searched for a code or a link. */
export const FIND_LOOK_BACK = 20;
/** Longest wait a tool accepts, in seconds (the list route's own limit). */
export const MAX_TOOL_WAIT_SECONDS = 60;
/** Pause between two reads of an inbox while waiting. */
export const FIND_POLL_MS = 1000;
/** Most characters of a message's text handed to the model (a message view, not an archive). */
export const MAX_TOOL_TEXT = 8000;

export interface InboxInfo {
  inbox: string;
  address: string;
  kind: 'email' | 'sms';
  /** Messages among the domain's most recent LIST_LOOK_BACK. */
  recentMessages: number;
  newest: { id: string; subject: string; from: string; time: string };
}

export interface DomainInboxes {
  domain: string;
  inboxes: InboxInfo[];
  /** Set when the domain could not be read. */
  error?: string;
}

function iso(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

function address(inbox: string, domain: string): string {
  return isPhoneInbox(inbox) || domain === 'private' ? inbox : `${inbox}@${domain}`;
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

export interface MessageRead {
  id: string;
  domain: string;
  inbox: string;
  kind: 'email' | 'sms';
  subject: string;
  from: string;
  to: string;
  time: string;
  code?: string;
  verificationLink?: VerificationLink;
  /** The text a reader sees (the text part, else the HTML's visible text), cut at MAX_TOOL_TEXT. */
  text: string;
  truncated?: true;
}

/** The message as the tools hand it over: its fields, its code and link, its visible text. */
export function readMessage(domain: string, inbox: string, m: Message): MessageRead {
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
  const code = bestCode(messageTexts(m));
  if (code) out.code = code;
  const link = verificationLinkOf(m);
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

export interface FindOptions {
  api: InboxApi;
  domain: string;
  inbox: string;
  /** Only messages received after this time (ms since the epoch). */
  sinceMs?: number;
  /** Wait up to this long for a matching message (0: answer from what is there). */
  waitSeconds?: number;
  signal?: AbortSignal;
  pollMs?: number;
}

export interface Found<T> {
  value: T;
  id: string;
  subject: string;
  from: string;
  time: string;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ApiError('cancelled', 'Cancelled.'));
    const onAbort = () => {
      clearTimeout(t);
      reject(new ApiError('cancelled', 'Cancelled.'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The newest message after `sinceMs` for which `pick` finds something, reading the newest
 * FIND_LOOK_BACK messages; while waiting, the inbox is read again until the wait ends. Each
 * message is fetched at most once. `fromSummary` answers from the listing alone when it can
 * (the local server's summaries carry the code).
 */
async function findNewest<T>(o: FindOptions, pick: (m: Message) => T | undefined, fromSummary?: (s: MessageSummary) => T | undefined): Promise<Found<T> | undefined> {
  const waitMs = Math.min(Math.max(o.waitSeconds ?? 0, 0), MAX_TOOL_WAIT_SECONDS) * 1000;
  const deadline = Date.now() + waitMs;
  const checked = new Set<string>();
  for (;;) {
    const listing = await o.api.listInbox(o.domain, o.inbox, { limit: FIND_LOOK_BACK }, { signal: o.signal });
    const candidates = [...listing.msgs].filter((m) => o.sinceMs === undefined || m.time > o.sinceMs).sort((a, b) => b.time - a.time);
    for (const s of candidates) {
      if (checked.has(s.id)) continue;
      checked.add(s.id);
      const quick = fromSummary?.(s);
      const value = quick ?? pick(await o.api.getMessage(o.domain, o.inbox, s.id, { signal: o.signal }));
      if (value !== undefined) return { value, id: s.id, subject: s.subject, from: s.from, time: iso(s.time) };
    }
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await sleep(Math.min(o.pollMs ?? FIND_POLL_MS, left), o.signal);
  }
}

/** The newest one-time code (after `sinceMs`), found as Copy One-Time Code finds it. */
export function findNewestCode(o: FindOptions): Promise<Found<string> | undefined> {
  return findNewest(o, (m) => bestCode(messageTexts(m)), (s) => s.code);
}

/** The newest verification (else sign-in, else reset) link (after `sinceMs`), as Copy Verification Link finds it. */
export function findNewestVerificationLink(o: FindOptions): Promise<Found<VerificationLink> | undefined> {
  return findNewest(o, verificationLinkOf);
}
