// Composes an injected (seed 4.4) or webhook (seed 4.5) message into RFC 5322 MIME bytes,
// so that every stored message is an ordinary .eml whatever way it arrived.
//
// Shape of the result:
//   From, To, Subject (RFC 2047 encoded-words when not plain ASCII), Date, Message-ID,
//   MIME-Version, Content-Type: text/plain; charset=utf-8,
//   Content-Transfer-Encoding: quoted-printable; CRLF line endings throughout.
// When the payload has no `from`, the sender is `<source>@<domain>` (e.g. `webhook@inbox.test`);
// when it has no subject, the subject is `(no subject)` (seed 4.5 rule 4).
import { randomUUID } from 'node:crypto';
import type { MessageSource } from '../store/types';

/** Subject used when the payload has none (seed 4.5 rule 4). */
export const DUMMY_SUBJECT = '(no subject)';
/** Longest header line we write unencoded; RFC 5322 2.1.1 recommends 78 characters. */
const MAX_PLAIN_HEADER_LENGTH = 78;
/** Longest header line allowed (RFC 5322 2.1.1). */
const MAX_HEADER_LINE = 998;
/** Quoted-printable lines are at most 76 characters including the soft-break `=` (RFC 2045 6.7). */
const QP_MAX_LINE = 75;
/** An encoded-word is at most 75 characters (RFC 2047 2); 45 bytes make 60 base64 characters. */
const ENCODED_WORD_MAX_BYTES = 45;

export type ComposeErrorCode = 'bad_from';

/** A payload that cannot become a message; the HTTP layer answers 400 with the message. */
export class ComposeError extends Error {
  readonly code: ComposeErrorCode;
  constructor(code: ComposeErrorCode, message: string) {
    super(message);
    this.name = 'ComposeError';
    this.code = code;
  }
  static is(err: unknown): err is ComposeError {
    return err instanceof ComposeError;
  }
}

export interface ComposeInput {
  from?: string;
  subject?: string;
  text?: string;
  /** Destination inbox (lowercase) and domain. */
  inbox: string;
  domain: string;
  /** `inject` or `webhook`: names the dummy sender. */
  source: Exclude<MessageSource, 'smtp'>;
  /** Date header; now by default. */
  date?: Date;
}

/** The sender written when the payload has no `from` (seed 4.5 rule 4). */
export function dummyFrom(source: Exclude<MessageSource, 'smtp'>, domain: string): string {
  return `${source}@${domain}`;
}

