// HTML → tokens → visible text, as pure string processing (no DOM, no Node APIs) so the
// server, the extension and the webview share it. Every step is a single forward scan:
// no regular expression runs over unbounded input with nested quantifiers, so hostile
// input (unclosed tags, megabytes of `<<<<`, endless attributes) costs linear time.

/** Longest entity name looked at after `&` (the longest HTML5 name is 31 characters). */
const MAX_ENTITY_NAME = 32;
/** Digits read in a numeric character reference; more cannot make a valid code point. */
const MAX_ENTITY_DIGITS = 10;
/** Highest Unicode code point; numeric references above it decode to U+FFFD. */
const MAX_CODE_POINT = 0x10ffff;
/** Longest tag name kept; real tag names are short and this bounds the work per tag. */
const MAX_TAG_NAME = 64;

// ---------------------------------------------------------------- entities

/** Named references decoded (a practical subset of HTML5 plus the composed Latin letters below). */
const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', shy: '\u00ad',
  copy: '©', reg: '®', trade: '™', hellip: '…', mdash: '—', ndash: '–', minus: '−',
  lsquo: '‘', rsquo: '’', sbquo: '‚', ldquo: '“', rdquo: '”', bdquo: '„',
  laquo: '«', raquo: '»', lsaquo: '‹', rsaquo: '›', bull: '•', middot: '·',
  euro: '€', pound: '£', yen: '¥', cent: '¢', curren: '¤', sect: '§', para: '¶', deg: '°',
  plusmn: '±', times: '×', divide: '÷', micro: 'µ', ordf: 'ª', ordm: 'º',
  sup1: '¹', sup2: '²', sup3: '³', frac14: '¼', frac12: '½', frac34: '¾',
  iexcl: '¡', iquest: '¿', brvbar: '¦', uml: '¨', macr: '¯', acute: '´', cedil: '¸', not: '¬',
  zwnj: '\u200c', zwj: '\u200d', lrm: '\u200e', rlm: '\u200f', ensp: '\u2002', emsp: '\u2003',
  thinsp: '\u2009', dagger: '†', Dagger: '‡', permil: '‰', prime: '′', Prime: '″',
  larr: '←', rarr: '→', uarr: '↑', darr: '↓', harr: '↔', check: '✓', hearts: '♥', star: '☆',
  szlig: 'ß', AElig: 'Æ', aelig: 'æ', Oslash: 'Ø', oslash: 'ø', ETH: 'Ð', eth: 'ð',
  THORN: 'Þ', thorn: 'þ', OElig: 'Œ', oelig: 'œ', fnof: 'ƒ', circ: 'ˆ', tilde: '˜',
  num: '#', dollar: '$', percnt: '%', lpar: '(', rpar: ')', ast: '*', plus: '+', comma: ',',
  period: '.', sol: '/', colon: ':', semi: ';', equals: '=', quest: '?', commat: '@',
  lsqb: '[', rsqb: ']', lowbar: '_', grave: '`', lcub: '{', rcub: '}', verbar: '|', excl: '!',
  NewLine: '\n', Tab: '\t',
};

/** References that browsers also decode without the trailing semicolon (the common legacy ones). */
const LEGACY = new Set(['amp', 'lt', 'gt', 'quot', 'nbsp', 'copy', 'reg', 'shy', 'deg', 'times', 'pound', 'yen', 'cent', 'sect', 'para']);

/** Combining marks for the `<letter><mark>` family of names (`eacute`, `Ccedil`, `scaron`…). */
const MARKS: Record<string, string> = {
  acute: '\u0301', grave: '\u0300', circ: '\u0302', uml: '\u0308', tilde: '\u0303', ring: '\u030a',
  cedil: '\u0327', caron: '\u030c', macr: '\u0304', breve: '\u0306', ogon: '\u0328', dot: '\u0307', dblac: '\u030b',
};

