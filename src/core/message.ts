// The one answer to each question every surface asks of a message: its text, its one-time
// code, the link a person must click, and which messages came after a `since`. The server's
// ingest and routes, the client queries (api/queries.ts: CLI, library, language-model and MCP
// tools), the tree, the message view and the Copy commands all call these functions; none
// writes its own copy. Pure: no I/O, no vscode, no Node.
import { type ClickKind, LINK_KINDS, type LinkKindParam } from './clickKinds';
import { htmlToText } from './html';
import { parseMessageId } from './ids';
import { type LinkKind, linkKind, listUnsubscribeUrls } from './linkKinds';
import { extractLinks } from './links';
import { bestCode } from './otp';
import { safeLinkTarget } from './urls';
import type { Message } from './wire';

/** What the answers are read from: the subject and the bodies a reader sees. */
export interface MessageContent {
  subject: string;
  /** The text/plain body (an SMS's text). */
  text?: string;
  /** The text/html body. */
  html?: string;
  /** An SMS: its code is read by the SMS rules whatever its length. */
  sms?: boolean;
  /** The List-Unsubscribe header as sent: its URLs are never the link to click. */
  listUnsubscribe?: string;
}

/** The value of header `name` (lowercase) in a record whose names may have any case. */
export function headerValue(headers: Readonly<Record<string, string>> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/**
 * The text and HTML bodies of a fetched message: an SMS's parts as text; an email's
 * text/plain (or untyped) and text/html parts that are not attachments, each kind joined by
 * newlines.
 */
export function messageBodies(m: Message): { text?: string; html?: string } {
  if (m.kind === 'sms') return { text: m.parts.map((p) => p.body).join('\n') };
  const text: string[] = [];
  const html: string[] = [];
  for (const part of m.parts) {
    const type = (headerValue(part.headers, 'content-type') ?? '').toLowerCase().trim();
    const disposition = (headerValue(part.headers, 'content-disposition') ?? '').toLowerCase().trim();
    if (disposition.startsWith('attachment')) continue;
    if (type.startsWith('text/html')) html.push(part.body);
    else if (type.startsWith('text/plain') || type === '') text.push(part.body);
  }
  const out: { text?: string; html?: string } = {};
  if (text.length > 0) out.text = text.join('\n');
  if (html.length > 0) out.html = html.join('\n');
  return out;
}

/** The content of a fetched message (what every client-side answer is read from). */
export function contentOf(m: Message): MessageContent {
  const c: MessageContent = { subject: m.subject ?? '', ...messageBodies(m) };
  if (m.kind === 'sms') c.sms = true;
  else {
    const lu = headerValue(m.headers, 'list-unsubscribe');
    if (lu !== undefined) c.listUnsubscribe = lu;
  }
  return c;
}

/** The texts code extraction reads (core/otp.ts): an SMS's text (else its HTML's visible text), an email's subject, text and HTML. */
export function codeSource(c: MessageContent): { subject: string; text: string; html?: string; kind?: 'sms' } {
  if (c.sms) return { subject: c.subject, text: c.text ?? (c.html !== undefined ? htmlToText(c.html) : ''), kind: 'sms' };
  return { subject: c.subject, text: c.text ?? '', html: c.html ?? '' };
}

/** The one-time code of a message, or undefined. */
export function codeOf(c: MessageContent): string | undefined {
  return bestCode(codeSource(c));
}

export interface KindedLink {
  url: string;
  text?: string;
  kind: LinkKind;
}

/** The link a person must click. */
export interface ClickLink {
  url: string;
  /** The link's visible text, when it has any. */
  text?: string;
  kind: ClickKind;
}

/** Longest label read before a URL of the text part. */
const MAX_TEXT_LABEL = 200;

/**
 * The words a plain-text mail puts before a URL, read as its label ("Confirm your address:
 * https://…"): the line up to the URL, else the line above it. Only what the link is for is
 * read from it; the link keeps no text.
 */
function labelInText(text: string, url: string): string | undefined {
  const at = text.indexOf(url);
  if (at < 0) return undefined;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  // Only the words after any earlier URL of the line ("Reset: https://… Verify: https://…").
  let label = (text.slice(lineStart, at).split(/\S*:\/\/\S*/).pop() ?? '').trim();
  if (label === '' && lineStart > 0) {
    const prevStart = text.lastIndexOf('\n', lineStart - 2) + 1;
    label = text.slice(prevStart, lineStart - 1).trim();
  }
  label = label.slice(-MAX_TEXT_LABEL);
  return label === '' ? undefined : label;
}

/** Every link of the message in extractLinks order (HTML first, in document order), each with its kind. */
export function kindedLinks(c: MessageContent): KindedLink[] {
  const unsubscribe = listUnsubscribeUrls(c.listUnsubscribe);
  return extractLinks(c).map((l) => {
    const label = l.text === undefined && c.text ? labelInText(c.text, l.url) : undefined;
    return { ...l, kind: linkKind(label === undefined ? l : { url: l.url, text: label }, unsubscribe) };
  });
}

/** Among classified links, the one a person must click for `kind` (only links safe to open count), or undefined. */
export function pickLinkToClick(links: readonly KindedLink[], kind: LinkKindParam = 'any'): ClickLink | undefined {
  for (const k of LINK_KINDS[kind]) {
    for (const l of links) {
      if (l.kind !== k) continue;
      const url = safeLinkTarget(l.url);
      if (url === undefined) continue;
      return l.text ? { url, text: l.text, kind: k } : { url, kind: k };
    }
  }
  return undefined;
}

/** The link a person must click in the message (verify, else sign-in, else reset; of `kind` only when given), or undefined. */
export function linkToClick(c: MessageContent, kind: LinkKindParam = 'any'): ClickLink | undefined {
  return pickLinkToClick(kindedLinks(c), kind);
}

/** A point in a message stream: messages after it count. Resolved by the server (api/queries.ts `resolveSince`). */
export interface SincePoint {
  /** Messages at or before this time (ms, the server's clock) never count. */
  time: number;
  /** The message the point is: it and every message listed after it are excluded (same-ms ties by id). */
  id?: string;
}

/** Whether message id `a`, listed before `b` in the same millisecond, was received after it (ids of another service: the listing's order says so). */
function newerId(a: string, b: string): boolean {
  const pa = parseMessageId(a);
  const pb = parseMessageId(b);
  if (!pa || !pb) return true;
  return pa.seconds !== pb.seconds ? pa.seconds > pb.seconds : pa.counter > pb.counter;
}

/**
 * The messages of a newest-first list that came after `since` (all of them without one). The
 * one rule of "after": the server's code and link routes and the client's list path use it.
 * A point that is one of this server's ids (`<inbox>-<epochSeconds>-<counter>`, the counter
 * rising across the store) orders by the id itself within its second, so an id still marks its
 * point in time once its message is gone (consumed by `delete=true`, or retention).
 */
export function messagesAfter<T extends { id: string; time: number }>(newestFirst: readonly T[], since: SincePoint | undefined): T[] {
  if (since === undefined) return [...newestFirst];
  const point = since.id === undefined ? undefined : parseMessageId(since.id);
  const out: T[] = [];
  for (const m of newestFirst) {
    if (m.id === since.id) break;
    const own = point && parseMessageId(m.id);
    if (point && own) {
      // Our ids: before the point's second is before it; within it, the counter says.
      if (own.seconds < point.seconds) break;
      if (own.seconds === point.seconds && own.counter <= point.counter) continue;
      out.push(m);
      continue;
    }
    if (m.time < since.time || (m.time === since.time && since.id === undefined)) break;
    // Same millisecond as the `since` message but listed before it: newer only if its id is.
    if (m.time === since.time && since.id !== undefined && !newerId(m.id, since.id)) continue;
    out.push(m);
  }
  return out;
}
