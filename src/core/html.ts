// HTML reading on the Node side (server text views, code extraction, link lists), as thin
// wrappers over htmlparser2's streaming parser: it tokenizes, decodes character references
// and closes implied elements; this module only decides what text a reader sees. Chosen over
// parse5 by bench/html-parsers.ts (18 MB message: several times faster, a tenth of the heap).
// Not used by the message view, which sanitizes with DOMPurify on the browser's own parser.
import { Parser } from 'htmlparser2';

interface HtmlHandler {
  /** A start tag, lowercased, with its attributes (references decoded, the first of duplicates kept). */
  open?(name: string, attrs: Record<string, string>): void;
  /**
   * An element ends: `implied` when no end tag closed it (void elements, `<p>` closed by a
   * block, elements left open); `atEnd` when it was still open at the end of the input.
   */
  close?(name: string, implied: boolean, atEnd: boolean): void;
  /** Text with references decoded; raw text of script/style/title/textarea too. Comments are not reported. */
  text?(text: string): void;
}

/** Streams `html` through htmlparser2. Never throws: whatever could be read before a failure has been reported. */
export function parseHtml(html: string, handler: HtmlHandler): void {
  let atEnd = false;
  const parser = new Parser(
    {
      onopentag: (name, attrs) => handler.open?.(name, attrs),
      onclosetag: (name, implied) => handler.close?.(name, implied, atEnd),
      ontext: (text) => handler.text?.(text),
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: false },
  );
  try {
    parser.write(html);
  } catch {
    // A parser failure keeps what was read so far.
  }
  atEnd = true;
  try {
    parser.end();
  } catch {
    // Same: the elements still open are simply not closed.
  }
}

/** Elements whose content is never shown. */
const INVISIBLE = new Set(['style', 'script', 'title', 'template', 'xmp', 'iframe', 'noembed', 'noframes', 'textarea']);

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
  if (Object.prototype.hasOwnProperty.call(attrs, 'hidden')) return true;
  const style = attrs.style;
  if (typeof style !== 'string') return false;
  const s = style.replace(/[ \t\n\r]+/g, '').toLowerCase();
  if (s.includes('display:none') || s.includes('visibility:hidden')) return true;
  const zeroSize = /(?:^|;)(?:max-)?height:0(?:px)?(?:;|!|$)/.test(s);
  return zeroSize && s.includes('overflow:hidden');
}

interface VisibleTextOptions {
  /** Keep text of elements hidden by `hidden`/`display:none` (e.g. preheaders). Default false. */
  includeHidden?: boolean;
}

/**
 * Reduces HTML to the text a reader sees: no head, style, script, title or comments, no
 * hidden elements (unless asked), references decoded, whitespace collapsed as a browser
 * does, one line per block element and a tab between table cells. No-break spaces become
 * spaces and zero-width characters are dropped. Lines are trimmed and empty lines dropped.
 * A hidden element left open at the end of the input keeps its text (a broken preheader
 * must not swallow the message); a script, style or title left open does not.
 */
export function htmlToText(html: string, options: VisibleTextOptions = {}): string {
  const parts: string[] = [];
  /** Open elements whose text is cut when they close: their depth and where their text starts in `parts`. */
  const cuts: Array<{ depth: number; from: number; byAttribute: boolean }> = [];
  let depth = 0;
  let inHead = false;
  let preDepth = 0;
  parseHtml(html, {
    open(name, attrs) {
      depth++;
      if (inHead && !HEAD_CONTENT.has(name)) inHead = false;
      if (name === 'head') inHead = true;
      const invisible = INVISIBLE.has(name);
      if (invisible || (!options.includeHidden && isHiddenElement(attrs))) cuts.push({ depth, from: parts.length, byAttribute: !invisible });
      if (name === 'pre') preDepth++;
      if (BLOCK.has(name)) parts.push('\n');
      else if (CELL.has(name)) parts.push('\t');
    },
    close(name, _implied, atEnd) {
      const cut = cuts[cuts.length - 1];
      if (cut !== undefined && cut.depth === depth) {
        cuts.pop();
        if (!(atEnd && cut.byAttribute)) parts.length = cut.from;
      }
      depth--;
      if (name === 'head') inHead = false;
      else if (name === 'pre' && preDepth > 0) preDepth--;
      if (BLOCK.has(name)) parts.push('\n');
      else if (CELL.has(name)) parts.push('\t');
    },
    text(text) {
      if (inHead && cuts.length === 0) {
        if (text.trim() === '') return;
        inHead = false;
      }
      parts.push(preDepth > 0 ? text.replace(/\r\n?/g, '\n') : text.replace(/[ \t\n\r\f]+/g, ' '));
    },
  });
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
