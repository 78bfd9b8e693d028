// `GET /api/v2/search?q=&limit=&skip=&wait=` (docs/api.md "Search"): the query language is
// core/search.ts; the store applies the terms its index decides (Store.search), and this file
// reads the bodies the other terms need: one message at a time per MIME worker (off the main
// thread), each read within the byte budget, stopping as soon as the client leaves. runSearch()
// is the one search every surface calls (this route, a web UI's own route later).
import { isMetaTerm, matchesAll, parseSearchQuery, type SearchableBody, SearchQueryError, type SearchTerm } from '../../../core/search';
import { BudgetError } from '../../budget';
import type { SearchResponse } from '../../../core/wire';
import type { MessageMeta } from '../../store/types';
import { badRequest } from '../errors';
import { MIME_WORKERS } from '../../workers/pool';
import { summarize } from '../../mime/render';
import { sendJsonList } from '../respond';
import { nextTurn } from '../../slices';
import type { ApiContext, Query, Res } from './context';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from './inboxes';
import { readInt } from '../query';
import { LINK_KINDS } from '../../../core/clickKinds';
import { type HeldMessage, PARSE_COST, readHeld } from './read';
import { readWait } from './wait';

/** Candidates the store hands over at a time while bodies are read. */
const SEARCH_BATCH = 64;
/**
 * Message bodies one search reads at most (newest first, of those its field terms leave): past
 * it the answer says `partial` and counts what was read. Narrow a text search with inbox:,
 * domain: or after: to search further back.
 */
const MAX_BODY_READS = 5000;

/** Counters for tests and the bench: bodies read from the store by every search of this process. */
export const searchCounters = { bodiesRead: 0 };

export interface SearchPage {
  limit: number;
  skip: number;
}

export interface SearchResult {
  msgs: MessageMeta[];
  total: number;
  /** Set when MAX_BODY_READS cut the scan short: `total` then counts the messages read so far. */
  partial?: boolean;
}

/** `q` as terms, or a 400 naming what is wrong with it. */
function readQuery(query: Query, now: number): { q: string; terms: SearchTerm[] } {
  const q = query.get('q');
  if (q === null) throw badRequest('bad_param', 'q is missing: give a query, such as ?q=from:alice or ?q="your code"');
  try {
    return { q, terms: parseSearchQuery(q, now) };
  } catch (e) {
    if (e instanceof SearchQueryError) throw badRequest('bad_param', `bad query: ${e.message}`);
    throw e;
  }
}

export async function searchResource(ctx: ApiContext, res: Res, query: Query): Promise<void> {
  const { q, terms } = readQuery(query, Date.now());
  const page: SearchPage = { limit: readInt(query, 'limit', 1, MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT), skip: readInt(query, 'skip', 0, Number.MAX_SAFE_INTEGER, 0) };
  const wait = readWait(query);
  const left = new AbortController();
  const leave = (): void => left.abort();
  res.once('close', leave);
  try {
    const result = wait > 0 ? await searchAndWait(ctx, terms, page, wait, left.signal) : await runSearch(ctx, terms, page, left.signal);
    if (left.signal.aborted) return;
    const now = Date.now();
    const rest: Omit<SearchResponse, 'msgs'> = { q, total: result.total, ...(result.partial ? { partial: true } : {}) };
    await sendJsonList(res, 'msgs', result.msgs, (m) => summarize(m, now), rest);
  } finally {
    res.off('close', leave);
  }
}

/**
 * The messages every term matches, newest first, and their count. Field terms only: one store
 * call. Otherwise the store's candidates are read a batch at a time and the body terms decided
 * by the index where it can (a word in the subject) and by the body elsewhere.
 */
