// waitForCode / waitForLink. Towards a Test Inbox server: its code and link routes, one long
// poll after another until the timeout (the server finds the code at ingest and never answers
// a message at or before `since`). Towards a hosted service, which has no such routes: its
// list and fetch, polled, with the same extraction the extension uses (core/otp.ts,
// core/linkKinds.ts) and the same rule for `since`.
import { ApiError, type Message } from '../api';
import { messageBodies, messageTexts } from '../api/messageText';
import { classifyLinks, type LinkKind } from '../core/linkKinds';
import { bestCode } from '../core/otp';
import type { MessageSummary } from '../core/wire';
import { type Connection, splitInbox, timeoutMs, toTestInboxError } from './connection';
import { type CodeResult, type LinkKindOption, type LinkResult, type LinkOptions, TestInboxError, type WaitOptions } from './types';

/** Longest single long poll: the server's own limit (MAX_WAIT_SECONDS of its wait.ts). */
const MAX_LONG_POLL_MS = 60_000;
/** Pause between two listings of a hosted inbox: a test's mail arrives within seconds, and the hosted API counts calls. */
export const HOSTED_POLL_MS = 2_000;
/** Newest messages of a hosted inbox looked at per listing. */
const HOSTED_WINDOW = 50;

/** The link kinds each `kind` option accepts (the link route's LINK_KIND_PARAM, for the hosted path). */
const KINDS: Record<LinkKindOption, readonly LinkKind[]> = {
  verify: ['verify-email'],
  reset: ['reset-password'],
  login: ['magic-login'],
  any: ['verify-email', 'reset-password', 'magic-login'],
};

/** `since` as the routes take it: ms, or a message id. */
export function sinceParam(since: WaitOptions['since'], now: number): number | string | undefined {
  if (since === undefined) return undefined;
  if (since === 'now') return now;
  if (since instanceof Date) return since.getTime();
  if (typeof since === 'number') {
    if (!Number.isSafeInteger(since) || since < 0) throw new TestInboxError('badInput', `since must be 'now', a time in ms, a Date or a message id (got ${since})`);
    return since;
  }
  if (/^[0-9]+$/.test(since)) return Number(since);
  if (since.trim() === '') throw new TestInboxError('badInput', "since must be 'now', a time in ms, a Date or a message id (got an empty string)");
  return since;
}

type What = { what: 'code' } | { what: 'link'; kind: LinkKindOption };

export function waitForCodeOn(conn: Connection, address: string, o: WaitOptions): Promise<CodeResult> {
  return waitOn(conn, address, o, { what: 'code' }) as Promise<CodeResult>;
}

export function waitForLinkOn(conn: Connection, address: string, o: LinkOptions): Promise<LinkResult> {
  const kind = o.kind ?? 'any';
  if (!Object.prototype.hasOwnProperty.call(KINDS, kind)) throw new TestInboxError('badInput', `kind must be one of ${Object.keys(KINDS).join(', ')} (got ${JSON.stringify(kind)})`);
  return waitOn(conn, address, o, { what: 'link', kind }) as Promise<LinkResult>;
}

async function waitOn(conn: Connection, address: string, o: WaitOptions, w: What): Promise<CodeResult | LinkResult> {
  const started = Date.now();
  const since = sinceParam(o.since, started);
  const budget = timeoutMs(o.timeout);
  const { inbox, domain } = splitInbox(address, conn.domain);
  const deadline = started + budget;
  try {
    const found = (await conn.isTestInbox()) ? await viaRoutes(conn, domain, inbox, since, deadline, o, w) : await viaList(conn, domain, inbox, since, deadline, o, w);
    if (found) return found;
  } catch (e) {
    throw toTestInboxError(e);
  }
  const what = w.what === 'code' ? 'a one-time code' : `a ${w.kind} link`;
  const after = since === undefined ? '' : typeof since === 'number' ? ` after ${new Date(since).toISOString()}` : ` after message ${since}`;
  throw new TestInboxError('timeout', `no message with ${what} arrived in ${inbox}@${domain}${after} within ${Math.round(budget / 100) / 10} s`);
}

