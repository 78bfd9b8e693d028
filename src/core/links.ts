// Links of a message, for `…/messages/<id>/links` and the message view.
//
// Order: the HTML part first, in document order (anchors and bare URLs in its text as they
// come), then URLs found only in the plain-text part, in their order. The HTML is what a
// reader sees and carries each link's visible text; the text part usually repeats the same
// links, and a repeat is dropped (first occurrence wins, so the HTML one with its text).
//
// Only absolute http(s) URLs are kept (no mailto:, tel:, javascript:, relative or
// fragment-only hrefs). Unsubscribe and tracking links are listed like any other. A URL is
// returned as the message wrote it (references decoded, the tabs and newlines browsers
// ignore removed); two URLs are the same when their WHATWG-normalised forms are equal.
// HTML is read with htmlparser2 (see html.ts); text URLs are found in one forward scan.

import { parseHtml } from './html';
import { MAX_URL_LENGTH } from './urls';

export interface ExtractedLink {
  url: string;
  /** Visible text of the anchor (or its image's alt text) when the link came from HTML and has any. */
  text?: string;
}

export interface LinkSource {
  text?: string;
  html?: string;
}

/** Longest link text kept; longer anchor text is cut with an ellipsis (a link label, not content). */
const MAX_LINK_TEXT_LENGTH = 300;

const SCHEME_RE = /^https?:\/\//i;
/** Finds where a URL starts in text; the rest of the URL is scanned by hand. */
const URL_START_RE = /https?:\/\//gi;

/** Strips what browsers strip from an href: surrounding C0 controls and spaces, and every tab and newline. */
function cleanHref(href: string): string {
  let start = 0;
  let end = href.length;
  while (start < end && href.charCodeAt(start) <= 32) start++;
  while (end > start && href.charCodeAt(end - 1) <= 32) end--;
  let out = '';
  for (let i = start; i < end; i++) {
    const c = href.charCodeAt(i);
    if (c !== 9 && c !== 10 && c !== 13) out += href[i];
  }
  return out;
}

