// Email HTML → a document safe to hand to a sandboxed iframe's `srcdoc`.
//
// Email HTML is hostile until proven otherwise. This module never "cleans up" the input in
// place: it tokenizes it and writes a new document from an allowlist, so whatever the input
// does (odd casing, broken tags, `<scr<script>ipt>`, entity-encoded URLs, CSS escapes), the
// output contains only the elements and attributes named below, every attribute value
// quoted and escaped, every `<` in text escaped, and every URL checked after decoding
// exactly the way it is written out. The iframe's CSP (see `buildSrcdoc`) is the second line
// of defence, the webview's CSP the third.
//
// Pure string processing: no DOM, no Node APIs. Every loop moves forward through the input,
// so the cost is linear in its length.

/** Largest HTML body rendered; beyond this the rest is cut (a rendering limit, not a storage one). */
export const MAX_SANITIZE_INPUT = 5 * 1024 * 1024;
/** Longest tag or attribute name looked at; real ones are short, longer ones are dropped. */
const MAX_NAME = 64;
/** Longest entity name looked at after `&` (the longest HTML5 name is 31 characters). */
const MAX_ENTITY_NAME = 32;
/** Digits read in a numeric character reference; more cannot make a valid code point. */
const MAX_ENTITY_DIGITS = 8;
/** Depth limit for subtrees dropped whole (`<svg>` in `<svg>`…); deeper nesting stays dropped. */
const MAX_DROP_DEPTH = 1000;

export interface SanitizeOptions {
  /** Keep `http:`/`https:` images and CSS `url()`s (the user allowed remote images). */
  allowRemoteImages?: boolean;
  /** Maps a `cid:` reference (without the scheme) to a `data:image/…` URL, when the host has the inline part. */
  resolveCid?: (contentId: string) => string | undefined;
}

export interface SanitizeResult {
  /** Body markup: only allowlisted elements and attributes. */
  html: string;
  /** Remote images and CSS `url()`s removed because remote images are not allowed. */
  blockedRemote: number;
  /** Elements removed as dangerous (script, iframe, form, meta…) plus dropped attributes (on*, javascript: URLs…). */
  removed: number;
  /** True when the input was longer than MAX_SANITIZE_INPUT and was cut. */
  truncated: boolean;
}

// ---------------------------------------------------------------- policy

/** Elements written out (with the allowed attributes). Everything else loses its tags but keeps its content. */
const ALLOWED_ELEMENTS = new Set([
  'a', 'abbr', 'acronym', 'address', 'article', 'aside', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br',
  'caption', 'center', 'cite', 'code', 'col', 'colgroup', 'dd', 'del', 'details', 'dfn', 'div', 'dl', 'dt',
  'em', 'figcaption', 'figure', 'font', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'i',
  'img', 'ins', 'kbd', 'li', 'main', 'mark', 'nav', 'ol', 'p', 'pre', 'q', 'rp', 'rt', 'ruby', 's', 'samp',
  'section', 'small', 'span', 'strike', 'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'tfoot',
  'th', 'thead', 'time', 'tr', 'tt', 'u', 'ul', 'var', 'wbr',
]);

/** Elements removed together with everything inside them. */
const DROP_SUBTREE = new Set([
  'script', 'iframe', 'frame', 'frameset', 'object', 'applet', 'embed', 'noembed', 'noframes', 'template',
  'svg', 'math', 'select', 'textarea', 'title', 'video', 'audio', 'canvas', 'map', 'xmp', 'plaintext',
  'portal', 'fencedframe', 'dialog',
]);

/** Elements whose content is raw text for the HTML tokenizer: no tags inside until the matching end tag. */
const RAW_TEXT = new Set(['script', 'style', 'iframe', 'noembed', 'noframes', 'xmp', 'textarea', 'title']);

/** Elements that are dangerous and removed without a closing tag or content of their own. */
const DANGEROUS_TAGS = new Set([
  'meta', 'base', 'link', 'form', 'input', 'button', 'option', 'optgroup', 'keygen', 'isindex', 'source',
  'track', 'param', 'area', 'image', 'frame', 'embed', 'object', 'applet', 'iframe', 'script', 'svg', 'math',
  'style', 'template', 'select', 'textarea', 'video', 'audio', 'canvas', 'portal', 'fencedframe', 'dialog',
]);