async function viaRoutes(conn: Connection, domain: string, inbox: string, since: number | string | undefined, deadline: number, o: WaitOptions, w: What): Promise<CodeResult | LinkResult | undefined> {
  for (;;) {
    const polled = Date.now();
    const waitMs = Math.max(0, Math.min(deadline - polled, MAX_LONG_POLL_MS));
    const params = { since, wait: waitMs / 1000, delete: o.delete === true };
    try {
      return w.what === 'code'
        ? await conn.api.getCode(domain, inbox, params, { signal: o.signal })
        : await conn.api.getLink(domain, inbox, { ...params, kind: w.kind }, { signal: o.signal });
    } catch (e) {
      // 404 with a JSON message: nothing arrived during this poll.
      if (!ApiError.is(e, 'notFound') || e.serverMessage === undefined) throw e;
    }
    const now = Date.now();
    if (now >= deadline) return undefined;
    // Answered well before its wait (a server stopping): pause instead of asking again at once.
    if (now - polled < waitMs / 2) await sleep(Math.min(HOSTED_POLL_MS, deadline - now), o.signal);
  }
}

async function viaList(conn: Connection, domain: string, inbox: string, since: number | string | undefined, deadline: number, o: WaitOptions, w: What): Promise<CodeResult | LinkResult | undefined> {
  /** Messages read and found without what we wait for: not fetched again. */
  const done = new Set<string>();
  for (;;) {
    const { msgs } = await conn.api.listInbox(domain, inbox, { limit: HOSTED_WINDOW, sort: 'descending' }, { signal: o.signal });
    const newestFirst = [...msgs].sort((a, b) => b.time - a.time);
    for (const summary of after(newestFirst, since)) {
      if (done.has(summary.id)) continue;
      const message = await conn.api.getMessage(domain, inbox, summary.id, { signal: o.signal });
      const found = w.what === 'code' ? codeOf(message) : linkOf(message, KINDS[w.kind]);
      if (!found) {
        done.add(summary.id);
        continue;
      }
      if (o.delete) await conn.api.deleteMessage(domain, inbox, summary.id, { signal: o.signal });
      return { ...found, id: summary.id, time: summary.time, subject: summary.subject, from: summary.from };
    }
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await sleep(Math.min(HOSTED_POLL_MS, left), o.signal);
  }
}

/** The summaries (newest first) after `since`: later than a time, or listed before the message it names. */
function after(newestFirst: MessageSummary[], since: number | string | undefined): MessageSummary[] {
  if (since === undefined) return newestFirst;
  if (typeof since === 'number') return newestFirst.filter((m) => m.time > since);
  const i = newestFirst.findIndex((m) => m.id === since);
  if (i < 0) throw new TestInboxError('badInput', `since ${JSON.stringify(since)} is not the id of one of the inbox's newest ${HOSTED_WINDOW} messages`);
  return newestFirst.slice(0, i);
}

function codeOf(m: Message): { code: string } | undefined {
  const code = bestCode(messageTexts(m));
  return code === undefined ? undefined : { code };
}

function linkOf(m: Message, kinds: readonly LinkKind[]): { url: string; kind: string; text: string } | undefined {
  const bodies = messageBodies(m);
  const listUnsubscribe = m.kind === 'email' ? Object.entries(m.headers ?? {}).find(([k]) => k.toLowerCase() === 'list-unsubscribe')?.[1] : undefined;
  const link = classifyLinks({ ...bodies, listUnsubscribe }).find((l) => kinds.includes(l.kind));
  return link && { url: link.url, kind: link.kind, text: link.text ?? '' };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new TestInboxError('cancelled', 'cancelled'));
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new TestInboxError('cancelled', 'cancelled'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
