// The subject and text bodies of the messages most apps send, read without a full MIME parse,
// for the code read after each acknowledgement (code.ts). postal-mime's parse of a 4 KB
// message took 0.4 ms, most of it turning each part's lines into a Blob and back; this reads
// the same answer in a few microseconds.
//
// Only two shapes are read here, each exactly as postal-mime reads it (the one parser every
// view of a message uses, server/mime/render.ts): a single text/plain or text/html part, and
// a multipart/alternative of such parts. Anything else, or anything unusual in them (comments
// or continuations in a header, a charset other than UTF-8 or Latin-1, format=flowed, base64
// that is not plain, a part without a blank line after its headers, an attachment), answers
// undefined and the caller parses with postal-mime. test/server/quickText.test.ts checks the
// answers against postal-mime on generated messages of both shapes and their variations.
import { TextDecoder } from 'node:util';
import { decodeWords } from 'postal-mime';

/** What the code is read from: postal-mime's `subject`, `text` and `html` of the message. */
export interface QuickText {
  subject?: string;
  text?: string;
  html?: string;
}

/** Header lines are UTF-8, a U+FEFF at a line's start kept as a character (as postal-mime reads them). */
const headerDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** Charsets read here, by the label a part names (lowercased): the decoder postal-mime makes for each. */
const CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii', 'iso-8859-1', 'windows-1252']);
const bodyDecoders = new Map<string, TextDecoder>();

function bodyDecoder(label: string): TextDecoder {
  let d = bodyDecoders.get(label);
  if (!d) bodyDecoders.set(label, (d = new TextDecoder(label)));
  return d;
}

/** `type/subtype` and `; name=value` parameters (tokens or plain quoted strings), nothing else. */
const CONTENT_TYPE_RE = /^([A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+)((?:[ \t]*;[ \t]*[A-Za-z0-9-]+=(?:"[^"\\()]*"|[A-Za-z0-9!#$%&'+.^_`|~-]+))*)[ \t]*;?$/;
const PARAM_RE = /;[ \t]*([A-Za-z0-9-]+)=(?:"([^"]*)"|([^;\s]+))/g;
const TOKEN_RE = /^[A-Za-z0-9-]+$/;
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

interface Line {
  start: number;
  /** End of the line without its trailing CR and LF characters. */
  end: number;
}

interface Part {
  type: string;
  params: Map<string, string>;
  encoding: string;
  disposition: string;
  subject?: string;
}

/** The lines of `raw`, split at LF, each without the CRs that end it (postal-mime's readLine). */
function splitLines(raw: Buffer): Line[] {
  const lines: Line[] = [];
  let pos = 0;
  while (pos < raw.length) {
    const lf = raw.indexOf(0x0a, pos);
    const stop = lf < 0 ? raw.length : lf;
    let end = stop;
    while (end > pos && raw[end - 1] === 0x0d) end--;
    lines.push({ start: pos, end });
    pos = stop + 1;
  }
  return lines;
}

/** Trims only the whitespace RFC 5322 allows around a field (SP and HTAB). */
function trimWsp(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s[a] === ' ' || s[a] === '\t')) a++;
  while (b > a && (s[b - 1] === ' ' || s[b - 1] === '\t')) b--;
  return s.slice(a, b);
}

/**
 * The header block of a part, lines [from, to): its content fields (the first of each) and
 * the index of its body's first line; undefined when no blank line ends it or a field is
 * beyond this reader.
 */
function readPart(raw: Buffer, lines: Line[], from: number, to: number): { part: Part; body: number } | undefined {
  const folded: string[][] = [];
  let blank = -1;
  for (let i = from; i < to; i++) {
    const l = lines[i];
    if (l.end === l.start) {
      blank = i;
      break;
    }
    const text = headerDecoder.decode(raw.subarray(l.start, l.end));
    if (folded.length > 0 && (text[0] === ' ' || text[0] === '\t')) folded[folded.length - 1].push(text);
    else folded.push([text]);
  }
  if (blank < 0) return undefined;
  const first = new Map<string, string>();
  for (const f of folded) {
    const line = f.join('');
    const sep = line.indexOf(':');
    const key = trimWsp(sep < 0 ? line : line.slice(0, sep)).toLowerCase();
    if (first.has(key)) continue;
    first.set(key, sep < 0 ? '' : trimWsp(line.slice(sep + 1).replace(/[\r\n]+/g, ' ')));
  }
  let type = 'text/plain';
  const params = new Map<string, string>();
  const ct = first.get('content-type');
  if (ct !== undefined) {
    const m = CONTENT_TYPE_RE.exec(ct);
    if (!m) return undefined;
    type = m[1].toLowerCase();
    for (const p of m[2].matchAll(PARAM_RE)) {
      const name = p[1].toLowerCase();
      if (params.has(name)) return undefined;
      params.set(name, p[2] ?? p[3]);
    }
  }
  const cte = first.get('content-transfer-encoding');
  if (cte !== undefined && !TOKEN_RE.test(cte)) return undefined;
  const disposition = (first.get('content-disposition') ?? '').toLowerCase();
  const subject = first.get('subject');
  return { part: { type, params, encoding: (cte ?? '').toLowerCase(), disposition, ...(subject ? { subject: decodeWords(subject) } : {}) }, body: blank + 1 };
}

