// Inbox resources: list (docs/api.md §4.1, with limit/skip/sort/cursor and the `wait` long-poll),
// inject (docs/api.md §4.4) and clear; deliver() is shared with the webhook route.
import { ALL_INBOXES, PRIVATE_DOMAIN } from '../../../core/ids';
import type { DeleteResult, InboxListing, InjectedMessage, InjectionResult } from '../../../core/wire';
import type { ListOptions, ListResult, MessageMeta, MessageSource } from '../../store/types';
import { readInjectedMessage } from '../body';
import { composeMessage } from '../compose';
import { badRequest } from '../errors';
import { summarize } from '../render';
import { sendJson } from '../respond';
import { type ApiContext, type Query, type Req, type Res, readDomain, readId, readInbox } from './context';

/** Default page size of a listing (Mailinator's default). */
export const DEFAULT_LIST_LIMIT = 50;
/** Largest page size: bounds the work and the response of one list call. */
export const MAX_LIST_LIMIT = 500;
/** Longest long-poll (`wait`) in seconds; longer values are cut to this (proxies and clients time out around a minute). */
export const MAX_WAIT_SECONDS = 60;

export async function listInbox(ctx: ApiContext, res: Res, rawDomain: string, rawInbox: string, query: Query): Promise<void> {
  const domain = readDomain(rawDomain);
  const inbox = readInbox(rawInbox, true);
  const opts = readListOptions(query);
  const wait = readWait(query);
  let result = ctx.store.list(domain, inbox, opts);
  if (result.msgs.length === 0 && wait > 0 && !ctx.closing()) result = await waitFor(ctx, res, domain, inbox, opts, wait, result);
  const now = Date.now();
  const body: InboxListing & { cursor?: string } = {
    domain: domain ?? PRIVATE_DOMAIN,
    to: inbox,
    msgs: result.msgs.map((m) => summarize(m, now)),
  };
  if (result.nextCursor !== undefined) body.cursor = result.nextCursor;
  sendJson(res, 200, body);
}

/** Long-poll: resolves when a matching message arrives, the wait ends, the client leaves, or close(). */
function waitFor(ctx: ApiContext, res: Res, domain: string | undefined, inbox: string, opts: ListOptions, seconds: number, empty: ListResult): Promise<ListResult> {
  return new Promise((resolve) => {
    let result = empty;
    const finish = () => {
      clearTimeout(timer);
      ctx.store.off('message', onMessage);
      res.off('close', finish);
      ctx.polls.delete(finish);
      resolve(result);
    };
    const onMessage = (meta: MessageMeta) => {
      if (domain !== undefined && meta.domain !== domain) return;
      if (inbox !== ALL_INBOXES && meta.inbox !== inbox) return;
      const next = ctx.store.list(domain, inbox, opts);
      if (next.msgs.length === 0) return;
      result = next;
      finish();
    };
    const timer = setTimeout(finish, seconds * 1000);
    ctx.store.on('message', onMessage);
    res.on('close', finish);
    ctx.polls.add(finish);
  });
}

export async function injectMessage(ctx: ApiContext, req: Req, res: Res, rawDomain: string, rawInbox: string): Promise<void> {
  const domain = readDomain(rawDomain) ?? ctx.defaultDomain;
  const inbox = readInbox(rawInbox, false);
  const msg = await readInjectedMessage(req, ctx.maxBody);
  await deliver(ctx, res, domain, inbox, msg, 'inject');
}

/** Composes the payload into a message, stores it durably, answers with its id. */
export async function deliver(ctx: ApiContext, res: Res, domain: string, inbox: string, msg: InjectedMessage, source: Exclude<MessageSource, 'smtp'>): Promise<void> {
  const meta = await store(ctx, domain, inbox, msg, source);
  const body: InjectionResult = { status: 'ok', id: meta.id };
  sendJson(res, 200, body);
}

/** Composes the payload into a message and stores it durably; no answer is sent. */
export async function store(ctx: ApiContext, domain: string, inbox: string, msg: InjectedMessage, source: Exclude<MessageSource, 'smtp'> = 'webhook'): Promise<MessageMeta> {
  const raw = await composeMessage({ from: msg.from, subject: msg.subject, text: msg.text, inbox, domain, source });
  const [meta] = await ctx.store.add([{ domain, inbox }], raw, source);
  return meta;
}

export async function clearInbox(ctx: ApiContext, res: Res, rawDomain: string, rawInbox: string): Promise<void> {
  const domain = readDomain(rawDomain);
  const inbox = readInbox(rawInbox, true);
  const count = await ctx.store.clear(domain, inbox);
  const body: DeleteResult = { status: 'ok', count };
  sendJson(res, 200, body);
}

function readInt(query: Query, name: string, min: number, max: number, fallback: number): number {
  const v = query.get(name);
  if (v === null || v === '') return fallback;
  if (!/^[0-9]{1,9}$/.test(v)) throw badRequest('bad_param', `${name} must be a whole number from ${min} to ${max}`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest('bad_param', `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

function readListOptions(query: Query): ListOptions {
  const limit = readInt(query, 'limit', 1, MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT);
  const skip = readInt(query, 'skip', 0, Number.MAX_SAFE_INTEGER, 0);
  const sortParam = (query.get('sort') ?? '').toLowerCase();
  let sort: ListOptions['sort'];
  if (sortParam === '' || sortParam === 'descending' || sortParam === 'desc') sort = 'descending';
  else if (sortParam === 'ascending' || sortParam === 'asc') sort = 'ascending';
  else throw badRequest('bad_param', 'sort must be "ascending" or "descending"');
  const cursorParam = query.get('cursor');
  const opts: ListOptions = { limit, skip, sort };
  if (cursorParam !== null && cursorParam !== '') opts.cursor = readId(cursorParam);
  return opts;
}

/** `wait` seconds, cut to MAX_WAIT_SECONDS. */
function readWait(query: Query): number {
  const v = query.get('wait');
  if (v === null || v === '') return 0;
  if (!/^[0-9]{1,9}(\.[0-9]+)?$/.test(v)) throw badRequest('bad_param', `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
  return Math.min(Number(v), MAX_WAIT_SECONDS);
}
