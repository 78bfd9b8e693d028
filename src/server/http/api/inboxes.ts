// Inbox resources: list (docs/api.md §4.1, with limit/skip/sort/cursor and the `wait` long-poll),
// inject (docs/api.md §4.4) and clear; deliver() is shared with the webhook route.
import { isPhoneInbox, PRIVATE_DOMAIN } from '../../../core/ids';
import { smsSubject } from '../../../core/sms';
import type { DeleteResult, InboxListing, InjectedMessage, InjectionResult } from '../../../core/wire';
import type { ListOptions, MessageMeta, MessageSource } from '../../store/types';
import { readInjectedMessage } from '../body';
import { composedSubject, composeMessage } from '../compose';
import { badRequest } from '../errors';
import { summarize } from '../../mime/render';
import { sendJson, sendJsonList } from '../respond';
import { type ApiContext, type Query, type Req, type Res, readDomain, readId, readInbox } from './context';
import { pollUntil, readWait } from './wait';
import { readInt } from '../query';

/** Default page size of a listing (Mailinator's default). */
export const DEFAULT_LIST_LIMIT = 50;
/** Largest page size: bounds the work and the response of one list call. */
export const MAX_LIST_LIMIT = 500;

export async function listInbox(ctx: ApiContext, res: Res, rawDomain: string, rawInbox: string, query: Query): Promise<void> {
  const domain = readDomain(rawDomain);
  const inbox = readInbox(rawInbox, true);
  const opts = readListOptions(query);
  const wait = readWait(query);
  const first = await ctx.store.list(domain, inbox, opts);
  const result = first.msgs.length > 0 || wait <= 0 ? first : ((await pollUntil(ctx, res, domain, inbox, wait, async () => {
    const next = await ctx.store.list(domain, inbox, opts);
    return next.msgs.length > 0 ? next : undefined;
  })) ?? first);
  const now = Date.now();
  // Up to MAX_LIST_LIMIT summaries, written in slices that take turns (respond.ts sendJsonList).
  const rest: Omit<InboxListing, 'msgs'> & { cursor?: string } = { domain: domain ?? PRIVATE_DOMAIN, to: inbox };
  if (result.nextCursor !== undefined) rest.cursor = result.nextCursor;
  await sendJsonList(res, 'msgs', result.msgs, (m) => summarize(m, now), rest);
}

export async function injectMessage(ctx: ApiContext, req: Req, res: Res, rawDomain: string, rawInbox: string): Promise<void> {
  const domain = readDomain(rawDomain) ?? ctx.defaultDomain;
  const inbox = readInbox(rawInbox, false);
  const msg = await readInjectedMessage(req, res, ctx);
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
  // An SMS (a phone inbox) sent without a subject is named by its first words, as Twilio's routes do.
  const subject = isPhoneInbox(inbox) && (msg.subject === undefined || msg.subject.trim() === '') && msg.text ? smsSubject(msg.text) : msg.subject;
  const raw = await composeMessage({ from: msg.from, subject, text: msg.text, inbox, domain, source });
  // The code is read from the payload: the store need not parse the MIME just composed.
  const [meta] = await ctx.store.add([{ domain, inbox }], raw, source, { subject: composedSubject(subject), text: msg.text ?? '' });
  return meta;
}

export async function clearInbox(ctx: ApiContext, res: Res, rawDomain: string, rawInbox: string): Promise<void> {
  const domain = readDomain(rawDomain);
  const inbox = readInbox(rawInbox, true);
  const count = await ctx.store.clear(domain, inbox);
  const body: DeleteResult = { status: 'ok', count };
  sendJson(res, 200, body);
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
