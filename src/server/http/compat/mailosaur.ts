// Mailosaur's API (`--compat`, docs/compat.md "Mailosaur") for the official SDK unchanged:
// - the API key is Test Inbox's API token, sent by the SDK as the HTTP Basic user name; a wrong
//   or missing key is 401;
// - a Mailosaur server ID `<id>` is the domain `<id>.mailosaur.net`: mail sent there over SMTP
//   (or any way Test Inbox catches mail) is that server's;
// - `POST /api/messages/search` (criteria sentFrom, sentTo, subject, body, match) through the one
//   search core (http/api/search.ts runSearch), `GET /api/messages?server=`,
//   `GET /api/messages/{id}` (codes and links from the one core, mime/mailosaurMessage.ts),
//   `DELETE /api/messages/{id}`, `DELETE /api/messages?server=`, `POST /api/devices/otp` (the
//   TOTP core). 200 for GET and POST, 204 for DELETE; errors in Mailosaur's shape
//   (`{type, messages, errors: [{field, detail: [{description}]}]}`).
// SMS, servers, devices kept by name, files, previews and analysis are not served (404).
import { domainProblem, parseMessageId } from '../../../core/ids';
import { searchText, type SearchTerm } from '../../../core/search';
import { base32SecretProblem, DEFAULT_TOTP, totpAt } from '../../../core/totp';
import { responseLifetime } from '../../budget';
import type { ApiContext, Query, Req, Res } from '../api/context';
import { MAX_LIST_LIMIT } from '../api/inboxes';
import { PARSE_COST, readHeld } from '../api/read';
import { runSearch } from '../api/search';
import { basicUserOf, checkToken, type TokenCheck } from '../auth';
import { parseJsonObject, readBody } from '../body';
import { HttpError } from '../errors';
import { prove } from '../exchange';
import { sendJson } from '../respond';
import type { MessageMeta } from '../../store/types';
import type { MailosaurAddress } from '../../mime/mailosaurMessage';

/** The domain a Mailosaur server ID names: `<id>.mailosaur.net`. */
export const MAILOSAUR_DOMAIN_SUFFIX = '.mailosaur.net';
/** Mailosaur's default page size. */
const DEFAULT_ITEMS_PER_PAGE = 50;
/**
 * The SDK's poll cadence while a search with a timeout finds nothing (`x-ms-delay`, ms, a
 * comma-separated pattern whose last value repeats): a local server answers at once, so short.
 */
const POLL_DELAY_PATTERN = '100,200,300,500';

/** The Mailosaur routes (http/table.ts classifies a request to one). */
export type MailosaurRoute =
  | { kind: 'search' }
  | { kind: 'messages' }
  | { kind: 'message'; id: string }
  | { kind: 'otp' }
  | { kind: 'unknown' };

/** The first segments of Mailosaur's API (`/api/<resource>/…`) this server answers, as served or 404. */
const RESOURCES = new Set(['messages', 'devices', 'files', 'servers', 'analysis', 'usage', 'screenshots', 'previews']);

/** The Mailosaur route of a path, or undefined when it is not Mailosaur's. */
export function matchMailosaurRoute(s: readonly string[]): MailosaurRoute | undefined {
  if (s[0] !== 'api' || !RESOURCES.has(s[1] ?? '')) return undefined;
  if (s[1] === 'messages') {
    if (s.length === 2) return { kind: 'messages' };
    if (s.length === 3 && s[2] === 'search') return { kind: 'search' };
    if (s.length === 3) return { kind: 'message', id: s[2] };
  }
  if (s[1] === 'devices' && s.length === 3 && s[2] === 'otp') return { kind: 'otp' };
  return { kind: 'unknown' };
}

/** An error in Mailosaur's shape (the SDK's httpError reads `errors` of a 400). */
class MailosaurError extends HttpError {
  readonly field: string | undefined;
  constructor(status: number, message: string, field?: string) {
    super(status, status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : 'bad_param', message);
    this.field = field;
  }
}

const TYPES: Record<number, string> = { 400: 'invalid_request', 401: 'authentication_error', 403: 'permission_error', 404: 'invalid_request', 405: 'invalid_request' };

function sendMailosaurError(res: Res, err: HttpError): void {
  const field = err instanceof MailosaurError ? err.field : undefined;
  const errors = err.status === 400 ? [{ field: field ?? 'request', detail: [{ description: err.message }] }] : [];
  sendJson(res, err.status, { type: TYPES[err.status] ?? 'api_error', message: err.message, messages: {}, errors }, err.headers);
}

export interface MailosaurDeps {
  readonly ctx: ApiContext;
  readonly apiToken: TokenCheck;
  /** Any error as the API's HttpError (httpApi.ts maps store and budget errors). */
  readonly toHttpError: (what: string, err: unknown) => HttpError;
}

