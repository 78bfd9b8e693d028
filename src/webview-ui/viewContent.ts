// Builds what the message view shows (a protocol ViewContent) from a fetched message and its
// extras. Pure: no vscode import, so it is unit-tested under Node; the panel calls it.
// Email HTML goes to the view as received; the view sanitizes it (src/webview-ui/sanitize.ts).
import { type SmsEncoding, smsSegments } from '../core/sms';
import type { Message } from '../core/wire';
import { type AttachmentInfo, PROVIDER_API_HEADER } from '../core/wire';
import { extractCodes, type CodeReason } from '../core/otp';
import { isDataImageUrl, MAX_URL_LENGTH, safeLinkTarget } from '../core/urls';
import { PRIVATE_DOMAIN } from '../core/ids';
import { senderLine } from '../core/sender';
import { plainText, UNCUT } from '../core/inert';
import { cleanFileName } from '../core/fileNames';
import { CLICK_KIND_LABELS } from '../core/clickKinds';
import { codeSource, contentOf, headerValue, type KindedLink, kindedLinks, messageBodies, pickLinkToClick } from '../core/message';
import { MAX_CONTENT_ID_LENGTH, MAX_HTML_SOURCE, MAX_INLINE_IMAGES, type TabId, type ViewLink, type ViewContent, type ViewText, type ViewVerification } from '../shared/viewProtocol';

/** Most characters of text or raw source sent to the view; beyond this the view says it is cut (a DOM size limit). */
export const MAX_VIEW_TEXT = 2 * 1024 * 1024;
/** Most links listed; a message with more is a link farm, not something to click through. */
const MAX_VIEW_LINKS = 500;

const REASON_TEXT: Record<CodeReason, string> = {
  'origin-bound': 'Found in an origin-bound one-time code line (@site #code)',
  keyword: 'Found right after a word like "code" or "OTP"',
  'keyword-near': 'Found near a word like "code" or "OTP"',
  subject: 'The only number in the subject',
  'sole-number': 'The only number in a short message',
};

interface ViewInputs {
  /** The domain the message was opened from (`private` or a name). */
  domain: string;
  message: Message;
  attachments?: AttachmentInfo[];
  raw?: string;
  /** Parts that failed to load, said in the view. */
  notes?: string[];
  allowRemoteImages: boolean;
  /** The `testInbox.themeSimpleMail` setting: simple HTML mail in the theme's colours. */
  themeSimpleMail?: boolean;
  /** `cid:` content id (without `<>`) → `data:image/…` URL of the inline part. */
  inlineImages?: ReadonlyMap<string, string>;
}

