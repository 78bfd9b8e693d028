// Mailpit's API v1 (docs/compat.md): what `mailpit-api`, `cypress-mailpit` and suites that
// fetch `/api/v1/search` then `/api/v1/message/{ID}` call, in Mailpit's shapes: PascalCase
// fields, `messages[0]` the newest, `Attachments` a number in summaries and a list in a
// message, empty lists `[]`, the legacy `count`, and errors as plain text. Every status but
// 200 fails Mailpit's client, deletes included.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MessageMeta } from '../../store/types';
import { StoreError } from '../../store/errors';
import { readBody } from '../body';
import { responseLifetime } from '../../budget';
import { contentDisposition, safeContentType } from '../api/messages';
import { PARSE_COST, RAW_COST, readHeld } from '../api/read';
import { sendBytes, sendJson } from '../respond';
import { type CompatDeps, CompatError, countAll, intParam, iso, mapPage, MAX_PAGE, metaOf, parsedOf, searchMetas, sendEmpty, sendText } from './common';
import { compatId } from './ids';
import type { CompatAttachment, CompatParsed } from '../../mime/compatParse';
import { CompatQueryError, type MailpitQuery, parseMailpitQuery } from './query';
import { COMPAT_BODY_MAX_BYTES, type CompatRoute } from './routes';

/** IDs one request names at most. */
const MAX_IDS = 2000;
const DEFAULT_LIMIT = 50;
/** Raster images: a `/part` of these is shown inline; any other part is sent as an attachment. */
const INLINE_IMAGE = /^image\/(png|jpeg|gif|webp|bmp|avif|x-icon|vnd\.microsoft\.icon)$/i;

function query(text: string): MailpitQuery {
  try {
    return parseMailpitQuery(text, Date.now());
  } catch (e) {
    if (e instanceof CompatQueryError) throw new CompatError(400, e.message);
    throw e;
  }
}

function summary(d: CompatDeps, meta: MessageMeta, p: CompatParsed): Record<string, unknown> {
  return {
    ID: compatId(meta.id),
    MessageID: p.messageId,
    Read: d.reads.isRead(meta.id),
    From: p.from ?? { Name: '', Address: '' },
    To: p.to,
    Cc: p.cc,
    Bcc: p.bcc,
    ReplyTo: p.replyTo,
    Subject: p.subject,
    Created: iso(meta.time),
    Username: '',
    Tags: [],
    Size: meta.size,
    Attachments: p.attachments.filter((a) => !a.inline).length,
    Snippet: p.snippet,
  };
}

function attachment(a: CompatAttachment): Record<string, unknown> {
  return { PartID: a.PartID, FileName: a.FileName, ContentType: a.ContentType, ContentID: a.ContentID, Size: a.Size };
}

function message(meta: MessageMeta, p: CompatParsed): Record<string, unknown> {
  return {
    ID: compatId(meta.id),
    MessageID: p.messageId,
    From: p.from,
    To: p.to,
    Cc: p.cc,
    Bcc: p.bcc,
    ReplyTo: p.replyTo,
    ReturnPath: p.returnPath,
    Subject: p.subject,
    ListUnsubscribe: { Header: p.listUnsubscribe, Links: [], Errors: '', HeaderPost: '' },
    Date: p.date ?? iso(meta.time),
    Tags: [],
    Username: '',
    Text: p.text,
    HTML: p.html,
    Size: meta.size,
    Inline: p.attachments.filter((a) => a.inline).map(attachment),
    Attachments: p.attachments.filter((a) => !a.inline).map(attachment),
  };
}

/** Summaries of a page, each message parsed on a MIME worker; one deleted meanwhile is left out. */
async function summaries(d: CompatDeps, res: ServerResponse, metas: readonly MessageMeta[]): Promise<Array<Record<string, unknown>>> {
  return mapPage(metas, async (meta) => {
    try {
      return summary(d, meta, (await parsedOf(d.ctx, res, meta, false)).parsed);
    } catch (e) {
      if (StoreError.is(e) && e.code === 'not_found') return undefined;
      throw e;
    }
  });
}