/** The WHATWG-normalised form of an absolute http(s) URL with a host, or undefined. */
function normalizedHttpUrl(candidate: string): string | undefined {
  if (candidate.length > MAX_URL_LENGTH || !SCHEME_RE.test(candidate)) return undefined;
  try {
    const url = new URL(candidate);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

/** Characters that end a URL in running text: whitespace, quotes and angle brackets, and CJK punctuation. */
function endsUrl(c: number): boolean {
  if (c <= 32 || c === 127) return true;
  if (c === 34 || c === 60 || c === 62 || c === 96) return true; // " < > `
  if (c === 0xa0 || c === 0x2028 || c === 0x2029 || (c >= 0x2000 && c <= 0x200b) || c === 0x3000 || c === 0xfeff) return true;
  if (c >= 0x3001 && c <= 0x3011) return true; // 、。〃〄々〆〇〈〉《》「」『』【】
  if (c >= 0xff01 && c <= 0xff0f) return true; // ！＂＃＄％＆＇（）＊＋，－．／
  if (c >= 0xff1a && c <= 0xff20) return true; // ：；＜＝＞？＠
  return false;
}

/** Trailing characters that are sentence punctuation rather than part of a URL. */
const TRAILING_PUNCTUATION = new Set(['.', ',', ';', ':', '!', '?', "'", '*', '…']);
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** Cuts sentence punctuation and unbalanced closing brackets off the end of a URL found in text. */
function trimUrlEnd(url: string): string {
  const counts: Record<string, number> = { '(': 0, ')': 0, '[': 0, ']': 0, '{': 0, '}': 0 };
  for (const ch of url) if (ch in counts) counts[ch]++;
  let end = url.length;
  while (end > 0) {
    const ch = url[end - 1];
    if (TRAILING_PUNCTUATION.has(ch)) { end--; continue; }
    const opener = CLOSERS[ch];
    if (opener !== undefined && counts[ch] > counts[opener]) { counts[ch]--; end--; continue; }
    break;
  }
  return url.slice(0, end);
}

/** Absolute http(s) URLs written in plain text, in order, as `[url, normalised]` pairs. */
function findUrlsInText(text: string): Array<{ url: string; normalized: string }> {
  const found: Array<{ url: string; normalized: string }> = [];
  const re = new RegExp(URL_START_RE.source, URL_START_RE.flags);
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    let end = m.index + m[0].length;
    while (end < text.length && !endsUrl(text.charCodeAt(end))) end++;
    re.lastIndex = end;
    const url = trimUrlEnd(text.slice(m.index, end));
    const normalized = normalizedHttpUrl(url);
    if (normalized !== undefined) found.push({ url, normalized });
  }
  return found;
}

function collapseSpace(s: string): string {
  let out = '';
  let space = false;
  for (const ch of s) {
    const isSpace = ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\u00a0';
    if (isSpace || ch === '\u200b' || ch === '\u200c' || ch === '\u200d' || ch === '\ufeff') {
      if (isSpace) space = true;
      continue;
    }
    if (space && out !== '') out += ' ';
    space = false;
    out += ch;
  }
  return out.length > MAX_LINK_TEXT_LENGTH ? `${out.slice(0, MAX_LINK_TEXT_LENGTH - 1)}…` : out;
}

/** Elements whose text is not shown, so URLs written there are not links. */
const NO_TEXT_LINKS = new Set(['script', 'style', 'title', 'textarea', 'xmp', 'iframe', 'noembed', 'noframes', 'template']);

/** Links of an HTML document in document order (anchor and area hrefs, and bare URLs in its text). */
function htmlLinks(html: string, add: (url: string, normalized: string, text?: string) => void): void {
  let anchor: { url: string; normalized: string; text: string; alt: string } | undefined;
  const closeAnchor = (): void => {
    if (!anchor) return;
    const text = collapseSpace(anchor.text) || collapseSpace(anchor.alt);
    add(anchor.url, anchor.normalized, text === '' ? undefined : text);
    anchor = undefined;
  };
  let noText = 0;
  // htmlparser2 may report one run of text in pieces (around references): URLs are looked for in the whole run.
  let run = '';
  const flush = (): void => {
    if (run !== '') for (const u of findUrlsInText(run)) add(u.url, u.normalized);
    run = '';
  };
  parseHtml(html, {
    open(name, attrs) {
      flush();
      if (NO_TEXT_LINKS.has(name)) noText++;
      if (name === 'a' || name === 'area') {
        if (name === 'a') closeAnchor();
        const href = attrs.href;
        if (href === undefined) return;
        const url = cleanHref(href);
        const normalized = normalizedHttpUrl(url);
        if (normalized === undefined) return;
        if (name === 'area') add(url, normalized, collapseSpace(attrs.alt ?? '') || undefined);
        else anchor = { url, normalized, text: '', alt: '' };
      } else if (name === 'img' && anchor) {
        anchor.alt += ` ${attrs.alt ?? ''}`;
      }
    },
    close(name) {
      flush();
      if (NO_TEXT_LINKS.has(name) && noText > 0) noText--;
      if (name === 'a') closeAnchor();
    },
    text(text) {
      if (noText > 0) return;
      if (anchor) anchor.text += text;
      else run += text;
    },
  });
  flush();
  closeAnchor();
}

/**
 * Links of a message: absolute http(s) URLs from its HTML (with their visible text) and its
 * plain text, deduplicated, HTML links first in document order and then text-only ones.
 */
export function extractLinks(input: LinkSource): ExtractedLink[] {
  const seen = new Set<string>();
  const links: ExtractedLink[] = [];
  const add = (url: string, normalized: string, text?: string): void => {
    if (seen.has(normalized)) return;
    seen.add(normalized);
    links.push(text === undefined ? { url } : { url, text });
  };
  if (input.html) htmlLinks(input.html, add);
  if (input.text) for (const u of findUrlsInText(input.text)) add(u.url, u.normalized);
  return links;
}