/** Numeric references 0x80–0x9F mean Windows-1252 characters (HTML5 §13.2.5.80). */
const CP1252: Record<number, number> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x0192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
  0x88: 0x02c6, 0x89: 0x2030, 0x8a: 0x0160, 0x8b: 0x2039, 0x8c: 0x0152, 0x8e: 0x017d, 0x91: 0x2018,
  0x92: 0x2019, 0x93: 0x201c, 0x94: 0x201d, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02dc,
  0x99: 0x2122, 0x9a: 0x0161, 0x9b: 0x203a, 0x9c: 0x0153, 0x9e: 0x017e, 0x9f: 0x0178,
};

function namedEntity(name: string): string | undefined {
  const direct = NAMED[name];
  if (direct !== undefined) return direct;
  if (name.length < 3) return undefined;
  const mark = MARKS[name.slice(1)];
  if (mark === undefined) return undefined;
  const composed = (name[0] + mark).normalize('NFC');
  return composed.length === 1 ? composed : undefined;
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

function codePointToString(cp: number): string {
  if (cp === 0 || cp > MAX_CODE_POINT || (cp >= 0xd800 && cp <= 0xdfff)) return '\ufffd';
  return String.fromCodePoint(CP1252[cp] ?? cp);
}

/**
 * Decodes character references (`&amp;`, `&#39;`, `&#x2F;`, `&eacute;`…). Unknown names stay as
 * written. In an attribute value (`inAttribute`), a legacy name without `;` followed by `=` or
 * an alphanumeric is left alone, as browsers do, so `?a=1&copy=2` keeps its query.
 */
export function decodeEntities(input: string, inAttribute = false): string {
  let amp = input.indexOf('&');
  if (amp < 0) return input;
  let out = '';
  let last = 0;
  while (amp >= 0) {
    let i = amp + 1;
    let replacement: string | undefined;
    if (input.charCodeAt(i) === 35 /* # */) {
      i++;
      const hex = input.charCodeAt(i) === 120 || input.charCodeAt(i) === 88; // x X
      if (hex) i++;
      const start = i;
      let value = 0;
      while (i < input.length && (hex ? isHexDigit(input.charCodeAt(i)) : isDigit(input.charCodeAt(i)))) {
        if (i - start < MAX_ENTITY_DIGITS) value = value * (hex ? 16 : 10) + parseInt(input[i], 16);
        else value = MAX_CODE_POINT + 1;
        i++;
      }
      if (i > start) {
        if (input.charCodeAt(i) === 59 /* ; */) i++;
        replacement = codePointToString(value);
      }
    } else {
      const start = i;
      while (i < input.length && i - start < MAX_ENTITY_NAME && isAsciiAlnum(input.charCodeAt(i))) i++;
      const name = input.slice(start, i);
      if (name.length > 0) {
        if (input.charCodeAt(i) === 59) {
          replacement = namedEntity(name);
          if (replacement !== undefined) i++;
        } else if (LEGACY.has(name) && !(inAttribute && input.charCodeAt(i) === 61 /* = */)) {
          replacement = NAMED[name];
        }
      }
    }
    if (replacement !== undefined) {
      out += input.slice(last, amp) + replacement;
      last = i;
    }
    amp = input.indexOf('&', Math.max(amp + 1, replacement !== undefined ? i : amp + 1));
  }
  return out + input.slice(last);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

// ---------------------------------------------------------------- tokenizer

export type HtmlToken =
  | { type: 'text'; text: string }
  | { type: 'start'; name: string; attrs: Record<string, string>; selfClosing: boolean }
  | { type: 'end'; name: string };

/** Elements whose content is raw text up to their end tag (no markup inside). */
const RAW_TEXT = new Set(['script', 'style', 'xmp', 'iframe', 'noembed', 'noframes']);
/** Elements whose content is text with character references but no markup. */
const RCDATA = new Set(['title', 'textarea']);

function isAsciiAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
}

/** Where the end tag `</name` (any case, followed by space, `/` or `>`) starts, or -1. */
function findEndTag(html: string, name: string, from: number): number {
  let at = html.indexOf('</', from);
  while (at >= 0) {
    const after = at + 2 + name.length;
    if (html.slice(at + 2, after).toLowerCase() === name) {
      const c = html.charCodeAt(after);
      if (after >= html.length || isSpace(c) || c === 47 || c === 62) return at;
    }
    at = html.indexOf('</', at + 2);
  }
  return -1;
}

/**
 * Splits HTML into text, start-tag and end-tag tokens, following the HTML5 tokenizer where it
 * matters for extracting text: comments, doctypes and processing instructions are dropped,
 * script/style/title content is one text token, attribute values and text have their
 * references decoded, a `<` that does not start a tag is text, and a tag cut off by the end
 * of input is dropped. Tag and attribute names are lowercase; the first of duplicate
 * attributes wins.
 */
export function tokenizeHtml(html: string): HtmlToken[] {
  const tokens: HtmlToken[] = [];
  const n = html.length;
  let i = 0;
  let textStart = 0;
  const flushText = (end: number): void => {
    if (end > textStart) tokens.push({ type: 'text', text: decodeEntities(html.slice(textStart, end)) });
  };
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    const c1 = html.charCodeAt(lt + 1);
    if (c1 === 33 /* ! */) {
      flushText(lt);
      let end: number;
      if (html.startsWith('<!--', lt)) {
        if (html.startsWith('>', lt + 4)) end = lt + 5;
        else if (html.startsWith('->', lt + 4)) end = lt + 6;
        else {
          const close = html.indexOf('-->', lt + 4);
          end = close < 0 ? n : close + 3;
        }
      } else {
        const close = html.indexOf('>', lt + 2);
        end = close < 0 ? n : close + 1;
      }
      i = textStart = end;
      continue;
    }
    if (c1 === 63 /* ? */) {
      flushText(lt);
      const close = html.indexOf('>', lt + 2);
      i = textStart = close < 0 ? n : close + 1;
      continue;
    }
    if (c1 === 47 /* / */) {
      if (isAsciiAlpha(html.charCodeAt(lt + 2))) {
        flushText(lt);
        let j = lt + 2;
        while (j < n && !isSpace(html.charCodeAt(j)) && html.charCodeAt(j) !== 47 && html.charCodeAt(j) !== 62) j++;
        const name = html.slice(lt + 2, Math.min(j, lt + 2 + MAX_TAG_NAME)).toLowerCase();
        const close = html.indexOf('>', j);
        if (close < 0) { i = textStart = n; break; }
        tokens.push({ type: 'end', name });
        i = textStart = close + 1;
        continue;
      }
      if (html.charCodeAt(lt + 2) === 62 /* </> */) { flushText(lt); i = textStart = lt + 3; continue; }
      if (lt + 2 < n) {
        flushText(lt);
        const close = html.indexOf('>', lt + 2);
        i = textStart = close < 0 ? n : close + 1;
        continue;
      }
      i = lt + 1;
      continue;
    }
    if (!isAsciiAlpha(c1)) { i = lt + 1; continue; }

    // Start tag.
    let j = lt + 1;
    while (j < n && !isSpace(html.charCodeAt(j)) && html.charCodeAt(j) !== 47 && html.charCodeAt(j) !== 62) j++;
    const name = html.slice(lt + 1, Math.min(j, lt + 1 + MAX_TAG_NAME)).toLowerCase();
    const attrs: Record<string, string> = {};
    let selfClosing = false;
    let closed = false;
    while (j < n) {
      const c = html.charCodeAt(j);
      if (isSpace(c)) { j++; continue; }
      if (c === 62) { closed = true; j++; break; }
      if (c === 47) { selfClosing = html.charCodeAt(j + 1) === 62; j++; continue; }
      // Attribute name: up to space, `/`, `>` or `=` (a leading `=` belongs to the name).
      const nameStart = j;
      j++;
      while (j < n) {
        const d = html.charCodeAt(j);
        if (isSpace(d) || d === 47 || d === 62 || d === 61) break;
        j++;
      }
      const attrName = html.slice(nameStart, j).toLowerCase();
      let k = j;
      while (k < n && isSpace(html.charCodeAt(k))) k++;
      let value = '';
      if (html.charCodeAt(k) === 61 /* = */) {
        k++;
        while (k < n && isSpace(html.charCodeAt(k))) k++;
        const q = html.charCodeAt(k);
        if (q === 34 || q === 39) {
          const close = html.indexOf(q === 34 ? '"' : "'", k + 1);
          if (close < 0) { j = n; break; }
          value = html.slice(k + 1, close);
          j = close + 1;
        } else {
          let e = k;
          while (e < n && !isSpace(html.charCodeAt(e)) && html.charCodeAt(e) !== 62) e++;
          value = html.slice(k, e);
          j = e;
        }
      }
      // Own-property check: `constructor` or `toString` attributes must not look present already.
      if (attrName !== '__proto__' && !Object.prototype.hasOwnProperty.call(attrs, attrName)) attrs[attrName] = decodeEntities(value, true);
    }
    if (!closed) { flushText(lt); i = textStart = n; break; }
    flushText(lt);
    tokens.push({ type: 'start', name, attrs, selfClosing });
    i = textStart = j;
    if (RAW_TEXT.has(name) || RCDATA.has(name)) {
      const end = findEndTag(html, name, i);
      const stop = end < 0 ? n : end;
      if (stop > i) {
        const raw = html.slice(i, stop);
        tokens.push({ type: 'text', text: RCDATA.has(name) ? decodeEntities(raw) : raw });
      }
      i = textStart = stop;
    } else if (name === 'plaintext') {
      if (n > i) tokens.push({ type: 'text', text: html.slice(i) });
      i = textStart = n;
    }
  }
  flushText(n);
  return tokens;
}