/** `q`: the search's query (undefined: the whole list), for the count of its unread matches. */
async function listAnswer(d: CompatDeps, res: ServerResponse, found: { msgs: MessageMeta[]; total: number }, start: number, q?: MailpitQuery): Promise<void> {
  const total = await countAll(d.ctx);
  const messages = await summaries(d, res, found.msgs);
  const unread = Math.max(0, total - d.reads.size);
  // With no read mark every match is unread; else the matches are counted again, unread only.
  const matchesUnread = q === undefined ? unread : d.reads.size === 0 || q.read === false ? found.total : q.read === true ? 0 : (await searchMetas(d, { ...q, read: false }, 0, 0, responseLifetime(res))).total;
  sendJson(res, 200, {
    total,
    unread,
    count: messages.length,
    messages_count: found.total,
    messages_unread: matchesUnread,
    start,
    tags: [],
    messages,
  });
}

/** The message an `{ID}` or `latest` (newest, or the newest match of `?query=`) names; Mailpit's 404 otherwise. */
async function target(d: CompatDeps, id: string, q: URLSearchParams, signal: AbortSignal): Promise<MessageMeta> {
  let meta: MessageMeta | undefined;
  if (id === 'latest') {
    const text = q.get('query') ?? '';
    meta = (await searchMetas(d, query(text), 0, 1, signal)).msgs[0];
  } else {
    meta = await metaOf(d.ctx, id);
  }
  if (!meta) throw new CompatError(404, 'message not found');
  return meta;
}

/** `{"IDs": […]}` (and `Read` for PUT) of a small body, or undefined when there is none. */
async function idsBody(req: IncomingMessage, res: ServerResponse, d: CompatDeps): Promise<{ ids?: string[]; read?: boolean; search?: string } | undefined> {
  const body = await readBody(req, res, { maxBody: COMPAT_BODY_MAX_BYTES, budget: d.ctx.budget });
  if (body.length === 0 || body.toString('utf8').trim() === '') return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(body.toString('utf8'));
  } catch {
    throw new CompatError(400, 'request body is not valid JSON');
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new CompatError(400, 'request body must be a JSON object');
  const { IDs, Read, Search } = obj as { IDs?: unknown; Read?: unknown; Search?: unknown };
  if (Search !== undefined && typeof Search !== 'string') throw new CompatError(400, 'Search must be a search query');
  if (IDs !== undefined && IDs !== null && (!Array.isArray(IDs) || IDs.some((x) => typeof x !== 'string'))) throw new CompatError(400, 'IDs must be a list of message IDs');
  if (Array.isArray(IDs) && IDs.length > MAX_IDS) throw new CompatError(400, `IDs names more than ${MAX_IDS} messages`);
  if (Read !== undefined && typeof Read !== 'boolean') throw new CompatError(400, 'Read must be true or false');
  return { ...(Array.isArray(IDs) && IDs.length > 0 ? { ids: IDs as string[] } : {}), ...(typeof Read === 'boolean' ? { read: Read } : {}), ...(typeof Search === 'string' && Search.trim() !== '' ? { search: Search } : {}) };
}

async function deleteMetas(d: CompatDeps, metas: readonly MessageMeta[]): Promise<void> {
  for (const m of metas) {
    await d.ctx.store.delete(m.id);
    d.reads.forget(m.id);
  }
}

function allowed(method: string, ok: readonly string[]): void {
  if (ok.includes(method)) return;
  const allow = ok.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', ');
  throw new CompatError(405, `method not allowed; use ${allow}`, { allow });
}

