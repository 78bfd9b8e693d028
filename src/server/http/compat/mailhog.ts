// MailHog's API (docs/compat.md): `GET /api/v2/messages`, `GET /api/v2/search?kind=`, and the
// deletes of `/api/v1/messages[/{ID}]`, in MailHog's shapes. Its clients decode mail
// themselves, so an item carries the message as written: `Content.Headers` as written,
// `Content.Body` still encoded, `MIME.Parts` split at the boundaries, and `Raw`. The envelope
// is not stored: `From` is the From header's address and `To` the inbox it reached. MailHog's
// clients parse any non-empty answer as JSON, so the deletes answer with no body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseSearchQuery, SearchQueryError } from '../../../core/search';
import { splitAddress } from '../../../core/ids';
import { responseLifetime } from '../../budget';
import { runSearch } from '../api/search';
import { sendJson } from '../respond';
import { StoreError } from '../../store/errors';
import type { MessageMeta } from '../../store/types';
import { type CompatDeps, CompatError, intParam, iso, mapPage, MAX_PAGE, metaOf, parsedOf, sendEmpty } from './common';
import { compatId } from './ids';
import type { CompatRoute } from './routes';

const DEFAULT_LIMIT = 50;

interface Path {
  Relays: null;
  Mailbox: string;
  Domain: string;
  Params: string;
}

function pathOf(address: string): Path {
  const { local, domain = '' } = splitAddress(address);
  return { Relays: null, Mailbox: local, Domain: domain, Params: '' };
}

/** The address of a From header as the index holds it (`Name <addr>` or `addr`). */
function addressOf(from: string): string {
  const m = /<([^<>]*)>\s*$/.exec(from);
  return (m ? m[1] : from).trim();
}

async function item(d: CompatDeps, res: ServerResponse, meta: MessageMeta): Promise<Record<string, unknown> | undefined> {
  let got;
  try {
    got = await parsedOf(d.ctx, res, meta, true);
  } catch (e) {
    if (StoreError.is(e) && e.code === 'not_found') return undefined;
    throw e;
  }
  const content = got.parsed.mailhog;
  if (!content) return undefined;
  const from = addressOf(meta.from);
  const to = `${meta.inbox}@${meta.domain}`;
  return {
    ID: compatId(meta.id),
    From: pathOf(from),
    To: [pathOf(to)],
    Content: { Headers: content.Headers, Body: content.Body, Size: content.Size, MIME: null },
    Created: iso(meta.time),
    MIME: content.MIME,
    Raw: { From: from, To: [to], Data: got.raw.toString('utf8'), Helo: '' },
  };
}

async function answer(d: CompatDeps, res: ServerResponse, found: { msgs: MessageMeta[]; total: number }, start: number): Promise<void> {
  const items = await mapPage(found.msgs, (m) => item(d, res, m));
  sendJson(res, 200, { total: found.total, count: items.length, start, items });
}

export async function mailhog(d: CompatDeps, _req: IncomingMessage, res: ServerResponse, route: Extract<CompatRoute, { kind: `mh${string}` }>, method: string, q: URLSearchParams): Promise<void> {
  const ctx = d.ctx;
  const start = intParam(q, 'start', 0, Number.MAX_SAFE_INTEGER);
  const limit = intParam(q, 'limit', DEFAULT_LIMIT, MAX_PAGE) || DEFAULT_LIMIT;
  switch (route.kind) {
    case 'mhMessages': {
      if (method !== 'GET') throw new CompatError(405, 'method not allowed; use GET', { allow: 'GET, HEAD' });
      const r = await ctx.store.list(undefined, '*', { limit, skip: start, sort: 'descending' });
      return answer(d, res, { msgs: r.msgs, total: r.total }, start);
    }
    case 'mhSearch': {
      if (method !== 'GET') throw new CompatError(405, 'method not allowed; use GET', { allow: 'GET, HEAD' });
      const kind = q.get('kind');
      const text = (q.get('query') ?? '').replace(/"/g, ' ').replace(/\s+/g, ' ').trim();
      if (kind !== 'from' && kind !== 'to' && kind !== 'containing') throw new CompatError(400, 'kind must be from, to or containing');
      if (text === '') return answer(d, res, { msgs: [], total: 0 }, start);
      let terms;
      try {
        terms = parseSearchQuery(kind === 'containing' ? `"${text}"` : `${kind}:"${text}"`, Date.now());
      } catch (e) {
        if (e instanceof SearchQueryError) throw new CompatError(400, e.message);
        throw e;
      }
      return answer(d, res, await runSearch(ctx, terms, { skip: start, limit }, responseLifetime(res)), start);
    }
    case 'mhMessage': {
      if (method !== 'DELETE') throw new CompatError(405, 'method not allowed; use DELETE', { allow: 'DELETE' });
      const meta = await metaOf(ctx, route.id);
      if (!meta || !(await ctx.store.delete(meta.id))) return sendEmpty(res, 404);
      d.reads.forget(meta.id);
      return sendEmpty(res);
    }
  }
}