/** The text of a text part's body lines [from, to), or undefined when this reader cannot decode it. */
function textOf(raw: Buffer, lines: Line[], from: number, to: number, part: Part): string | undefined {
  if (part.disposition !== '' && part.disposition !== 'inline') return undefined;
  if (part.params.has('format') || part.params.has('delsp')) return undefined;
  const charset = (part.params.get('charset') ?? 'utf8').trim().toLowerCase();
  if (!CHARSETS.has(charset)) return undefined;
  const bytes = part.encoding.includes('base64') ? base64Body(raw, lines, from, to) : part.encoding.includes('quoted-printable') ? qpBody(raw, lines, from, to) : plainBody(raw, lines, from, to);
  return bytes && bodyDecoder(charset).decode(bytes);
}

/** Each line and a LF after it. */
function plainBody(raw: Buffer, lines: Line[], from: number, to: number): Buffer {
  const chunks: Buffer[] = [];
  for (let i = from; i < to; i++) chunks.push(raw.subarray(lines[i].start, lines[i].end), LF);
  return Buffer.concat(chunks);
}

const LF = Buffer.from('\n');

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/** Quoted-printable: `=XX` is a byte, a `=` ending a line joins it to the next, anything else is literal. */
function qpBody(raw: Buffer, lines: Line[], from: number, to: number): Buffer {
  let size = 0;
  for (let i = from; i < to; i++) size += lines[i].end - lines[i].start + 1;
  const out = Buffer.allocUnsafe(size);
  let n = 0;
  for (let i = from; i < to; i++) {
    const { start } = lines[i];
    let end = lines[i].end;
    const soft = end > start && raw[end - 1] === 0x3d;
    if (soft) end--;
    for (let j = start; j < end; j++) {
      const c = raw[j];
      if (c === 0x3d && j + 2 < end) {
        const hi = hexValue(raw[j + 1]);
        const lo = hexValue(raw[j + 2]);
        if (hi >= 0 && lo >= 0) {
          out[n++] = (hi << 4) | lo;
          j += 2;
          continue;
        }
      }
      out[n++] = c;
    }
    if (!soft) out[n++] = 0x0a;
  }
  return out.subarray(0, n);
}

/** Base64 of whole groups with padding only at its very end; undefined for anything looser. */
function base64Body(raw: Buffer, lines: Line[], from: number, to: number): Buffer | undefined {
  let text = '';
  for (let i = from; i < to; i++) text += raw.toString('latin1', lines[i].start, lines[i].end);
  if (text.length % 4 !== 0 || !BASE64_RE.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** Whether line `l` is `--boundary` or `--boundary--`, then only SP and HTAB: 'part', 'end' or false. */
function boundaryKind(raw: Buffer, l: Line, boundary: Buffer): 'part' | 'end' | false {
  const len = l.end - l.start;
  if (len <= 2 || len < boundary.length + 2 || raw[l.start] !== 0x2d || raw[l.start + 1] !== 0x2d) return false;
  if (raw.compare(boundary, 0, boundary.length, l.start + 2, l.start + 2 + boundary.length) !== 0) return false;
  let at = l.start + 2 + boundary.length;
  let kind: 'part' | 'end' = 'part';
  if (len >= boundary.length + 4 && raw[at] === 0x2d && raw[at + 1] === 0x2d) {
    kind = 'end';
    at += 2;
  }
  for (; at < l.end; at++) if (raw[at] !== 0x20 && raw[at] !== 0x09) return false;
  return kind;
}

function joined(texts: string[]): string | undefined {
  const s = texts.join('\n');
  return s === '' ? undefined : s;
}

/** The subject, text and HTML of `raw` as postal-mime reads them, or undefined when the message is not of a shape read here. */
export function quickText(raw: Buffer): QuickText | undefined {
  if (raw.length === 0) return undefined;
  const lines = splitLines(raw);
  const root = readPart(raw, lines, 0, lines.length);
  if (!root) return undefined;
  const { part, body } = root;
  const out: QuickText = part.subject ? { subject: part.subject } : {};
  if (part.type === 'text/plain' || part.type === 'text/html') {
    const text = textOf(raw, lines, body, lines.length, part);
    if (text === undefined) return undefined;
    if (text !== '') out[part.type === 'text/html' ? 'html' : 'text'] = text;
    return out;
  }
  if (part.type !== 'multipart/alternative') return undefined;
  const b = part.params.get('boundary');
  if (!b) return undefined;
  const boundary = Buffer.from(b);
  // Parts: the lines between one boundary line and the next (or the closing one, or the end).
  const starts: number[] = [];
  let stop = lines.length;
  for (let i = body; i < lines.length; i++) {
    const kind = boundaryKind(raw, lines[i], boundary);
    if (kind === 'part') starts.push(i);
    else if (kind === 'end') {
      stop = i;
      break;
    }
  }
  if (starts.length === 0) return undefined;
  const plain: string[] = [];
  const html: string[] = [];
  for (let k = 0; k < starts.length; k++) {
    const end = k + 1 < starts.length ? starts[k + 1] : stop;
    const child = readPart(raw, lines, starts[k] + 1, end);
    if (!child || (child.part.type !== 'text/plain' && child.part.type !== 'text/html')) return undefined;
    const text = textOf(raw, lines, child.body, end, child.part);
    if (text === undefined) return undefined;
    (child.part.type === 'text/html' ? html : plain).push(text);
  }
  const text = joined(plain);
  const h = joined(html);
  if (text !== undefined) out.text = text;
  if (h !== undefined) out.html = h;
  return out;
}
