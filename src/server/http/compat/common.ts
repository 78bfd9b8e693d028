// What the drop-in APIs share (docs/compat.md): their plain-text answers and errors, the reads
// of a message through the one read path (http/api/read.ts, the read budget and the MIME
// workers), the compat ID, paging, and the searches they map onto the one search core.
import type { ServerResponse } from 'node:http';
import { responseLifetime } from '../../budget';
import type { MessageMeta } from '../../store/types';
import type { ApiContext } from '../api/context';
import { PARSE_COST, readHeld } from '../api/read';
import { runSearch } from '../api/search';
import type { TokenCheck } from '../auth';
import { codedError } from '../../../core/errors';
import type { CompatParsed } from '../../mime/compatParse';
import type { ReadMarks } from './reads';
import { storeIdOf } from './ids';
import { wholeNumberParam } from '../query';
import type { MailpitQuery } from './query';

/** What every drop-in handler reads. */
export interface CompatDeps {
  readonly ctx: ApiContext;
  readonly reads: ReadMarks;
  readonly apiToken: TokenCheck;
  /** `--compat-open`: no token on any address. */
  readonly open: boolean;
  /** Whether the server listens on loopback addresses alone (then the drop-in APIs take no token). */
  loopbackOnly(): boolean;
  readonly version: string;
}

/** The codes of a drop-in API's errors: one per status it answers. */
type CompatErrorCode = 'bad_request' | 'unauthorized' | 'not_found' | 'method_not_allowed';

const COMPAT_CODES: Record<number, CompatErrorCode> = { 400: 'bad_request', 401: 'unauthorized', 404: 'not_found', 405: 'method_not_allowed' };

/** A drop-in API's error: its status, a plain-text body (empty: none, for MailHog's clients), and headers. Its code follows from its status. */
export class CompatError extends codedError<CompatErrorCode>('CompatError') {
  constructor(
    readonly status: 400 | 401 | 404 | 405,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(COMPAT_CODES[status], message);
  }
}

export function sendText(res: ServerResponse, status: number, text: string, extra?: Record<string, string>): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': String(Buffer.byteLength(text)),
    ...extra,
  });
  res.end(text);
}

/** 200 with no body: what MailHog's and Inbucket's clients (which parse any body as JSON) and Mailpit's (which reads any text) all accept. */
export function sendEmpty(res: ServerResponse, status = 200): void {
  res.writeHead(status, { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-length': '0' });
  res.end();
}

/** Messages a list or search pages through at most when it filters by read marks. */
const MAX_FILTER_SCAN = 10_000;
/** Largest page a drop-in list answers. */
export const MAX_PAGE = 500;

/** A whole number query parameter within [0, max], or the fallback; a bad one is the peer's 400. */
export function intParam(query: URLSearchParams, name: string, fallback: number, max: number): number {
  const n = wholeNumberParam(query, name);
  if (n === undefined) return fallback;
  if (n === null) throw new CompatError(400, `${name} must be a whole number`);
  return Math.min(n, max);
}

/** The message a compat ID names, or undefined. */
export async function metaOf(ctx: ApiContext, id: string): Promise<MessageMeta | undefined> {
  const storeId = storeIdOf(id);
  return storeId === undefined ? undefined : ctx.store.get(storeId);
}

/** The message parsed on a MIME worker, its bytes held of the read budget while it is read. */
export async function parsedOf(ctx: ApiContext, res: ServerResponse, meta: MessageMeta, mailhog: boolean): Promise<{ parsed: CompatParsed; raw: Buffer }> {
  const { raw, release } = await readHeld(ctx, meta, responseLifetime(res), PARSE_COST);
  try {
    return { parsed: await ctx.mime.run({ op: 'compat', raw, mailhog }), raw };
  } finally {
    // Given back at once, never held to the response's end: a page parses many messages, and
    // shares held until the end by all of them could wait on each other for ever.
    release();
  }
}

/** Every message, newest first, a page of them, and the count. */
async function listAll(ctx: ApiContext, start: number, limit: number): Promise<{ msgs: MessageMeta[]; total: number }> {
  const r = await ctx.store.list(undefined, '*', { limit, skip: start, sort: 'descending' });
  return { msgs: r.msgs, total: r.total };
}

export async function countAll(ctx: ApiContext): Promise<number> {
  return (await ctx.store.list(undefined, '*', { limit: 1, skip: 0, sort: 'descending' })).total;
}

/** A Mailpit query's page, newest first, and its count: the search core for its terms, the read marks for is:read/is:unread. */
export async function searchMetas(d: CompatDeps, q: MailpitQuery, start: number, limit: number, signal: AbortSignal): Promise<{ msgs: MessageMeta[]; total: number }> {
  if (q.nothing) return { msgs: [], total: 0 };
  const ctx = d.ctx;
  const page = async (s: number, l: number): Promise<{ msgs: MessageMeta[]; total: number }> => (q.terms.length === 0 ? listAll(ctx, s, l) : runSearch(ctx, q.terms, { skip: s, limit: l }, signal));
  if (q.read === undefined) return page(start, limit);
  const all = (await page(0, MAX_FILTER_SCAN)).msgs.filter((m) => d.reads.isRead(m.id) === q.read);
  return { msgs: all.slice(start, start + limit), total: all.length };
}

/** Runs `fn` on each item, a few at a time (the MIME pool queues the rest), keeping their order. */
export async function mapPage<T, R>(items: readonly T[], fn: (item: T) => Promise<R | undefined>): Promise<R[]> {
  const out: Array<R | undefined> = await Promise.all(items.map(fn));
  return out.filter((r): r is R => r !== undefined);
}

/** ISO time with milliseconds, as the peers write it. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