const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param', 'keygen', 'image', 'isindex', 'frame']);

/** Presentational attributes kept as text on any allowed element. */
const PLAIN_ATTRIBUTES = new Set([
  'align', 'alt', 'bgcolor', 'border', 'cellpadding', 'cellspacing', 'class', 'clear', 'color', 'cols',
  'colspan', 'dir', 'face', 'frame', 'headers', 'height', 'hspace', 'id', 'lang', 'nowrap', 'open', 'reversed',
  'role', 'rows', 'rowspan', 'rules', 'scope', 'size', 'span', 'start', 'summary', 'title', 'type', 'valign',
  'vspace', 'width', 'abbr', 'datetime', 'dir', 'translate',
]);

/** `data:` images accepted in `src` (not SVG: an SVG document is markup). */
const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp|bmp|avif|x-icon|vnd\.microsoft\.icon)(?:;[a-z0-9=._-]+)*;base64,[a-z0-9+/=\s]*$/i;
/** Link schemes listed as links (they are never clickable in the iframe). */
const LINK_SCHEME = /^(?:https?:|mailto:|tel:|sms:)/i;

// ---------------------------------------------------------------- small helpers

function isAsciiAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isAsciiAlnum(c: number): boolean {
  return isAsciiAlpha(c) || (c >= 48 && c <= 57);
}

function isHtmlSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