const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const PRINTABLE_ASCII_RE = /^[\u0020-\u007e]*$/;
const NAME_ADDR_RE = /^(.*?)\s*<([^<>\s]+@[^<>\s]+)>$/;
const BARE_ADDR_RE = /^[^\s@<>",;:()[\]\\]+@[^\s@<>",;:()[\]\\]+$/;
/** Characters that force a display name into a quoted string (RFC 5322 3.2.3 specials). */
const SPECIALS_RE = /[()<>[\]:;@\\,."]/;

/** Why a `from` value cannot be used, or undefined. */
export function fromProblem(from: string): string | undefined {
  if (CONTROL_RE.test(from)) return 'from must not contain line breaks or control characters';
  return undefined;
}

export function composeMessage(input: ComposeInput): Buffer {
  const from = input.from === undefined || input.from.trim() === '' ? dummyFrom(input.source, input.domain) : input.from.trim();
  const problem = fromProblem(from);
  if (problem) throw new ComposeError('bad_from', problem);
  // Blanks at the ends of a header are not significant (RFC 5322 3.2.2); they are dropped.
  const subject = input.subject === undefined || input.subject.trim() === '' ? DUMMY_SUBJECT : input.subject.trim();
  const date = input.date ?? new Date();
  const head =
    `From: ${formatFrom(from)}\r\n` +
    `To: ${input.inbox}@${input.domain}\r\n` +
    `Subject: ${encodeHeaderText(subject, 'Subject: '.length)}\r\n` +
    `Date: ${formatDate(date)}\r\n` +
    `Message-ID: <${randomUUID()}@${input.domain}>\r\n` +
    'MIME-Version: 1.0\r\n' +
    'Content-Type: text/plain; charset=utf-8\r\n' +
    'Content-Transfer-Encoding: quoted-printable\r\n' +
    '\r\n';
  const body = encodeQuotedPrintable(input.text ?? '');
  return Buffer.from(body.endsWith('\r\n') || body === '' ? head + body : head + body + '\r\n', 'utf8');
}

/** `Name <addr>`, a bare address, or free text (a phone number, a service name) as a phrase. */
function formatFrom(from: string): string {
  const m = NAME_ADDR_RE.exec(from);
  if (m) {
    let name = m[1].trim();
    if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
    return name === '' ? `<${m[2]}>` : `${formatPhrase(name)} <${m[2]}>`;
  }
  if (BARE_ADDR_RE.test(from)) return from;
  return formatPhrase(from);
}

function formatPhrase(name: string): string {
  if (!PRINTABLE_ASCII_RE.test(name)) return encodeWords(name, 'From: '.length);
  if (SPECIALS_RE.test(name)) return `"${name.replace(/(["\\])/g, '\\$1')}"`;
  return name;
}

/**
 * Printable ASCII is written as is, folded at spaces onto lines of at most 78 characters where
 * it has spaces (RFC 5322 2.2.3); anything else, or a word too long for one line (998), becomes
 * RFC 2047 `=?UTF-8?B?…?=` words folded onto lines.
 */
export function encodeHeaderText(value: string, prefixLength: number): string {
  if (PRINTABLE_ASCII_RE.test(value)) {
    if (value.length + prefixLength <= MAX_PLAIN_HEADER_LENGTH) return value;
    const folded = foldAscii(value, prefixLength);
    if (folded !== undefined) return folded;
  }
  return encodeWords(value, prefixLength);
}

/** Folds at spaces; undefined when a word cannot fit on a line of MAX_HEADER_LINE characters. */
function foldAscii(value: string, prefixLength: number): string | undefined {
  const words = value.split(' ');
  let out = '';
  let lineLength = prefixLength;
  for (let k = 0; k < words.length; k++) {
    const w = words[k];
    if (prefixLength + 1 + w.length > MAX_HEADER_LINE) return undefined;
    if (k === 0) {
      out = w;
      lineLength += w.length;
    } else if (w !== '' && lineLength + 1 + w.length > MAX_PLAIN_HEADER_LENGTH) {
      out += '\r\n ' + w;
      lineLength = 1 + w.length;
    } else {
      out += ' ' + w;
      lineLength += 1 + w.length;
    }
  }
  return out;
}

/** Encoded-words of at most 45 bytes; the first one is shorter so its line, after `prefixLength` characters, stays within 78. */
function encodeWords(value: string, prefixLength: number): string {
  const firstLineChars = MAX_PLAIN_HEADER_LENGTH - prefixLength - '=?UTF-8?B??='.length;
  const firstMax = Math.max(3, Math.min(ENCODED_WORD_MAX_BYTES, Math.floor(firstLineChars / 4) * 3));
  const words: string[] = [];
  let start = 0;
  let bytes = 0;
  let i = 0;
  while (i < value.length) {
    const cp = value.codePointAt(i) ?? 0;
    // UTF-8 length; a lone surrogate is written as U+FFFD, 3 bytes.
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const max = words.length === 0 ? firstMax : ENCODED_WORD_MAX_BYTES;
    if (bytes + n > max && i > start) {
      words.push(encodedWord(value.slice(start, i)));
      start = i;
      bytes = 0;
    }
    bytes += n;
    i += cp > 0xffff ? 2 : 1;
  }
  if (i > start || words.length === 0) words.push(encodedWord(value.slice(start)));
  return words.join('\r\n ');
}

function encodedWord(text: string): string {
  return `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** RFC 5322 3.3 date-time in UTC, e.g. `Sun, 22 Nov 2026 01:46:42 +0000`. */
export function formatDate(d: Date): string {
  const p = (n: number) => (n < 10 ? `0${n}` : `${n}`);
  return (
    `${DAYS[d.getUTCDay()]}, ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`
  );
}

const HEX = Array.from({ length: 256 }, (_, i) => '=' + i.toString(16).toUpperCase().padStart(2, '0'));

/** Quoted-printable (RFC 2045 6.7) of the UTF-8 bytes; any line ending becomes a CRLF hard break. */
export function encodeQuotedPrintable(text: string): string {
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) lines[i] = encodeQpLine(lines[i]);
  return lines.join('\r\n');
}

function encodeQpLine(line: string): string {
  // Fast path: short printable ASCII without `=` and without trailing white space.
  if (line.length <= QP_MAX_LINE && PRINTABLE_ASCII_RE.test(line) && !line.includes('=') && !/[ \t]$/.test(line)) return line;
  const bytes = Buffer.from(line, 'utf8');
  let out = '';
  let lineLength = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    const literal = (b >= 33 && b <= 126 && b !== 61) || ((b === 32 || b === 9) && i < bytes.length - 1);
    const token = literal ? String.fromCharCode(b) : HEX[b];
    if (lineLength + token.length > QP_MAX_LINE) {
      out += '=\r\n';
      lineLength = 0;
    }
    out += token;
    lineLength += token.length;
  }
  return out;
}