export async function mailpit(d: CompatDeps, req: IncomingMessage, res: ServerResponse, route: Extract<CompatRoute, { kind: `mp${string}` }>, method: string, q: URLSearchParams): Promise<void> {
  const ctx = d.ctx;
  const signal = responseLifetime(res);
  switch (route.kind) {
    case 'mpInfo': {
      allowed(method, ['GET']);
      const total = await countAll(ctx);
      const mem = process.memoryUsage();
      sendJson(res, 200, {
        Version: d.version,
        LatestVersion: '',
        Database: '',
        DatabaseSize: 0,
        Messages: total,
        Unread: Math.max(0, total - d.reads.size),
        Tags: {},
        RuntimeStats: { Memory: mem.rss, Uptime: Math.floor(process.uptime()), MessagesDeleted: 0, SMTPAccepted: 0, SMTPAcceptedSize: 0, SMTPRejected: 0, SMTPIgnored: 0 },
      });
      return;
    }
    case 'mpMessages': {
      allowed(method, ['GET', 'PUT', 'DELETE']);
      if (method === 'GET') {
        const start = intParam(q, 'start', 0, Number.MAX_SAFE_INTEGER);
        const found = await searchMetas(d, { terms: [] }, start, intParam(q, 'limit', DEFAULT_LIMIT, MAX_PAGE) || DEFAULT_LIMIT, signal);
        return listAnswer(d, res, found, start);
      }
      const body = await idsBody(req, res, d);
      if (method === 'DELETE') {
        if (body?.ids === undefined) {
          // Everything; no body in the answer: MailHog's client (which shares this route) parses any body as JSON.
          await ctx.store.clear(undefined, '*');
          d.reads.clear();
          return sendEmpty(res);
        }
        const metas = (await Promise.all(body.ids.map((id) => metaOf(ctx, id)))).filter((m): m is MessageMeta => m !== undefined);
        await deleteMetas(d, metas);
        return sendText(res, 200, 'ok');
      }
      // PUT: read marks of the IDs, else of the matches of `Search`, else of every message.
      const read = body?.read ?? false;
      if (body?.ids !== undefined) {
        for (const id of body.ids) {
          const meta = await metaOf(ctx, id);
          if (meta) d.reads.set(meta.id, read);
        }
      } else {
        const search = body?.search;
        if (search === undefined && !read) d.reads.clear();
        else for (const m of (await searchMetas(d, query(search ?? ''), 0, 10_000, signal)).msgs) d.reads.set(m.id, read);
      }
      return sendText(res, 200, 'ok');
    }
    case 'mpSearch': {
      allowed(method, ['GET', 'DELETE']);
      const text = q.get('query');
      if (text === null || text.trim() === '') throw new CompatError(400, 'no search query');
      const mq = query(text);
      if (method === 'DELETE') {
        await deleteMetas(d, (await searchMetas(d, mq, 0, 10_000, signal)).msgs);
        return sendText(res, 200, 'ok');
      }
      const start = intParam(q, 'start', 0, Number.MAX_SAFE_INTEGER);
      return listAnswer(d, res, await searchMetas(d, mq, start, intParam(q, 'limit', DEFAULT_LIMIT, MAX_PAGE) || DEFAULT_LIMIT, signal), start, mq);
    }
    case 'mpMessage': {
      allowed(method, ['GET']);
      const meta = await target(d, route.id, q, signal);
      if (route.view === 'raw') {
        const { raw } = await readHeld(ctx, meta, signal, RAW_COST);
        sendBytes(res, raw, { 'content-type': 'text/plain; charset=utf-8' });
        return;
      }
      if (route.view === 'part') {
        const n = /^[1-9][0-9]{0,5}$/.test(route.part ?? '') ? Number(route.part) - 1 : -1;
        const { raw } = await readHeld(ctx, meta, signal, PARSE_COST);
        const a = n < 0 ? undefined : await ctx.mime.run({ op: 'attachment', raw, n });
        if (!a || 'notice' in a) throw new CompatError(404, 'part not found');
        const type = safeContentType(a.contentType);
        sendBytes(res, a.bytes, { 'content-type': type, 'content-disposition': contentDisposition(a.filename, INLINE_IMAGE.test(type) ? 'inline' : 'attachment') });
        return;
      }
      const { parsed } = await parsedOf(ctx, res, meta, false);
      if (route.view === 'headers') {
        sendJson(res, 200, parsed.headers);
        return;
      }
      // Reading a message marks it read, as in Mailpit.
      d.reads.set(meta.id, true);
      sendJson(res, 200, message(meta, parsed));
      return;
    }
    case 'mpView': {
      allowed(method, ['GET']);
      const meta = await target(d, route.id, q, signal);
      const { parsed } = await parsedOf(ctx, res, meta, false);
      if (route.format === 'txt') {
        sendBytes(res, Buffer.from(parsed.text, 'utf8'), { 'content-type': 'text/plain; charset=utf-8' });
        return;
      }
      if (parsed.html === '') throw new CompatError(404, 'HTML part not found');
      // The message view's policy (http/respond.ts sendBytes): sandboxed, no scripts, no origin, nosniff.
      sendBytes(res, Buffer.from(parsed.html, 'utf8'), { 'content-type': 'text/html; charset=utf-8' });
      return;
    }
  }
}
