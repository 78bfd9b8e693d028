// What the drop-in APIs read of a stored message (docs/compat.md), made on a MIME worker
// (workers/jobs.ts op `compat`) from the one parse of the read views (mime/render.ts parse):
// plain data the Mailpit, MailHog and Inbucket handlers shape into their peers' answers.
// MailHog's clients decode bodies themselves, so its view is the message as written: header
// lines unfolded but not decoded, bodies still encoded, multipart bodies split at their
// boundaries (mailhogContent).
import { createHash } from 'node:crypto';
import type PostalMime from 'postal-mime';
import { htmlToText } from '../../core/html';
import { attachmentBytes, fallbackName, parse } from './render';

export interface CompatAddress {
  Name: string;
  Address: string;
}

export interface CompatAttachment {
  /** Its number in the read views' attachment list (render.ts getAttachment), plus one. */
  PartID: string;
  FileName: string;
  ContentType: string;
  ContentID: string;
  Size: number;
  MD5: string;
  /** Shown in the body (inline disposition, or a related part): Mailpit's `Inline`. */
  inline: boolean;
}

/** A MailHog content block: its header fields as written, its body still encoded, its parts when multipart. */
export interface MailhogContent {
  Headers: Record<string, string[]>;
  Body: string;
  Size: number;
  MIME: { Parts: MailhogContent[] } | null;
}

export interface CompatParsed {
  messageId: string;
  /** The Date header as an ISO time, when it has one that parses. */
  date?: string;
  from: CompatAddress | null;
  to: CompatAddress[];
  cc: CompatAddress[];
  bcc: CompatAddress[];
  replyTo: CompatAddress[];
  returnPath: string;
  subject: string;
  text: string;
  html: string;
  listUnsubscribe: string;
  attachments: CompatAttachment[];
  /** Top-level header fields under their canonical names (`Message-Id`), values in order. */
  headers: Record<string, string[]>;
  /** Up to 250 characters of its text, white space collapsed (Mailpit's `Snippet`). */
  snippet: string;
  /** MailHog's view, when asked for. */
  mailhog?: MailhogContent;
  notice?: string;
}

const SNIPPET_CHARS = 250;
/** Multipart nesting MailHog's view follows, and parts it splits at most: real mail stays far below both. */
const MAX_MAILHOG_DEPTH = 16;
const MAX_MAILHOG_PARTS = 256;

/** `message-id` → `Message-Id`, as Go's textproto writes header keys (Mailpit, Inbucket). */
export function canonicalKey(key: string): string {
  return key
    .toLowerCase()
    .split('-')
    .map((w) => (w.length > 0 ? w[0].toUpperCase() + w.slice(1) : w))
    .join('-');
}

function addresses(list: PostalMime.Address[] | undefined): CompatAddress[] {
  const out: CompatAddress[] = [];
  for (const a of list ?? []) {
    if (a.group) for (const m of a.group) out.push({ Name: m.name ?? '', Address: m.address ?? '' });
    else out.push({ Name: a.name ?? '', Address: a.address ?? '' });
  }
  return out;
}

function unbracket(s: string | undefined): string {
  return (s ?? '').trim().replace(/^<(.*)>$/, '$1');
}

export async function compatParse(raw: Buffer, withMailhog: boolean): Promise<CompatParsed> {
  const { email, notice } = await parse(raw);
  const headers: Record<string, string[]> = {};
  for (const h of email.headers) (headers[canonicalKey(h.key)] ??= []).push(h.value);
  const html = email.html ?? '';
  // A message with HTML alone gets its text made from the HTML, as the peers' parser (Go's
  // enmime, in Mailpit and Inbucket) does: suites read a code from `Text`.
  const text = email.text ?? (email.html !== undefined ? htmlToText(email.html) : '');
  const visible = text;
  const date = email.date !== undefined && !Number.isNaN(Date.parse(email.date)) ? new Date(email.date).toISOString() : undefined;
  const attachments = email.attachments.map((a, n): CompatAttachment => {
    const bytes = attachmentBytes(a);
    return {
      PartID: String(n + 1),
      FileName: a.filename ?? fallbackName(n),
      ContentType: a.mimeType || 'application/octet-stream',
      ContentID: unbracket(a.contentId),
      Size: bytes.byteLength,
      MD5: createHash('md5').update(bytes).digest('hex'),
      inline: a.disposition === 'inline' || a.related === true,
    };
  });
  const from = email.from ? addresses([email.from])[0] : undefined;
  return {
    messageId: unbracket(email.messageId),
    ...(date !== undefined ? { date } : {}),
    from: from ?? null,
    to: addresses(email.to),
    cc: addresses(email.cc),
    bcc: addresses(email.bcc),
    replyTo: addresses(email.replyTo),
    returnPath: unbracket(email.returnPath),
    subject: email.subject ?? '',
    text,
    html,
    listUnsubscribe: headers['List-Unsubscribe']?.[0] ?? '',
    attachments,
    headers,
    snippet: visible.replace(/\s+/g, ' ').trim().slice(0, SNIPPET_CHARS),
    ...(withMailhog ? { mailhog: mailhogContent(raw.toString('utf8'), 0, { parts: 0 }) } : {}),
    ...(notice !== undefined ? { notice } : {}),
  };
}

/** Where a block's header fields end and its body starts. */
function splitBlock(s: string): { head: string; body: string } {
  const crlf = s.indexOf('\r\n\r\n');
  const lf = s.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { head: s.slice(0, crlf), body: s.slice(crlf + 4) };
  if (lf >= 0) return { head: s.slice(0, lf), body: s.slice(lf + 2) };
  return { head: s, body: '' };
}

function headerFields(head: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let last: { key: string; i: number } | undefined;
  for (const line of head.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && last) {
      out[last.key][last.i] += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim();
    const list = (out[key] ??= []);
    list.push(line.slice(colon + 1).trim());
    last = { key, i: list.length - 1 };
  }
  return out;
}

function fieldOf(headers: Record<string, string[]>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v[0];
  return undefined;
}

/** MailHog's content of a block: fields as written, body as written, its parts when it is multipart with a boundary. */
function mailhogContent(block: string, depth: number, count: { parts: number }): MailhogContent {
  const { head, body } = splitBlock(block);
  const headers = headerFields(head);
  const type = fieldOf(headers, 'content-type') ?? '';
  const boundary = /^\s*multipart\//i.test(type) ? /boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(type) : null;
  let mime: MailhogContent['MIME'] = null;
  if (boundary && depth < MAX_MAILHOG_DEPTH) {
    const parts: MailhogContent[] = [];
    const delimiter = `--${boundary[1] ?? boundary[2]}`;
    const pieces = body.split(new RegExp(`(?:^|\\r?\\n)${delimiter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    // pieces[0] is the preamble; a piece starting "--" is the close delimiter and what follows it.
    for (const piece of pieces.slice(1)) {
      if (piece.startsWith('--') || count.parts >= MAX_MAILHOG_PARTS) break;
      count.parts++;
      parts.push(mailhogContent(piece.replace(/^[ \t]*\r?\n/, ''), depth + 1, count));
    }
    mime = { Parts: parts };
  }
  return { Headers: headers, Body: body, Size: Buffer.byteLength(body), MIME: mime };
}