/** The API a message came through: its header (email), or the header block of its raw source (an SMS, whose JSON has no headers). */
function sentThrough(headers: Record<string, string> | undefined, raw: string | undefined): string | undefined {
  const name = PROVIDER_API_HEADER.toLowerCase();
  const fromHeaders = headerValue(headers, name);
  if (fromHeaders !== undefined) return fromHeaders;
  if (raw === undefined) return undefined;
  const end = raw.search(/\r?\n\r?\n/);
  const block = (end < 0 ? raw : raw.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const line = block.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name}:`));
  return line?.slice(name.length + 1).trim();
}

/**
 * Mail text the view shows outside the message itself (its header, headers table, link texts,
 * an SMS's sender): core/inert.ts's one rule, whole. No bidi control reorders it, no control
 * character breaks it. The raw source is shown as received.
 */
function asShown(text: string): string {
  return plainText(text, UNCUT);
}

function cut(s: string, max = MAX_VIEW_TEXT): ViewText {
  return s.length > max ? { text: s.slice(0, max), truncated: true } : { text: s, truncated: false };
}

/** Content ids referenced as `cid:` in the HTML, without `<>`, lowercased. */
export function referencedContentIds(html: string): Set<string> {
  const ids = new Set<string>();
  for (const m of html.matchAll(/cid:([^\s"'<>)]+)/gi)) ids.add(m[1].toLowerCase());
  return ids;
}

/** The bare content id of an attachment record (`<logo@acme>` → `logo@acme`), lowercased. */
export function contentIdOf(a: AttachmentInfo): string | undefined {
  const raw = a['content-id'];
  if (!raw) return undefined;
  const bare = raw.trim().replace(/^<|>$/g, '').trim().toLowerCase();
  return bare || undefined;
}

function displayTo(inbox: string, domain: string): string {
  if (inbox.includes('@') || !domain || domain === PRIVATE_DOMAIN) return inbox;
  return `${inbox}@${domain}`;
}

export function buildViewContent(input: ViewInputs): ViewContent {
  const m = input.message;
  const bodies = messageBodies(m);
  const notes = [...(input.notes ?? [])];

  const content = contentOf(m);
  const extracted = kindedLinks(content);
  const links: ViewLink[] = [];
  const shown: KindedLink[] = [];
  for (const l of extracted) {
    const url = safeLinkTarget(l.url);
    if (url === undefined || url.length > MAX_URL_LENGTH) continue;
    if (links.length >= MAX_VIEW_LINKS) {
      notes.push(`Only the first ${MAX_VIEW_LINKS} of ${extracted.length} links are listed.`);
      break;
    }
    const text = l.text ? asShown(l.text) : undefined;
    links.push(text ? { url, text } : { url });
    shown.push({ ...l, url, ...(text !== undefined ? { text } : {}) });
  }
  // The hosted service also lists a message's links with their visible text (`clickablelinks`).
  for (const c of m.kind === 'email' ? (m.clickablelinks ?? []) : []) {
    const url = safeLinkTarget(c.link);
    if (url === undefined || url.length > MAX_URL_LENGTH) continue;
    const text = asShown(c.text.trim());
    const known = links.find((l) => l.url === url);
    if (known) {
      if (!known.text && text) known.text = text;
    } else if (links.length < MAX_VIEW_LINKS) links.push(text ? { url, text } : { url });
  }
  // The same choice as Copy Verification Link, among the links the view lists.
  const found = pickLinkToClick(shown);
  const verification: ViewVerification | undefined = found ? { ...found, label: CLICK_KIND_LABELS[found.kind] } : undefined;

  // The same input as Copy One-Time Code, so both pick the same code.
  const best = extractCodes(codeSource(content))[0];
  const code = best ? { code: best.code, reason: REASON_TEXT[best.reason] ?? best.reason } : undefined;

  const raw = input.raw === undefined ? undefined : cut(input.raw);
  const attachments = (input.attachments ?? []).map((a) => ({
    index: a.attachment_id,
    // The cleaned name is what the user sees and what Save Attachment proposes: one name.
    filename: cleanFileName(a.filename, `attachment-${a.attachment_id}`),
    contentType: a['content-type'] || 'application/octet-stream',
    size: a.size,
  }));

  if (m.kind === 'sms') {
    const tabs: TabId[] = ['conversation', 'links'];
    if (raw) tabs.push('raw');
    const state: ViewContent = {
      id: m.id,
      kind: 'sms',
      header: { from: asShown(m.fromfull), to: asShown(m.to), subject: asShown(m.subject), time: m.time, id: m.id, domain: input.domain },
      tabs,
      headers: [
        ['from', asShown(m.fromfull)],
        ['to', asShown(m.to)],
        ['subject', asShown(m.subject)],
      ],
      links,
      attachments: [],
      sms: { from: asShown(m.fromfull), to: asShown(m.to), body: bodies.text ?? '', time: m.time, ...smsSegmentFields(bodies.text ?? '') },
      notes,
    };
    if (raw) state.raw = raw;
    if (code) state.code = code;
    if (verification) state.verification = verification;
    const via = sentThrough(undefined, input.raw);
    if (via) state.header.via = asShown(via);
    return state;
  }

  const tabs: TabId[] = [];
  const state: ViewContent = {
    id: m.id,
    kind: 'email',
    header: { from: asShown(senderLine(m)), to: asShown(displayTo(m.to, input.domain)), subject: asShown(m.subject), time: m.time, id: m.id, domain: input.domain },
    tabs,
    headers: Object.entries(m.headers ?? {}).map(([k, v]) => [asShown(k), asShown(String(v))] as [string, string]),
    links,
    attachments,
    notes,
  };
  const date = headerValue(m.headers, 'date');
  if (date) state.header.date = asShown(date);
  const via = sentThrough(m.headers, input.raw);
  if (via) state.header.via = asShown(via);
  if (bodies.html !== undefined) {
    // Raw: the view sanitizes it with DOMPurify on the browser's parser (src/webview-ui/sanitize.ts).
    const truncated = bodies.html.length > MAX_HTML_SOURCE;
    state.html = {
      source: truncated ? bodies.html.slice(0, MAX_HTML_SOURCE) : bodies.html,
      remoteAllowed: input.allowRemoteImages,
      truncated,
      ...(input.themeSimpleMail ? { themeColors: true } : {}),
      inlineImages: [...(input.inlineImages ?? new Map<string, string>())].filter(([cid, url]) => cid.length > 0 && cid.length <= MAX_CONTENT_ID_LENGTH && isDataImageUrl(url)).slice(0, MAX_INLINE_IMAGES),
    };
    tabs.push('html');
  }
  if (bodies.text !== undefined || bodies.html === undefined) {
    state.text = cut(bodies.text ?? '');
    if (bodies.text === undefined) notes.push('This message has no text part.');
    tabs.push('text');
  }
  tabs.push('headers', 'links', 'attachments');
  if (raw) {
    state.raw = raw;
    tabs.push('raw');
  }
  if (code) state.code = code;
  if (verification) state.verification = verification;
  return state;
}

/** Segment count and encoding of an SMS text, by the standard rules (core/sms.ts). */
function smsSegmentFields(text: string): { segments: number; encoding: SmsEncoding } {
  const { segments, encoding } = smsSegments(text);
  return { segments, encoding };
}