function isHexDigit(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** ASCII-only lowercase: keeps the length (String#toLowerCase may not for some non-ASCII letters). */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

export function escapeHtmlText(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

export function escapeHtmlAttribute(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Text keeps its character references (they cannot make markup); only `<` and `>` are escaped. */
function escapeTextKeepingReferences(s: string): string {
  return s.replace(/[<>]/g, (c) => (c === '<' ? '&lt;' : '&gt;'));
}

// ---------------------------------------------------------------- entities

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', shy: '\u00ad', copy: '©', reg: '®',
  trade: '™', hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”',
  laquo: '«', raquo: '»', bull: '•', middot: '·', euro: '€', pound: '£', yen: '¥', cent: '¢', sect: '§',
  para: '¶', deg: '°', times: '×', divide: '÷', zwnj: '\u200c', zwj: '\u200d', ensp: '\u2002',
  emsp: '\u2003', thinsp: '\u2009', num: '#', dollar: '$', percnt: '%', lpar: '(', rpar: ')', ast: '*',
  plus: '+', comma: ',', period: '.', sol: '/', bsol: '\\', colon: ':', semi: ';', equals: '=', quest: '?',
  commat: '@', lsqb: '[', rsqb: ']', lowbar: '_', grave: '`', lcub: '{', rcub: '}', verbar: '|',
  vert: '|', excl: '!', Hat: '^', NewLine: '\n', Tab: '\t', hyphen: '‐', dash: '‐',
};

/** Names browsers decode without `;` (HTML5 legacy references). */
const LEGACY = new Set(['amp', 'lt', 'gt', 'quot', 'nbsp', 'copy', 'reg', 'shy', 'deg', 'times', 'pound', 'yen', 'cent', 'sect', 'para', 'AMP', 'LT', 'GT', 'QUOT', 'COPY', 'REG']);

const CP1252: Record<number, number> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x0192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
  0x88: 0x02c6, 0x89: 0x2030, 0x8a: 0x0160, 0x8b: 0x2039, 0x8c: 0x0152, 0x8e: 0x017d, 0x91: 0x2018,
  0x92: 0x2019, 0x93: 0x201c, 0x94: 0x201d, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02dc,
  0x99: 0x2122, 0x9a: 0x0161, 0x9b: 0x203a, 0x9c: 0x0153, 0x9e: 0x017e, 0x9f: 0x0178,
};

function codePoint(cp: number): string {
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\ufffd';
  return String.fromCodePoint(CP1252[cp] ?? cp);
}

/**
 * Decodes character references in an attribute value the way a browser does (numeric ones in
 * full, named ones from the table above; an unknown name stays as written, and will then be
 * written out escaped, so the browser shows exactly the string that was checked).
 */
export function decodeAttributeValue(value: string): string {
  if (!value.includes('&')) return value;
  let out = '';
  let i = 0;
  while (i < value.length) {
    const amp = value.indexOf('&', i);
    if (amp < 0) {
      out += value.slice(i);
      break;
    }
    out += value.slice(i, amp);
    let j = amp + 1;
    if (value.charCodeAt(j) === 35 /* # */) {
      j++;
      const hex = value.charCodeAt(j) === 120 || value.charCodeAt(j) === 88;
      if (hex) j++;
      const start = j;
      while (j < value.length && (hex ? isHexDigit(value.charCodeAt(j)) : value.charCodeAt(j) >= 48 && value.charCodeAt(j) <= 57)) j++;
      if (j === start) {
        out += value.slice(amp, j);
        i = j;
        continue;
      }
      const digits = value.slice(start, j);
      const cp = digits.length > MAX_ENTITY_DIGITS ? 0x110000 : parseInt(digits, hex ? 16 : 10);
      if (value.charCodeAt(j) === 59 /* ; */) j++;
      out += codePoint(cp);
      i = j;
      continue;
    }
    const start = j;
    while (j < value.length && j - start < MAX_ENTITY_NAME && isAsciiAlnum(value.charCodeAt(j))) j++;
    const name = value.slice(start, j);
    if (value.charCodeAt(j) === 59 && NAMED[name] !== undefined) {
      out += NAMED[name];
      i = j + 1;
      continue;
    }
    // Legacy names without `;`: decoded unless followed by an alphanumeric or `=` (HTML5 attribute rule).
    let matched = false;
    for (let k = name.length; k >= 2; k--) {
      const prefix = name.slice(0, k);
      if (!LEGACY.has(prefix)) continue;
      const next = value.charCodeAt(start + k);
      if (k === name.length && next === 61 /* = */) break;
      if (k < name.length) break; // followed by an alphanumeric
      out += NAMED[prefix.toLowerCase()] ?? '';
      i = start + k;
      matched = true;
      break;
    }
    if (matched) continue;
    out += '&';
    i = amp + 1;
  }
  return out;
}

// ---------------------------------------------------------------- tokenizer

interface Attribute {
  name: string;
  value: string;
}

type Token =
  | { kind: 'text'; text: string }
  | { kind: 'start'; name: string; attrs: Attribute[]; selfClosing: boolean; raw?: string }
  | { kind: 'end'; name: string }
  | { kind: 'skip' };

/**
 * A forward-only HTML tokenizer close to HTML5 §13.2.5 for the data state, tags, attributes,
 * comments, bogus comments, doctypes and raw-text elements. Its exactness is not what keeps
 * the output safe (the writer below is), but being close keeps the rendering faithful.
 */
class Tokenizer {
  private pos = 0;
  private readonly lower: string;

  constructor(private readonly src: string) {
    this.lower = asciiLower(src);
  }

  next(): Token | undefined {
    const s = this.src;
    if (this.pos >= s.length) return undefined;
    const lt = s.indexOf('<', this.pos);
    if (lt !== this.pos) {
      const end = lt < 0 ? s.length : lt;
      const text = s.slice(this.pos, end);
      this.pos = end;
      return { kind: 'text', text };
    }
    const c = s.charCodeAt(lt + 1);
    if (c === 33 /* ! */) {
      if (s.startsWith('--', lt + 2)) {
        // Comment: ends at `-->` or `--!>`; `<!-->` and `<!--->` are empty comments.
        const bodyStart = lt + 4;
        if (s.charCodeAt(bodyStart) === 62) return this.skipTo(bodyStart + 1);
        if (s.startsWith('->', bodyStart)) return this.skipTo(bodyStart + 2);
        let k = bodyStart;
        for (;;) {
          const dd = s.indexOf('--', k);
          if (dd < 0) return this.skipTo(s.length);
          if (s.charCodeAt(dd + 2) === 62) return this.skipTo(dd + 3);
          if (s.charCodeAt(dd + 2) === 33 && s.charCodeAt(dd + 3) === 62) return this.skipTo(dd + 4);
          k = dd + 1;
        }
      }
      // Doctype, CDATA (a bogus comment in HTML content) and other `<!…>`: up to the next `>`.
      return this.skipToGt(lt + 2);
    }
    if (c === 63 /* ? */) return this.skipToGt(lt + 2);
    if (c === 47 /* / */) {
      const n = s.charCodeAt(lt + 2);
      if (isAsciiAlpha(n)) return this.tag(lt + 2, true);
      if (n === 62) return this.skipTo(lt + 3); // `</>` is ignored
      if (lt + 2 >= s.length) {
        this.pos = s.length;
        return { kind: 'text', text: '</' };
      }
      return this.skipToGt(lt + 2); // bogus comment
    }
    if (isAsciiAlpha(c)) return this.tag(lt + 1, false);
    this.pos = lt + 1;
    return { kind: 'text', text: '<' };
  }

  /** Skips the content of a raw-text element up to (not including) its end tag. */
  skipRawText(name: string): void {
    const needle = '</' + name;
    let k = this.pos;
    for (;;) {
      const at = this.lower.indexOf(needle, k);
      if (at < 0) {
        this.pos = this.src.length;
        return;
      }
      const after = this.src.charCodeAt(at + needle.length);
      if (isHtmlSpace(after) || after === 47 || after === 62 || Number.isNaN(after)) {
        this.pos = at;
        return;
      }
      k = at + needle.length;
    }
  }

  /** Reads raw text (the CSS of a `<style>`) up to its end tag. */
  readRawText(name: string): string {
    const start = this.pos;
    this.skipRawText(name);
    return this.src.slice(start, this.pos);
  }

  private skipTo(pos: number): Token {
    this.pos = Math.min(pos, this.src.length);
    return { kind: 'skip' };
  }

  private skipToGt(from: number): Token {
    const gt = this.src.indexOf('>', from);
    return this.skipTo(gt < 0 ? this.src.length : gt + 1);
  }

  private tag(nameStart: number, isEnd: boolean): Token {
    const s = this.src;
    let i = nameStart;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (isHtmlSpace(c) || c === 47 || c === 62) break;
      i++;
    }
    const name = this.lower.slice(nameStart, i);
    const attrs: Attribute[] = [];
    const seen = new Set<string>();
    let selfClosing = false;
    for (;;) {
      while (i < s.length && (isHtmlSpace(s.charCodeAt(i)) || s.charCodeAt(i) === 47)) {
        selfClosing = s.charCodeAt(i) === 47 && s.charCodeAt(i + 1) === 62;
        i++;
      }
      if (i >= s.length) {
        // EOF inside a tag: the browser drops the tag, and so do we.
        this.pos = s.length;
        return { kind: 'skip' };
      }
      if (s.charCodeAt(i) === 62) {
        i++;
        break;
      }
      selfClosing = false;
      // Attribute name: the first character may be `=`; then up to space, `/`, `>` or `=`.
      const an = i;
      i++;
      while (i < s.length) {
        const c = s.charCodeAt(i);
        if (isHtmlSpace(c) || c === 47 || c === 62 || c === 61) break;
        i++;
      }
      const attrName = this.lower.slice(an, i);
      let j = i;
      while (j < s.length && isHtmlSpace(s.charCodeAt(j))) j++;
      let value = '';
      if (s.charCodeAt(j) === 61 /* = */) {
        j++;
        while (j < s.length && isHtmlSpace(s.charCodeAt(j))) j++;
        const q = s.charCodeAt(j);
        if (q === 34 || q === 39) {
          const close = s.indexOf(q === 34 ? '"' : "'", j + 1);
          if (close < 0) {
            this.pos = s.length;
            return { kind: 'skip' };
          }
          value = s.slice(j + 1, close);
          i = close + 1;
        } else {
          const vs = j;
          while (j < s.length && !isHtmlSpace(s.charCodeAt(j)) && s.charCodeAt(j) !== 62) j++;
          value = s.slice(vs, j);
          i = j;
        }
      }
      // Duplicate attributes: the first one wins, as in the browser.
      if (!seen.has(attrName)) {
        seen.add(attrName);
        attrs.push({ name: attrName, value });
      }
    }
    this.pos = i;
    if (isEnd) return { kind: 'end', name };
    return { kind: 'start', name, attrs, selfClosing };
  }
}

// ---------------------------------------------------------------- URLs

/** Removes what browsers strip from URLs before reading the scheme (controls, spaces, tabs, newlines). */
function urlForSchemeCheck(url: string): string {
  return url.replace(/[\u0000-\u0020\u007f]/g, '').toLowerCase();
}

function isRemoteUrl(url: string): boolean {
  const u = urlForSchemeCheck(url);
  return u.startsWith('http:') || u.startsWith('https:') || u.startsWith('//') || u.startsWith('\\\\') || u.startsWith('/\\') || u.startsWith('\\/');
}

type ImageDecision = { keep: true; url: string } | { keep: false; remote: boolean };

function decideImageUrl(raw: string, opts: SanitizeOptions): ImageDecision {
  const url = raw.trim();
  const u = urlForSchemeCheck(url);
  if (u.startsWith('cid:')) {
    const resolved = opts.resolveCid?.(url.slice(url.indexOf(':') + 1).trim());
    if (resolved !== undefined && DATA_IMAGE.test(resolved)) return { keep: true, url: resolved };
    return { keep: true, url: 'cid:' + url.slice(url.indexOf(':') + 1).trim() };
  }
  if (DATA_IMAGE.test(url)) return { keep: true, url };
  if (u.startsWith('http:') || u.startsWith('https:')) {
    return opts.allowRemoteImages ? { keep: true, url } : { keep: false, remote: true };
  }
  if (u.startsWith('//')) return opts.allowRemoteImages ? { keep: true, url: 'https:' + url.replace(/^[\s/\\]+/, '//') } : { keep: false, remote: true };
  // Relative URLs would resolve against the webview; other schemes are never images.
  return { keep: false, remote: isRemoteUrl(url) };
}

/** A link target listed for the Links tab (http, https, mailto, tel, sms), or undefined. */
export function safeLinkTarget(raw: string): string | undefined {
  const url = raw.trim();
  if (!LINK_SCHEME.test(urlForSchemeCheck(url))) return undefined;
  if (/[\u0000-\u001f\u007f]/.test(url)) return undefined;
  return url;
}

// ---------------------------------------------------------------- CSS

/** Decodes one CSS escape at `s[i] === '\\'`; returns the character and the index after it. */
function cssEscapeAt(s: string, i: number): { ch: string; end: number } {
  let j = i + 1;
  if (j >= s.length) return { ch: '\ufffd', end: j };
  if (s[j] === '\n') return { ch: '', end: j + 1 };
  if (isHexDigit(s.charCodeAt(j))) {
    const start = j;
    while (j < s.length && j - start < 6 && isHexDigit(s.charCodeAt(j))) j++;
    const cp = parseInt(s.slice(start, j), 16);
    if (j < s.length && isHtmlSpace(s.charCodeAt(j))) j++;
    return { ch: codePoint(cp === 0 ? 0xfffd : cp), end: j };
  }
  return { ch: s[j], end: j + 1 };
}

/** Fully decodes CSS escapes (for checking a URL inside `url()` or a string). */
function decodeCssEscapes(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; ) {
    if (s[i] === '\\') {
      const e = cssEscapeAt(s, i);
      out += e.ch;
      i = e.end;
    } else out += s[i++];
  }
  return out;
}