/** Answers one Mailosaur request: the key first (before any body is read), then the route. */
export async function handleMailosaur(deps: MailosaurDeps, req: Req, res: Res, route: MailosaurRoute, query: Query, method: string): Promise<void> {
  try {
    const outcome = checkToken(deps.apiToken, basicUserOf(req.headers.authorization));
    if (outcome !== 'ok') throw new MailosaurError(401, 'Authentication failed, check your API key: it is the Test Inbox API token, sent as the HTTP Basic user name.');
    prove(req);
    await route_(deps.ctx, req, res, route, query, method);
  } catch (e) {
    const err = HttpError.is(e) ? e : deps.toHttpError(`${method} /api (mailosaur)`, e);
    sendMailosaurError(res, err);
  }
}

function allow(method: string, ...allowed: string[]): void {
  if (!allowed.includes(method)) throw new MailosaurError(405, `method ${method} is not allowed here; use ${allowed.join(' or ')}`);
}

async function route_(ctx: ApiContext, req: Req, res: Res, route: MailosaurRoute, query: Query, method: string): Promise<void> {
  switch (route.kind) {
    case 'search':
      allow(method, 'POST');
      return search(ctx, req, res, query);
    case 'messages':
      allow(method, 'GET', 'DELETE');
      if (method === 'DELETE') {
        await ctx.store.clear(serverDomain(query), '*');
        res.writeHead(204, { 'cache-control': 'no-store' }).end();
        return;
      }
      return list(ctx, res, query, []);
    case 'message': {
      allow(method, 'GET', 'DELETE');
      const meta = await messageOf(ctx, route.id);
      if (method === 'DELETE') {
        if (!(await ctx.store.delete(meta.id))) throw notFound();
        res.writeHead(204, { 'cache-control': 'no-store' }).end();
        return;
      }
      const { raw } = await readHeld(ctx, meta, responseLifetime(res), PARSE_COST);
      sendJson(res, 200, await ctx.mime.run({ op: 'mailosaur', raw, meta, server: meta.domain.slice(0, -MAILOSAUR_DOMAIN_SUFFIX.length) }));
      return;
    }
    case 'otp': {
      allow(method, 'POST');
      const body = parseJsonObject(await readBody(req, res, { maxBody: Math.min(ctx.maxBody, 64 * 1024), budget: ctx.budget }));
      const secret = body.sharedSecret;
      if (typeof secret !== 'string') throw new MailosaurError(400, 'sharedSecret is missing: give the base32 shared secret', 'sharedSecret');
      const problem = base32SecretProblem(secret);
      if (problem !== undefined) throw new MailosaurError(400, `sharedSecret: ${problem}`, 'sharedSecret');
      const now = Date.now();
      const { code, seconds_left } = totpAt(secret, DEFAULT_TOTP, now);
      sendJson(res, 200, { code, expires: new Date(Math.ceil(now / 1000) * 1000 + (seconds_left - 1) * 1000).toISOString() });
      return;
    }
    case 'unknown':
      throw new MailosaurError(404, 'Not found: Test Inbox serves Mailosaur\'s messages and devices/otp only (docs/compat.md)');
  }
}

const notFound = (): MailosaurError => new MailosaurError(404, 'Not found, check input parameters.');

/** The domain of `?server=`: `<id>.mailosaur.net`, or a 400 in Mailosaur's shape. */
function serverDomain(query: Query): string {
  const id = query.get('server');
  if (id === null || id === '') throw new MailosaurError(400, 'server is missing: give the server ID (the <id> of <id>.mailosaur.net)', 'server');
  const domain = `${id.toLowerCase()}${MAILOSAUR_DOMAIN_SUFFIX}`;
  if (!/^[a-z0-9-]{1,63}$/i.test(id) || domainProblem(domain) !== undefined) throw new MailosaurError(400, `server ${JSON.stringify(id.slice(0, 100))} is not a server ID (letters, digits and hyphens)`, 'server');
  return domain;
}

/** A message of a Mailosaur server by its ID, or 404. */
async function messageOf(ctx: ApiContext, raw: string): Promise<MessageMeta> {
  const id = raw.toLowerCase();
  if (!parseMessageId(id)) throw notFound();
  const meta = await ctx.store.get(id);
  if (!meta || !meta.domain.endsWith(MAILOSAUR_DOMAIN_SUFFIX)) throw notFound();
  return meta;
}

function readInt(query: Query, name: string, min: number, max: number, fallback: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new MailosaurError(400, `${name} must be a whole number from ${min} to ${max}`, name);
  return n;
}