// ---------------------------------------------------------------- visible text

/** Elements without content or end tag. */
export const VOID_ELEMENTS = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr',
]);

/** Elements whose content is never shown. */
const INVISIBLE = new Set(['head', 'style', 'script', 'title', 'template', 'xmp', 'iframe', 'noembed', 'noframes']);

/** Elements allowed in `<head>`; any other start tag (or visible text) ends an unclosed head, as in HTML5. */
const HEAD_CONTENT = new Set(['meta', 'link', 'base', 'style', 'script', 'title', 'noscript', 'template', 'basefont', 'bgsound']);

/** Elements that start and end a line of text. */
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'center', 'dd', 'details', 'dialog', 'dir', 'div', 'dl', 'dt',
  'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr',
  'html', 'legend', 'li', 'main', 'menu', 'nav', 'ol', 'option', 'p', 'pre', 'section', 'summary', 'table', 'tbody',
  'thead', 'tfoot', 'tr', 'ul', 'caption', 'br',
]);

/** Table cells: separated from their neighbours by a tab so cell contents never run together. */
const CELL = new Set(['td', 'th']);

/** Characters that take no space when shown and are used to pad preheaders. */
const INVISIBLE_CHARS = new Set(['\u00ad', '\u034f', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff']);

/** Whether an element is hidden by its own attributes (`hidden`, `display:none`, `visibility:hidden`, zero height with overflow hidden). */
export function isHiddenElement(attrs: Record<string, string>): boolean {
  if ('hidden' in attrs) return true;
  const style = attrs.style;
  if (style === undefined) return false;
  let s = '';
  for (let i = 0; i < style.length; i++) {
    const ch = style[i];
    if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') s += ch.toLowerCase();
  }
  if (s.includes('display:none') || s.includes('visibility:hidden')) return true;
  const zeroSize = /(?:^|;)(?:max-)?height:0(?:px)?(?:;|!|$)/.test(s);
  return zeroSize && s.includes('overflow:hidden');
}

export interface VisibleTextOptions {
  /** Keep text of elements hidden by `hidden`/`display:none` (e.g. preheaders). Default false. */
  includeHidden?: boolean;
}

/**
 * For each start token, the index of its matching end token, found with one stack per tag
 * name (unmatched starts are absent). Linear in the number of tokens.
 */
function matchEndTags(tokens: HtmlToken[]): Map<number, number> {
  const open = new Map<string, number[]>();
  const match = new Map<number, number>();
  tokens.forEach((t, idx) => {
    if (t.type === 'start' && !VOID_ELEMENTS.has(t.name) && !t.selfClosing) {
      let stack = open.get(t.name);
      if (!stack) open.set(t.name, (stack = []));
      stack.push(idx);
    } else if (t.type === 'end') {
      const startIdx = open.get(t.name)?.pop();
      if (startIdx !== undefined) match.set(startIdx, idx);
    }
  });
  return match;
}

/**
 * Reduces HTML to the text a reader sees: no head, style, script, title or comments, no
 * hidden elements (unless asked), references decoded, whitespace collapsed as a browser
 * does, one line per block element and a tab between table cells. No-break spaces become
 * spaces and zero-width characters are dropped. Lines are trimmed and empty lines dropped.
 */
export function htmlToText(html: string, options: VisibleTextOptions = {}): string {
  const tokens = tokenizeHtml(html);
  const matches = matchEndTags(tokens);
  const parts: string[] = [];
  let inHead = false;
  let preDepth = 0;
  for (let idx = 0; idx < tokens.length; idx++) {
    const t = tokens[idx];
    if (t.type === 'text') {
      if (inHead) {
        if (t.text.trim() === '') continue;
        inHead = false;
      }
      parts.push(preDepth > 0 ? t.text.replace(/\r\n?/g, '\n') : t.text.replace(/[ \t\n\r\f]+/g, ' '));
      continue;
    }
    if (t.type === 'end') {
      if (t.name === 'head') inHead = false;
      else if (t.name === 'pre' && preDepth > 0) preDepth--;
      if (BLOCK.has(t.name)) parts.push('\n');
      else if (CELL.has(t.name)) parts.push('\t');
      continue;
    }
    if (inHead && !HEAD_CONTENT.has(t.name)) inHead = false;
    if (t.name === 'head') { inHead = true; continue; }
    const skipTo = matches.get(idx);
    const invisible = INVISIBLE.has(t.name) || (!options.includeHidden && isHiddenElement(t.attrs));
    if (invisible) {
      if (skipTo !== undefined) { idx = skipTo; continue; }
      // Raw-text elements are one text token even when their end tag is missing.
      if (RAW_TEXT.has(t.name) || RCDATA.has(t.name)) { if (tokens[idx + 1]?.type === 'text') idx++; continue; }
    }
    if (inHead) continue;
    if (t.name === 'pre' && !t.selfClosing) preDepth++;
    if (BLOCK.has(t.name)) parts.push('\n');
    else if (CELL.has(t.name)) parts.push('\t');
  }
  return normalizeText(parts.join(''));
}

/** Collapses spaces within lines (a tab wins over spaces), trims lines and drops empty ones. One pass. */
function normalizeText(raw: string): string {
  const out: string[] = [];
  let line = '';
  let pendingSpace = false;
  let pendingTab = false;
  for (const ch of raw) {
    if (ch === '\n') {
      if (line !== '') out.push(line);
      line = '';
      pendingSpace = pendingTab = false;
      continue;
    }
    if (ch === '\t') { pendingTab = true; continue; }
    if (ch === ' ' || ch === '\u00a0' || ch === '\r' || ch === '\f') { pendingSpace = true; continue; }
    if (INVISIBLE_CHARS.has(ch)) continue;
    if (line !== '') line += pendingTab ? '\t' : pendingSpace ? ' ' : '';
    pendingSpace = pendingTab = false;
    line += ch;
  }
  if (line !== '') out.push(line);
  return out.join('\n');
}
