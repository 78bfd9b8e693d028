// One message: its rendered JSON, raw bytes, links, attachments (list and one), or DELETE.
import { ALL_INBOXES } from '../../../core/ids';
import type { DeleteResult } from '../../../core/wire';
import { badRequest, notFound } from '../errors';
import { sendBytes, sendJson } from '../respond';
import type { Route } from '../routes';
import { responseLifetime } from '../../budget';
import { PARSE_COST, RAW_COST, readHeld } from './read';
import { type ApiContext, type Req, type Res, readDomain, readId, readInbox } from './context';

export async function messageResource(ctx: ApiContext, req: Req, res: Res, route: Extract<Route, { kind: 'message' }>): Promise<void> {
  const domain = readDomain(route.domain);
  const inbox = route.inbox === undefined ? undefined : readInbox(route.inbox, true);
  const id = readId(route.id);
  let attachment = 0;
  if (route.view === 'attachment') {
    if (!/^[0-9]{1,6}$/.test(route.attachment ?? '')) throw badRequest('bad_id', 'attachment id must be a number (the attachment_id of …/attachments)');
    attachment = Number(route.attachment);
  }
  const meta = await ctx.store.get(id);
  const where = inbox === undefined || inbox === ALL_INBOXES ? '' : ` in inbox ${inbox}`;
  if (!meta || (domain !== undefined && meta.domain !== domain) || (inbox !== undefined && inbox !== ALL_INBOXES && meta.inbox !== inbox)) {
    throw notFound(`message ${id} not found${where}`);
  }
  if (req.method === 'DELETE') {
    const removed = await ctx.store.delete(id);
    if (!removed) throw notFound(`message ${id} not found${where}`);
    const body: DeleteResult = { status: 'ok', count: 1 };
    sendJson(res, 200, body);
    return;
  }
  // Held of the byte budget until the response closes (read.ts).
  const { raw } = await readHeld(ctx, meta, responseLifetime(res), route.view === 'raw' ? RAW_COST : PARSE_COST);
  switch (route.view) {
    case 'message':
      sendJson(res, 200, await ctx.mime.run({ op: 'message', raw, meta, now: Date.now() }));
      return;
    case 'raw':
      sendBytes(res, raw, { 'content-type': 'message/rfc822' });
      return;
    case 'links':
      sendJson(res, 200, await ctx.mime.run({ op: 'links', raw }));
      return;
    case 'attachments':
      sendJson(res, 200, await ctx.mime.run({ op: 'attachments', raw }));
      return;
    case 'attachment': {
      const a = await ctx.mime.run({ op: 'attachment', raw, n: attachment });
      if (!a) throw notFound(`message ${id} has no attachment ${attachment}`);
      if ('notice' in a) throw notFound(`message ${id} has no readable attachment ${attachment}: ${a.notice}`);
      sendBytes(res, a.bytes, { 'content-type': safeContentType(a.contentType), 'content-disposition': contentDisposition(a.filename) });
      return;
    }
  }
}

const MIME_TYPE_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

export function safeContentType(type: string): string {
  return MIME_TYPE_RE.test(type) ? type : 'application/octet-stream';
}

/** `attachment` with an ASCII fallback name and the exact UTF-8 name (RFC 6266). */
export function contentDisposition(filename: string, disposition: 'attachment' | 'inline' = 'attachment'): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${disposition}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