/** The page, the time and the direction of a list or search. */
function pageOf(query: Query): { limit: number; skip: number; after?: number; sent: boolean } {
  const limit = readInt(query, 'itemsPerPage', 1, MAX_LIST_LIMIT, DEFAULT_ITEMS_PER_PAGE);
  const page = readInt(query, 'page', 0, 1_000_000, 0);
  const rawAfter = query.get('receivedAfter');
  let after: number | undefined;
  if (rawAfter !== null && rawAfter !== '') {
    after = Date.parse(rawAfter);
    if (!Number.isFinite(after)) throw new MailosaurError(400, 'receivedAfter must be a date and time (ISO 8601)', 'receivedAfter');
  }
  const dir = (query.get('dir') ?? '').toLowerCase();
  if (dir !== '' && dir !== 'received' && dir !== 'sent') throw new MailosaurError(400, 'dir must be Sent or Received', 'dir');
  return { limit, skip: page * limit, ...(after !== undefined ? { after } : {}), sent: dir === 'sent' };
}

/** `Name <addr>` or `addr` as Mailosaur's address list. */
function senderOf(from: string): MailosaurAddress[] {
  const m = /^\s*"?(.*?)"?\s*<([^>]*)>\s*$/.exec(from);
  if (m) return [{ name: m[1], email: m[2] }];
  return from === '' ? [] : [{ name: '', email: from.trim() }];
}

/** A message summary (the SDK's MessageSummary) from the index alone. */
function summary(meta: MessageMeta): Record<string, unknown> {
  return {
    id: meta.id,
    type: 'Email',
    server: meta.domain.slice(0, -MAILOSAUR_DOMAIN_SUFFIX.length),
    from: senderOf(meta.from),
    to: [{ name: '', email: `${meta.inbox}@${meta.domain}` }],
    cc: [],
    bcc: [],
    received: new Date(meta.time).toISOString(),
    subject: meta.subject,
    summary: '',
    attachments: 0,
  };
}

/** Runs the terms (each set AND, the sets OR: `match: ANY`) over the server's messages, newest first. */
async function find(ctx: ApiContext, res: Res, query: Query, any: SearchTerm[][]): Promise<MessageMeta[]> {
  const domain = serverDomain(query);
  const page = pageOf(query);
  if (page.sent) return [];
  const base: SearchTerm[] = [{ field: 'domain', value: domain, negated: false }, ...(page.after !== undefined ? [{ field: 'after' as const, value: page.after, negated: false }] : [])];
  const left = new AbortController();
  const leave = (): void => left.abort();
  res.once('close', leave);
  try {
    const sets = any.length === 0 ? [[]] : any;
    if (sets.length === 1) return (await runSearch(ctx, [...base, ...sets[0]], { limit: page.limit, skip: page.skip }, left.signal)).msgs;
    const byId = new Map<string, MessageMeta>();
    for (const terms of sets) for (const m of (await runSearch(ctx, [...base, ...terms], { limit: page.skip + page.limit, skip: 0 }, left.signal)).msgs) byId.set(m.id, m);
    return [...byId.values()].sort((a, b) => b.time - a.time || (a.id < b.id ? 1 : -1)).slice(page.skip, page.skip + page.limit);
  } finally {
    res.off('close', leave);
  }
}

async function list(ctx: ApiContext, res: Res, query: Query, any: SearchTerm[][], extra?: Record<string, string>): Promise<void> {
  const msgs = await find(ctx, res, query, any);
  if (res.destroyed) return;
  sendJson(res, 200, { items: msgs.map(summary) }, extra);
}

const CRITERIA: ReadonlyArray<[string, SearchTerm['field']]> = [
  ['sentFrom', 'from'],
  ['sentTo', 'to'],
  ['subject', 'subject'],
  ['body', 'text'],
];

async function search(ctx: ApiContext, req: Req, res: Res, query: Query): Promise<void> {
  serverDomain(query);
  const body = parseJsonObject(await readBody(req, res, { maxBody: Math.min(ctx.maxBody, 64 * 1024), budget: ctx.budget }));
  const terms: SearchTerm[] = [];
  for (const [key, field] of CRITERIA) {
    const v = body[key];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') throw new MailosaurError(400, `${key} must be a string`, key);
    const value = searchText(v);
    if (value !== '') terms.push({ field, value, negated: false } as SearchTerm);
  }
  const match = body.match === undefined || body.match === null ? 'ALL' : String(body.match).toUpperCase();
  if (match !== 'ALL' && match !== 'ANY') throw new MailosaurError(400, 'match must be ALL or ANY', 'match');
  const sets = terms.length === 0 ? [] : match === 'ALL' ? [terms] : terms.map((t) => [t]);
  await list(ctx, res, query, sets, { 'x-ms-delay': POLL_DELAY_PATTERN });
}
