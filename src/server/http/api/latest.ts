// The code and link routes for automated tests (docs/api.md "Codes and links"):
// `…/inboxes/{I}/code` answers the one-time code of the newest message after `since`, and
// `…/inboxes/{I}/link` the link a person must click (core/message.ts linkToClick), both waiting up to
// `wait` for one to arrive; `delete=true` removes the message once read, so that two test
// runs never get the same code.
import { PRIVATE_DOMAIN, parseMessageId } from '../../../core/ids';
import { isLinkKindParam, LINK_KINDS, type LinkKindParam } from '../../../core/clickKinds';
import { type ClickLink, messagesAfter } from '../../../core/message';
import { BudgetError, responseLifetime } from '../../budget';
import { StoreError } from '../../store/errors';
import type { MessageMeta } from '../../store/types';
import { MimeJobDropped } from '../../workers/pool';
import { type HeldMessage, PARSE_COST, readHeld } from './read';
import { badRequest, notFound } from '../errors';
import { sendJson } from '../respond';
import type { Route } from '../routes';
import { type ApiContext, type Query, type Res, readDomain, readInbox } from './context';
import { pollUntil, readWait } from './wait';
import { readBoolean } from '../query';

/** Messages examined per check, newest first: a test's mail is among the latest, and this bounds the work of one request. */
const MAX_SCANNED_MESSAGES = 500;
/**
 * Messages whose bytes one link request reads and parses, of those it found on arrival (mail that
 * arrives while it waits is always read): bounds the work of one request over an inbox full of
 * long newsletters. A test's mail is among the newest; `since` narrows it.
 */
export const MAX_LINK_PARSES = 100;

/** What the link route has parsed, for tests that show what runs (and what stops when the client leaves). */
export const linkScanCounters = { parsed: 0 };

/** A `since` in ms has at most this many digits (ms until the year 33658; longer is not a time). */
const MAX_SINCE_DIGITS = 15;

interface Since {
  /** Messages at or before this time (ms) are never answered. */
  time: number;
  /** The message `since` named, when it named one: it and everything listed after it are excluded. */
  id?: string;
  /** How the 404 names it: ` after …`, or empty when every message counts. */
  label: string;
}

interface Found<T> {
  meta: MessageMeta;
  body: T;
}

export async function latestResource(ctx: ApiContext, res: Res, route: Extract<Route, { kind: 'latest' }>, query: Query): Promise<void> {
  const domain = readDomain(route.domain);
  const inbox = readInbox(route.inbox, false);
  const since = await readSince(ctx, query.get('since'), domain, inbox);
  const wait = readWait(query);
  const remove = readBoolean(query, 'delete');
  const kind = route.what === 'link' ? readLinkKind(query) : 'any';
  /** Messages already read and found without a matching link: not parsed again on the next check. */
  const noLink = new Set<string>();
  /** Ends when the client leaves: no message is read or parsed for it after that. */
  const lifetime = responseLifetime(res);
  /** Messages there at the first check (the bound counts those), and how many of them were parsed. */
  let present: Set<string> | undefined;
  let parsedPresent = 0;
  let cut = false;

  const find = async (meta: MessageMeta): Promise<Record<string, unknown> | undefined> => {
    if (route.what === 'code') return meta.code === undefined ? undefined : { code: meta.code };
    if (noLink.has(meta.id) || lifetime.aborted) return undefined;
    if (present?.has(meta.id)) {
      if (parsedPresent >= MAX_LINK_PARSES) {
        cut = true;
        return undefined;
      }
      parsedPresent++;
    }
    let held: HeldMessage;
    try {
      held = await readHeld(ctx, meta, lifetime, PARSE_COST);
    } catch (e) {
      if (BudgetError.is(e) || StoreError.is(e, 'not_found')) return undefined; // the client left, the server stops, or the message went
      if ((await ctx.store.get(meta.id)) === undefined) return undefined; // deleted meanwhile
      throw e;
    }
    let link: ClickLink | undefined;
    try {
      linkScanCounters.parsed++;
      link = await ctx.mime.run({ op: 'linkToClick', raw: held.raw, kind }, lifetime);
    } catch (e) {
      if (e instanceof MimeJobDropped) return undefined;
      throw e;
    } finally {
      held.release();
    }
    if (!link) {
      noLink.add(meta.id);
      return undefined;
    }
    return { url: link.url, kind: link.kind, text: link.text ?? '' };
  };

  const check = async (): Promise<Found<Record<string, unknown>> | undefined> => {
    const candidates = await after(ctx, domain, inbox, since);
    present ??= new Set(candidates.map((m) => m.id));
    for (const meta of candidates) {
      if (lifetime.aborted) return undefined;
      const body = await find(meta);
      if (!body) continue;
      // Claim by deleting: of two requests that found the same message, only one deletes it.
      if (remove && !(await ctx.store.delete(meta.id))) continue;
      return { meta, body };
    }
    return undefined;
  };

  const found = await pollUntil(ctx, res, domain, inbox, wait, check);
  if (!found) {
    const what = route.what === 'code' ? 'a one-time code' : `a ${LINK_KINDS[kind].join(' or ')} link`;
    const waited = wait > 0 ? ` (waited ${wait} s)` : '';
    const bound = cut ? `; read the newest ${MAX_LINK_PARSES} messages only: pass since to look at fewer` : '';
    throw notFound(`no message with ${what} in inbox ${inbox}@${domain ?? PRIVATE_DOMAIN}${since.label}${waited}${bound}`);
  }
  const { meta, body } = found;
  sendJson(res, 200, { ...body, id: meta.id, time: meta.time, subject: meta.subject, from: meta.from });
}

/** The inbox's messages after `since`, newest first. */
async function after(ctx: ApiContext, domain: string | undefined, inbox: string, since: Since): Promise<MessageMeta[]> {
  const { msgs } = await ctx.store.list(domain, inbox, { limit: MAX_SCANNED_MESSAGES, skip: 0, sort: 'descending' });
  return messagesAfter(msgs, since);
}

async function readSince(ctx: ApiContext, raw: string | null, domain: string | undefined, inbox: string): Promise<Since> {
  if (raw === null || raw === '') return { time: -1, label: '' };
  if (/^[0-9]+$/.test(raw)) {
    if (raw.length > MAX_SINCE_DIGITS) throw badRequest('bad_param', `since ${JSON.stringify(raw.slice(0, 40))} is too large for a time in milliseconds`);
    return { time: Number(raw), label: ` after ${new Date(Number(raw)).toISOString()} (since=${raw})` };
  }
  const id = raw.toLowerCase();
  const parsed = parseMessageId(id);
  const meta = parsed ? await ctx.store.get(id) : undefined;
  if (meta && meta.inbox === inbox && (domain === undefined || meta.domain === domain)) return { time: meta.time, id: meta.id, label: ` after message ${meta.id}` };
  // An id of this inbox whose message is gone (delete=true, retention) still marks its point in
  // time: ids encode their second and a counter that rises across the store (messagesAfter).
  if (parsed && !meta && parsed.inbox === inbox) return { time: parsed.seconds * 1000, id, label: ` after message ${id} (no longer stored)` };
  throw badRequest('bad_param', `since ${JSON.stringify(raw.slice(0, 100))} is neither a time in milliseconds nor the id of a message in inbox ${inbox}`);
}

function readLinkKind(query: Query): LinkKindParam {
  const v = (query.get('kind') ?? 'any').toLowerCase();
  if (!isLinkKindParam(v)) throw badRequest('bad_param', `kind must be one of ${Object.keys(LINK_KINDS).join(', ')}`);
  return v;
}