export async function runSearch(ctx: ApiContext, terms: readonly SearchTerm[], page: SearchPage, signal: AbortSignal): Promise<SearchResult> {
  const metaTerms = terms.filter(isMetaTerm);
  const bodyTerms = terms.filter((t) => !isMetaTerm(t));
  if (bodyTerms.length === 0) {
    const r = await ctx.store.search(metaTerms, { limit: page.limit, skip: page.skip, count: true });
    return { msgs: r.msgs, total: r.total };
  }
  const links = needsLinks(bodyTerms);
  const msgs: MessageMeta[] = [];
  let total = 0;
  let reads = 0;
  let cursor: string | undefined;
  for (;;) {
    // A batch a turn (slices.ts): bodies already cached are matched without any I/O, and twenty
    // body searches at once would otherwise hold the event loop for every message they match.
    await nextTurn();
    if (signal.aborted) return { msgs, total };
    const batch = await ctx.store.search(metaTerms, { limit: SEARCH_BATCH, skip: 0, count: false, ...(cursor === undefined ? {} : { cursor }) });
    const decided = batch.msgs.map((m) => matchesAll(bodyTerms, m));
    const needed = batch.msgs.filter((_, i) => decided[i] === undefined);
    const room = MAX_BODY_READS - reads;
    const bodies = await readBodies(ctx, needed.slice(0, room), links, signal);
    reads += Math.min(needed.length, room);
    for (let i = 0; i < batch.msgs.length; i++) {
      const meta = batch.msgs[i];
      let match = decided[i];
      if (match === undefined) {
        if (!bodies.has(meta.id)) {
          if (signal.aborted || needed.length > room) return { msgs, total, ...(signal.aborted ? {} : { partial: true }) };
          continue; // deleted while the search ran
        }
        const body = bodies.get(meta.id);
        match = body !== undefined && matchesAll(bodyTerms, meta, body) === true;
      }
      if (!match) continue;
      total++;
      if (total > page.skip && msgs.length < page.limit) msgs.push(meta);
    }
    if (batch.nextCursor === undefined) return { msgs, total };
    cursor = batch.nextCursor;
  }
}

/**
 * The searchable bodies of `metas`, MIME_WORKERS at a time: each read from the store only once
 * its bytes fit the byte budget, parsed on a MIME worker. A message deleted meanwhile maps to
 * undefined; one never started because the client left is absent.
 */
async function readBodies(ctx: ApiContext, metas: readonly MessageMeta[], links: boolean, signal: AbortSignal): Promise<Map<string, SearchableBody | undefined>> {
  const out = new Map<string, SearchableBody | undefined>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < metas.length && !signal.aborted) {
      const meta = metas[next++];
      out.set(meta.id, await readBody(ctx, meta, links, signal));
    }
  };
  await Promise.all(Array.from({ length: Math.min(MIME_WORKERS, metas.length) }, lane));
  return out;
}

async function readBody(ctx: ApiContext, meta: MessageMeta, links: boolean, signal: AbortSignal): Promise<SearchableBody | undefined> {
  const cached = ctx.searchBodies.get(meta.id);
  if (cached && (!links || cached.link !== undefined)) return cached;
  let held: HeldMessage;
  try {
    held = await readHeld(ctx, meta, signal, PARSE_COST);
  } catch (e) {
    if (BudgetError.is(e, 'GONE')) return undefined; // the client left while it waited
    if ((await ctx.store.get(meta.id)) === undefined) return undefined; // deleted meanwhile
    throw e;
  }
  const { raw, release } = held;
  try {
    searchCounters.bodiesRead++;
    const body = await ctx.mime.run({ op: 'searchable', raw, linkKinds: links ? LINK_KINDS.any : undefined });
    ctx.searchBodies.set(meta, body);
    return body;
  } finally {
    release();
  }
}

/** Whether a query asks for the links of a body (has:link): classifying them is half the cost of a read, so it is done only then. */
function needsLinks(terms: readonly SearchTerm[]): boolean {
  return terms.some((t) => t.field === 'has' && t.value === 'link');
}

/**
 * A search that, finding nothing, waits up to `seconds` for a message that matches: each new
 * message is matched alone (its body read only when a body term needs it), and the first that
 * matches runs the search again for the answer. The store is watched before the first search,
 * so a message acknowledged while it runs is never missed.
 */
async function searchAndWait(ctx: ApiContext, terms: readonly SearchTerm[], page: SearchPage, seconds: number, signal: AbortSignal): Promise<SearchResult> {
  const arrived: MessageMeta[] = [];
  let wake: (() => void) | undefined;
  let over = false;
  const end = (): void => {
    over = true;
    wake?.();
  };
  const onMessage = (meta: MessageMeta): void => {
    arrived.push(meta);
    wake?.();
  };
  ctx.store.on('message', onMessage);
  signal.addEventListener('abort', end);
  ctx.polls.add(end);
  const timer = setTimeout(end, seconds * 1000);
  try {
    let result = await runSearch(ctx, terms, page, signal);
    while (result.msgs.length === 0 && !over && !ctx.closing()) {
      if (arrived.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      let hit = false;
      for (const meta of arrived.splice(0)) {
        if (signal.aborted) break;
        let match = matchesAll(terms, meta);
        if (match === undefined) {
          const body = await readBody(ctx, meta, needsLinks(terms), signal);
          match = body !== undefined && matchesAll(terms, meta, body) === true;
        }
        if (match) hit = true;
      }
      if (hit && !signal.aborted) result = await runSearch(ctx, terms, page, signal);
    }
    return result;
  } finally {
    clearTimeout(timer);
    ctx.store.off('message', onMessage);
    signal.removeEventListener('abort', end);
    ctx.polls.delete(end);
  }
}
