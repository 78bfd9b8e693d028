// Inbucket's API v1 (docs/compat.md): `/api/v1/mailbox/{name}[/{id}[/source]]` in Inbucket's
// shapes. `{name}` is Inbucket's default mailbox: the local part, lower-cased, without its
// `+tag`, across every domain; a full address names the same mailbox. A mailbox with no mail
// is `[]`, never 404. Listed oldest first, as Inbucket does. `seen` is the read mark Mailpit's
// API shares (reads.ts). Deletes answer `"OK"`, as JSON: Inbucket's client parses every answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { splitAddress } from '../../../core/ids';
import { sendBytes, sendJson } from '../respond';
import { responseLifetime } from '../../budget';
import { RAW_COST, readHeld } from '../api/read';
import type { MessageMeta } from '../../store/types';
import { type CompatDeps, CompatError, iso, metaOf, parsedOf } from './common';
import { compatId } from './ids';
import type { CompatRoute } from './routes';

/** Messages one mailbox lists at most (each inbox keeps 1,000 by default). */
const MAX_MAILBOX = 5000;

/** Inbucket's default mailbox of a name or an address: local part, lower-cased, no `+tag`. */
export function mailboxOf(name: string): string {
  const { local } = splitAddress(name);
  const plus = local.indexOf('+');
  return (plus >= 0 ? local.slice(0, plus) : local).trim().toLowerCase();
}

function header(d: CompatDeps, box: string, meta: MessageMeta): Record<string, unknown> {
  return {
    mailbox: box,
    id: compatId(meta.id),
    from: meta.from,
    to: [`${meta.inbox}@${meta.domain}`],
    subject: meta.subject,
    date: iso(meta.time),
    'posix-millis': meta.time,
    size: meta.size,
    seen: d.reads.isRead(meta.id),
  };
}

/** Every message of a mailbox, oldest first. */
async function mailboxMetas(d: CompatDeps, box: string): Promise<MessageMeta[]> {
  if (box === '') return [];
  const inboxes = (await d.ctx.store.inboxes(undefined)).filter((i) => mailboxOf(i.inbox) === box);
  const out: MessageMeta[] = [];
  for (const i of inboxes) {
    const r = await d.ctx.store.list(i.domain, i.inbox, { limit: MAX_MAILBOX, skip: 0, sort: 'ascending' });
    out.push(...r.msgs);
  }
  out.sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return out.slice(-MAX_MAILBOX);
}

async function messageIn(d: CompatDeps, box: string, id: string): Promise<MessageMeta> {
  const meta = await metaOf(d.ctx, id);
  if (!meta || mailboxOf(meta.inbox) !== box) throw new CompatError(404, 'message not found');
  return meta;
}

export async function inbucket(d: CompatDeps, req: IncomingMessage, res: ServerResponse, route: Extract<CompatRoute, { kind: `ib${string}` }>, method: string): Promise<void> {
  const box = mailboxOf(route.name);
  if (route.kind === 'ibMailbox') {
    if (method === 'GET') {
      sendJson(res, 200, (await mailboxMetas(d, box)).map((m) => header(d, box, m)));
      return;
    }
    if (method !== 'DELETE') throw new CompatError(405, 'method not allowed; use GET or DELETE', { allow: 'GET, HEAD, DELETE' });
    for (const m of await mailboxMetas(d, box)) {
      await d.ctx.store.delete(m.id);
      d.reads.forget(m.id);
    }
    sendJson(res, 200, 'OK');
    return;
  }
  if (route.source) {
    if (method !== 'GET') throw new CompatError(405, 'method not allowed; use GET', { allow: 'GET, HEAD' });
    const meta = await messageIn(d, box, route.id);
    const { raw } = await readHeld(d.ctx, meta, responseLifetime(res), RAW_COST);
    sendBytes(res, raw, { 'content-type': 'text/plain; charset=utf-8' });
    return;
  }
  if (method === 'DELETE') {
    const meta = await messageIn(d, box, route.id);
    if (!(await d.ctx.store.delete(meta.id))) throw new CompatError(404, 'message not found');
    d.reads.forget(meta.id);
    sendJson(res, 200, 'OK');
    return;
  }
  if (method !== 'GET') throw new CompatError(405, 'method not allowed; use GET or DELETE', { allow: 'GET, HEAD, DELETE' });
  const meta = await messageIn(d, box, route.id);
  const { parsed } = await parsedOf(d.ctx, res, meta, false);
  d.reads.set(meta.id, true);
  const base = `http://${req.headers.host ?? 'localhost'}`;
  const id = compatId(meta.id);
  sendJson(res, 200, {
    ...header(d, box, meta),
    seen: true,
    header: parsed.headers,
    body: { text: parsed.text, html: parsed.html },
    attachments: parsed.attachments.map((a) => ({
      filename: a.FileName,
      'content-type': a.ContentType,
      'download-link': `${base}/api/v1/message/${id}/part/${a.PartID}`,
      'view-link': `${base}/api/v1/message/${id}/part/${a.PartID}`,
      md5: a.MD5,
    })),
  });
}
