// Turns a stored .eml into the wire shapes of docs/api.md §2: the message summary (2.2, from the
// index only, no MIME parsing), the email message (2.3) and the SMS message (2.4).
//
// Decisions (also in docs/api.md):
// - `headers`: every top-level header under its lowercase name, encoded-words decoded; when a
//   header occurs more than once (Received), the first (topmost) occurrence is kept.
// - `parts`: the text part, then the HTML part, then one part per attachment, each with
//   `headers` {content-type, …}. Text and HTML bodies are decoded strings (charset utf-8,
//   since JSON is UTF-8). Attachment bodies are base64, and their part headers say so with
//   `content-transfer-encoding: base64`.
// - `fromfull` is the sender as the index holds it (`Name <addr>` or `addr`, the same string
//   as the listing's `from`); `from` is the display name, or the address when there is none.
// - SMS (phone inbox): `fromfull` is the sender, `parts` [{body}] with the text whose trailing
//   line breaks are removed (the visible text of the HTML when there is no text part), plus
//   `id` so clients can address the message.
import PostalMime from 'postal-mime';
import { htmlToText } from '../../core/html';
import type { LinkKind } from '../../core/linkKinds';
import { type SearchableBody, searchText } from '../../core/search';
import { isPhoneInbox } from '../../core/ids';
import { kindedLinks, type MessageContent } from '../../core/message';
import type { AttachmentInfo, EmailMessage, EmailPart, MessageSummary, SmsMessage } from '../../core/wire';
import { decodeEncodedWords } from '../store/headers';
import type { MessageMeta } from '../store/types';

/** Parts deeper than this are not parsed (postal-mime default is 256; real mail rarely exceeds 10). */
const MAX_MIME_NESTING = 64;

export type RenderedMessage = EmailMessage | (SmsMessage & { id: string });

function secondsAgo(time: number, now: number): number {
  return Math.max(0, Math.floor((now - time) / 1000));
}

/** docs/api.md §2.2 from the index alone (the list hot path never parses MIME). */
export function summarize(meta: MessageMeta, now: number): MessageSummary {
  return {
    subject: meta.subject,
    domain: meta.domain,
    from: meta.from,
    id: meta.id,
    to: meta.inbox,
    time: meta.time,
    seconds_ago: secondsAgo(meta.time, now),
    ...(meta.code ? { code: meta.code } : {}),
  };
}

/** A parsed message, and when it could be read only in part, a notice saying so for the reader. */
export interface Parsed {
  email: PostalMime.Email;
  notice?: string;
}

/**
 * Parses a stored message. A message that cannot be parsed whole (MIME nested deeper than
 * MAX_MIME_NESTING, a header block past postal-mime's limits, anything else it throws on) is
 * read as far as it can be: its header block alone, with the body kept as plain text so its
 * links can still be found. Never throws: every read view answers with what could be read
 * and the notice, and `raw` always has the whole message.
 */
export async function parse(raw: Buffer): Promise<Parsed> {
  try {
    return { email: await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', maxNestingDepth: MAX_MIME_NESTING }) };
  } catch (e) {
    const notice = `the message could not be read in full (${(e as Error).message}); shown are its headers and its body as plain text; …/raw has the whole message`;
    const end = headerEnd(raw);
    let email: PostalMime.Email;
    try {
      email = await PostalMime.parse(Buffer.concat([raw.subarray(0, end.headers), Buffer.from('\r\n\r\n')]), { attachmentEncoding: 'arraybuffer', maxNestingDepth: 0 });
    } catch {
      email = { headers: [], attachments: [] } as unknown as PostalMime.Email;
    }
    return { email: { ...email, text: raw.subarray(end.body).toString('utf8'), html: undefined, attachments: [] }, notice };
  }
}

/** Where the header block of `raw` ends and its body starts (the whole of it is headers when there is no blank line). */
function headerEnd(raw: Buffer): { headers: number; body: number } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { headers: crlf, body: crlf + 4 };
  if (lf >= 0) return { headers: lf, body: lf + 2 };
  return { headers: raw.length, body: raw.length };
}

/** Email (docs/api.md §2.3) or, for a phone inbox, SMS (docs/api.md §2.4) with `id`; `notice` when it could be read only in part. */
export async function renderMessage(meta: MessageMeta, raw: Buffer, now: number): Promise<RenderedMessage & { notice?: string }> {
  const { email, notice } = await parse(raw);
  const shaped = isPhoneInbox(meta.inbox) ? smsShape(meta, email, now) : emailShape(meta, email, now);
  return notice === undefined ? shaped : { ...shaped, notice };
}

function smsShape(meta: MessageMeta, email: PostalMime.Email, now: number): SmsMessage & { id: string } {
  return {
    fromfull: meta.from,
    subject: email.subject ?? meta.subject,
    parts: [{ body: smsBody(email) }],
    to: meta.inbox,
    time: meta.time,
    seconds_ago: secondsAgo(meta.time, now),
    id: meta.id,
  };
}

/** The text part; an email that reached a phone inbox with HTML only gets the HTML's visible text. */
function smsBody(email: PostalMime.Email): string {
  const text = email.text ?? (email.html !== undefined ? htmlToText(email.html) : '');
  return text.replace(/[\r\n]+$/, '');
}