/**
 * Rewrites escapes that spell identifier characters (`\72` → `r`) so that `u\72l(` or
 * `@\69mport` are seen for what they are; other escapes (quotes, punctuation) stay escaped.
 */
function revealEscapedIdentifiers(s: string): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let i = 0; i < s.length; ) {
    if (s[i] === '\\') {
      const e = cssEscapeAt(s, i);
      if (/^[a-zA-Z0-9_-]$/.test(e.ch)) {
        out += e.ch;
        i = e.end;
        continue;
      }
      out += s.slice(i, e.end);
      i = e.end;
    } else out += s[i++];
  }
  return out;
}

/** Functions whose string arguments are fetched as URLs; renamed (so the declaration is dropped) unless remote is allowed. */
const URL_STRING_FUNCTIONS = /(^|[^a-zA-Z0-9_-])(-webkit-image-set|-moz-image-set|image-set|image|cross-fade|-webkit-cross-fade|src)\s*\(/gi;

/** Replaces each call of a URL-taking function (`image-set(…)`…) with `none`, skipping over strings and nested parentheses. */
function removeUrlStringFunctions(css: string): { css: string; count: number } {
  let out = '';
  let count = 0;
  let i = 0;
  URL_STRING_FUNCTIONS.lastIndex = 0;
  for (let m = URL_STRING_FUNCTIONS.exec(css); m !== null; m = URL_STRING_FUNCTIONS.exec(css)) {
    if (m.index < i) continue;
    out += css.slice(i, m.index) + m[1];
    let j = m.index + m[0].length;
    let depth = 1;
    while (j < css.length && depth > 0) {
      const c = css[j];
      if (c === '\\') j += 2;
      else if (c === '"' || c === "'") {
        j++;
        while (j < css.length && css[j] !== c && css[j] !== '\n') j += css[j] === '\\' ? 2 : 1;
        j++;
      } else {
        if (c === '(') depth++;
        else if (c === ')') depth--;
        j++;
      }
    }
    out += 'none';
    count++;
    i = Math.min(j, css.length);
    URL_STRING_FUNCTIONS.lastIndex = i;
  }
  return { css: out + css.slice(i), count };
}

export interface CssResult {
  css: string;
  blockedRemote: number;
  removed: number;
}

/**
 * Neutralizes CSS from a `style` attribute or a `<style>` element: comments removed, `@import`
 * and old script-bearing features (`expression()`, `behavior`, `-moz-binding`) disabled,
 * `url()` checked like an image (remote ones become `none` unless allowed), `<` escaped so the
 * text cannot close its element.
 */
export function sanitizeCss(input: string, opts: SanitizeOptions = {}): CssResult {
  let blockedRemote = 0;
  let removed = 0;
  // 1. Comments out (a comment can hide nothing once it is gone); unterminated ones run to the end.
  let css = '';
  for (let i = 0; i < input.length; ) {
    const open = input.indexOf('/*', i);
    if (open < 0) {
      css += input.slice(i);
      break;
    }
    css += input.slice(i, open) + ' ';
    const close = input.indexOf('*/', open + 2);
    i = close < 0 ? input.length : close + 2;
  }
  // 2. Escapes that spell identifiers become plain letters.
  css = revealEscapedIdentifiers(css);
  // 3. url(...) tokens: checked after decoding, written back quoted and escaped.
  let out = '';
  const lower = asciiLower(css);
  for (let i = 0; i < css.length; ) {
    const at = lower.indexOf('url(', i);
    if (at < 0) {
      out += css.slice(i);
      break;
    }
    const prev = at > 0 ? lower.charCodeAt(at - 1) : 0;
    if (at > 0 && (isAsciiAlnum(prev) || prev === 45 || prev === 95)) {
      out += css.slice(i, at + 4);
      i = at + 4;
      continue;
    }
    out += css.slice(i, at);
    let j = at + 4;
    while (j < css.length && isHtmlSpace(css.charCodeAt(j))) j++;
    let arg = '';
    const q = css[j];
    if (q === '"' || q === "'") {
      let k = j + 1;
      while (k < css.length && css[k] !== q && css[k] !== '\n') k += css[k] === '\\' ? 2 : 1;
      arg = css.slice(j + 1, Math.min(k, css.length));
      j = k + 1;
      while (j < css.length && isHtmlSpace(css.charCodeAt(j))) j++;
      if (css[j] === ')') j++;
      else {
        const close = css.indexOf(')', j);
        j = close < 0 ? css.length : close + 1;
      }
    } else {
      let k = j;
      while (k < css.length && css[k] !== ')') k += css[k] === '\\' ? 2 : 1;
      arg = css.slice(j, Math.min(k, css.length));
      j = Math.min(k + 1, css.length);
    }
    const decision = decideImageUrl(decodeCssEscapes(arg), opts);
    if (decision.keep) {
      out += 'url("' + decision.url.replace(/[\\"<>\n\r\f]/g, (c) => '\\' + c.charCodeAt(0).toString(16) + ' ') + '")';
    } else {
      out += 'none';
      if (decision.remote) blockedRemote++;
      else removed++;
    }
    i = j;
  }
  css = out;
  // 4. At-rules and properties that load or run things.
  css = css.replace(/@import\b[^;{}]*;?/gi, () => {
    removed++;
    return '';
  });
  css = css.replace(/expression\s*\(/gi, () => {
    removed++;
    return 'blocked(';
  });
  css = css.replace(/(-moz-binding|behavior)\s*:/gi, (_m, p: string) => {
    removed++;
    return 'x-blocked-' + p + ':';
  });
  if (!opts.allowRemoteImages) {
    const r = removeUrlStringFunctions(css);
    css = r.css;
    blockedRemote += r.count;
  }
  // 5. Nothing in the text may close the element or the attribute it sits in.
  css = css.replace(/</g, '\\3c ').replace(/>/g, '\\3e ');
  return { css, blockedRemote, removed };
}

// ---------------------------------------------------------------- writer

/**
 * Sanitizes email HTML (a whole document or a fragment) into body markup made only of
 * allowlisted elements and attributes. Links lose their `href` (the iframe cannot open them
 * safely; the Links tab does, through the host) and keep the URL visible as a tooltip.
 */
export function sanitizeEmailHtml(input: string, opts: SanitizeOptions = {}): SanitizeResult {
  const truncated = input.length > MAX_SANITIZE_INPUT;
  const src = truncated ? input.slice(0, MAX_SANITIZE_INPUT) : input;
  const tok = new Tokenizer(src);
  let out = '';
  let blockedRemote = 0;
  let removed = 0;
  let dropDepth = 0;
  let dropName = '';

  for (let t = tok.next(); t !== undefined; t = tok.next()) {
    if (t.kind === 'skip') continue;
    if (dropDepth > 0) {
      // Inside a subtree being dropped: only track nesting of the same element.
      if (t.kind === 'start') {
        if (RAW_TEXT.has(t.name) && !t.selfClosing) tok.skipRawText(t.name);
        if (t.name === dropName && !t.selfClosing && dropDepth < MAX_DROP_DEPTH) dropDepth++;
      } else if (t.kind === 'end' && t.name === dropName) dropDepth--;
      continue;
    }
    if (t.kind === 'text') {
      out += escapeTextKeepingReferences(t.text);
      continue;
    }
    if (t.kind === 'end') {
      if (t.name.length <= MAX_NAME && ALLOWED_ELEMENTS.has(t.name) && !VOID_ELEMENTS.has(t.name)) out += `</${t.name}>`;
      continue;
    }
    const name = t.name;
    if (name === 'style') {
      const css = sanitizeCss(tok.readRawText('style'), opts);
      blockedRemote += css.blockedRemote;
      removed += css.removed;
      out += `<style>${css.css}</style>`;
      continue;
    }
    if (DROP_SUBTREE.has(name)) {
      removed++;
      if (name === 'plaintext') break; // everything after it is text of a dropped element
      if (RAW_TEXT.has(name)) {
        tok.skipRawText(name);
        continue; // its end tag is skipped as an unknown end tag
      }
      if (!t.selfClosing && !VOID_ELEMENTS.has(name)) {
        dropDepth = 1;
        dropName = name;
      }
      continue;
    }
    if (name === 'noscript') continue; // scripting is off in the iframe: its content is ordinary markup
    if (DANGEROUS_TAGS.has(name)) {
      removed++;
      continue;
    }
    if (name.length > MAX_NAME || !ALLOWED_ELEMENTS.has(name)) continue;
    let attrs = '';
    const hasTitle = t.attrs.some((x) => x.name === 'title');
    for (const a of t.attrs) {
      if (a.name.length > MAX_NAME) continue;
      const value = decodeAttributeValue(a.value);
      if (a.name === 'style') {
        const css = sanitizeCss(value, opts);
        blockedRemote += css.blockedRemote;
        removed += css.removed;
        if (css.css.trim()) attrs += ` style="${escapeHtmlAttribute(css.css)}"`;
        continue;
      }
      if (a.name === 'href' && name === 'a') {
        const target = safeLinkTarget(value);
        if (target === undefined) {
          if (value.trim() && !value.trim().startsWith('#')) removed++;
          continue;
        }
        if (!hasTitle) attrs += ` title="${escapeHtmlAttribute(target)}"`;
        attrs += ' data-link=""';
        continue;
      }
      if ((a.name === 'src' && name === 'img') || (a.name === 'background' && (name === 'table' || name === 'td' || name === 'th' || name === 'tr'))) {
        const d = decideImageUrl(value, opts);
        if (d.keep) attrs += ` ${a.name}="${escapeHtmlAttribute(d.url)}"`;
        else if (d.remote) {
          blockedRemote++;
          if (name === 'img') attrs += ' data-blocked-image=""';
        } else removed++;
        continue;
      }
      if (a.name === 'srcset' || a.name === 'sizes' || a.name === 'lowsrc' || a.name === 'dynsrc') {
        blockedRemote++;
        continue;
      }
      if (PLAIN_ATTRIBUTES.has(a.name) || (a.name.startsWith('aria-') && /^aria-[a-z]+$/.test(a.name))) {
        attrs += ` ${a.name}="${escapeHtmlAttribute(value)}"`;
        continue;
      }
      if (a.name.startsWith('on') || a.name === 'formaction' || a.name === 'action' || a.name === 'xlink:href' || a.name === 'href' || a.name === 'src') removed++;
    }
    out += `<${name}${attrs}>`;
  }
  return { html: out, blockedRemote, removed, truncated };
}

// ---------------------------------------------------------------- document

/** CSP of the iframe document: nothing but inline styles and data:/cid: images, plus remote images when allowed. */
export function srcdocCsp(allowRemoteImages: boolean): string {
  return `default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:${allowRemoteImages ? ' https: http:' : ''}; form-action 'none'; base-uri 'none'`;
}

export interface SrcdocResult extends SanitizeResult {
  /** A full HTML document for `iframe.srcdoc`, with its own CSP. */
  srcdoc: string;
}

/** Base look inside the iframe: readable defaults that do not fight the email's own styles. */
const SRCDOC_BASE_CSS =
  'html{color-scheme:light}body{margin:8px;background:#fff;color:#000;font:14px/1.4 system-ui,sans-serif;word-wrap:break-word}' +
  'img{max-width:100%;height:auto}img[data-blocked-image]{outline:1px dashed #999;min-width:16px;min-height:16px}' +
  'a[data-link]{color:#0b57d0;text-decoration:underline;cursor:default}';

/**
 * Sanitizes email HTML and wraps it into a document for a sandboxed `srcdoc` iframe: a CSP
 * meta first, no referrer, base styles, then the sanitized body.
 */
export function buildSrcdoc(html: string, opts: SanitizeOptions = {}): SrcdocResult {
  const r = sanitizeEmailHtml(html, opts);
  const srcdoc =
    '<!DOCTYPE html><html><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtmlAttribute(srcdocCsp(!!opts.allowRemoteImages))}">` +
    '<meta name="referrer" content="no-referrer">' +
    `<style>${SRCDOC_BASE_CSS}</style></head><body>${r.html}</body></html>`;
  return { ...r, srcdoc };
}