function emailShape(meta: MessageMeta, email: PostalMime.Email, now: number): EmailMessage {
  const headers: Record<string, string> = {};
  for (const h of email.headers) {
    if (!Object.prototype.hasOwnProperty.call(headers, h.key)) headers[h.key] = decodeEncodedWords(h.value);
  }
  const parts: EmailPart[] = [];
  if (email.text !== undefined) parts.push({ headers: { 'content-type': 'text/plain; charset=utf-8' }, body: email.text });
  if (email.html !== undefined) parts.push({ headers: { 'content-type': 'text/html; charset=utf-8' }, body: email.html });
  email.attachments.forEach((a, n) => {
    const info = attachmentInfo(a, n);
    const partHeaders: Record<string, string> = {
      'content-type': info['content-type'],
      'content-transfer-encoding': 'base64',
    };
    if (info['content-disposition']) partHeaders['content-disposition'] = info['content-disposition'];
    if (info['content-id']) partHeaders['content-id'] = info['content-id'];
    parts.push({ headers: partHeaders, body: Buffer.from(attachmentBytes(a)).toString('base64') });
  });
  const sender = email.from;
  const displayName = sender ? (sender.name || sender.address || '') : '';
  return {
    fromfull: meta.from,
    headers,
    subject: email.subject ?? meta.subject,
    parts,
    from: displayName || meta.from,
    to: meta.inbox,
    id: meta.id,
    time: meta.time,
    seconds_ago: secondsAgo(meta.time, now),
  };
}

export function attachmentBytes(a: PostalMime.Attachment): Uint8Array {
  const c = a.content;
  if (typeof c === 'string') return Buffer.from(c, a.encoding === 'base64' ? 'base64' : 'utf8');
  return c instanceof Uint8Array ? c : new Uint8Array(c);
}

/** File name for an attachment that does not name one: `attachment-<n>` (1-based for people). */
export function fallbackName(n: number): string {
  return `attachment-${n + 1}`;
}

function quoteParam(value: string): string {
  return `"${value.replace(/(["\\])/g, '\\$1').replace(/[\r\n]/g, ' ')}"`;
}

function attachmentInfo(a: PostalMime.Attachment, n: number): AttachmentInfo {
  const filename = a.filename ?? fallbackName(n);
  const info: AttachmentInfo = {
    filename,
    'content-type': a.mimeType || 'application/octet-stream',
    size: attachmentBytes(a).byteLength,
    attachment_id: n,
  };
  if (a.disposition) info['content-disposition'] = `${a.disposition}; filename=${quoteParam(filename)}`;
  if (a.contentId) info['content-id'] = a.contentId;
  return info;
}

/** `…/attachments`: one record per attachment, `attachment_id` its 0-based index; `notice` when the message could be read only in part. */
export async function listAttachments(raw: Buffer): Promise<{ attachments: AttachmentInfo[]; notice?: string }> {
  const { email, notice } = await parse(raw);
  return { attachments: email.attachments.map(attachmentInfo), ...(notice === undefined ? {} : { notice }) };
}

export interface AttachmentContent {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
}

/** `…/attachments/<n>`: the decoded bytes, or the notice of a message read only in part, or undefined when there is no attachment `n`. */
export async function getAttachment(raw: Buffer, n: number): Promise<AttachmentContent | { notice: string } | undefined> {
  const { email, notice } = await parse(raw);
  const a = email.attachments[n];
  if (!a) return notice === undefined ? undefined : { notice };
  return { bytes: attachmentBytes(a), contentType: a.mimeType || 'application/octet-stream', filename: a.filename ?? fallbackName(n) };
}

/** Text and HTML of a message, for the links route; `notice` when it could be read only in part. */
export async function textAndHtml(raw: Buffer): Promise<{ text?: string; html?: string; notice?: string }> {
  const { email, notice } = await parse(raw);
  return { text: email.text, html: email.html, ...(notice === undefined ? {} : { notice }) };
}

/** Characters of a message's text the search reads: far beyond any real message's text, and bounds a hostile one. */
const MAX_SEARCH_TEXT_CHARS = 1_000_000;

/**
 * What the search reads of a message (core/search.ts SearchableBody), from one parse: its text
 * part, or the visible text of its HTML when it has none, folded as the search compares text;
 * whether it has an attachment; with `linkKinds`, whether it has a link of those kinds by the
 * link rule (core/message.ts kindedLinks, as the link route reads it).
 */
export async function searchableOf(raw: Buffer, linkKinds?: readonly LinkKind[]): Promise<SearchableBody> {
  const { email } = await parse(raw);
  const text = email.text ?? (email.html !== undefined ? htmlToText(email.html) : '');
  const body: SearchableBody = { text: searchText(text.slice(0, MAX_SEARCH_TEXT_CHARS)), attachment: email.attachments.length > 0 };
  if (linkKinds) {
    const header = email.headers.find((h) => h.key === 'list-unsubscribe');
    body.link = kindedLinks({ subject: '', text: email.text, html: email.html, listUnsubscribe: header?.value }).some((l) => linkKinds.includes(l.kind));
  }
  return body;
}

/** What the answers of core/message.ts are read from (the link route's linkToClick). */
export async function contentOfRaw(raw: Buffer): Promise<MessageContent> {
  const { email } = await parse(raw);
  const header = email.headers.find((h) => h.key === 'list-unsubscribe');
  const c: MessageContent = { subject: email.subject ?? '' };
  if (email.text !== undefined) c.text = email.text;
  if (email.html !== undefined) c.html = email.html;
  if (header) c.listUnsubscribe = header.value;
  return c;
}
