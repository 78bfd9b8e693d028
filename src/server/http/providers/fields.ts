// Reading the fields of a provider request: addresses (nodemailer's address parser, the
// library that writes them), base64 attachments, JSON bodies and scheduled times. Each reader
// returns a problem sentence instead of throwing, so each route words it in its provider's shape.
import addressparser from 'nodemailer/lib/addressparser';
import type { Mailbox } from '../../mime/outgoing';

/** A mailbox's address: one `@`, no blanks or brackets, a non-empty local part and domain. */
const ADDRESS_RE = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+$/;
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/**
 * Longest mailbox read, display name and address together: RFC 5322's 998-character line, room
 * for the longest address (320, RFC 3696 section 3) and any name a real sender gives it.
 */
export const MAX_MAILBOX_CHARS = 998;

/**
 * Why an address field of `length` characters is refused before it is read: longer than the
 * provider's most recipients can be. A field is parsed only within this bound.
 */
export function addressFieldProblem(length: number, maxMailboxes: number): string | undefined {
  const max = maxMailboxes * MAX_MAILBOX_CHARS;
  if (length <= max) return undefined;
  return `is ${length} characters long, more than ${maxMailboxes === 1 ? 'one address' : `${maxMailboxes} addresses`} can be (${max} characters)`;
}

/**
 * The mailboxes of an address list, split where addressparser splits them (a comma or semicolon
 * outside quotes, a comment, angle brackets and a group), in one pass. addressparser itself is
 * quadratic in the number of mailboxes of one call; each mailbox is given to it alone.
 */
function splitMailboxes(text: string): string[] {
  // addressparser's tokenizer: each opening operator and the character that closes it; `\` escapes inside quotes only.
  const closing: Record<string, string> = { '"': '"', '(': ')', '<': '>', ':': ';' };
  const pieces: string[] = [];
  let start = 0;
  let expecting = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (expecting !== '') {
      if (c === expecting) expecting = '';
      else if (c === '\\' && expecting === '"') i++;
    } else if (c === ',' || c === ';') {
      pieces.push(text.slice(start, i));
      start = i + 1;
    } else if (c in closing) {
      expecting = closing[c];
    }
  }
  pieces.push(text.slice(start));
  return pieces;
}

/**
 * `a@b.test`, `Name <a@b.test>` or a comma-separated list of them, as mailboxes; a problem
 * sentence when one is not an address, or when the text is longer than `maxMailboxes` can be
 * (addressFieldProblem). Linear in the text's length.
 */
export function parseMailboxes(text: string, maxMailboxes: number): Mailbox[] | string {
  const tooLong = addressFieldProblem(text.length, maxMailboxes);
  if (tooLong) return tooLong;
  if (CONTROL_RE.test(text)) return 'contains line breaks or control characters';
  const out: Mailbox[] = [];
  for (const piece of splitMailboxes(text)) {
    if (piece.length > MAX_MAILBOX_CHARS) return `holds an address (with its name) of ${piece.length} characters; at most ${MAX_MAILBOX_CHARS} are read`;
    for (const a of addressparser(piece, { flatten: true })) {
      if (!ADDRESS_RE.test(a.address)) return `${JSON.stringify((a.address || a.name).slice(0, 100))} is not an email address`;
      out.push(a.name ? { name: a.name, address: a.address } : { address: a.address });
    }
  }
  return out;
}

/** One mailbox; a problem sentence when the text is not exactly one address. */
export function parseMailbox(text: string): Mailbox | string {
  const list = parseMailboxes(text, 1);
  if (typeof list === 'string') return list;
  if (list.length !== 1) return list.length === 0 ? 'is empty' : 'must be one address';
  return list[0];
}

/** A mailbox from its parts (SendGrid's `{email, name}`). */
export function mailboxOf(email: string, name: string | undefined): Mailbox | string {
  if (CONTROL_RE.test(email) || (name !== undefined && CONTROL_RE.test(name))) return 'contains line breaks or control characters';
  if (!ADDRESS_RE.test(email)) return `${JSON.stringify(email.slice(0, 100))} is not an email address`;
  return name ? { name, address: email } : { address: email };
}

/** The characters a regular expression's `\s` matches: the blanks and line breaks an SDK may wrap base64 with, and the rest that were always taken. */
function isBlank(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

function isBase64Char(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
}

/**
 * Whether `text` is base64: its alphabet and blanks, then at most two `=` side by side, then
 * blanks. One pass over the text: a regular expression for it (`[A-Za-z0-9+/\s]*={0,2}\s*`)
 * backtracks over a run of blanks once per blank, which took minutes for a large attachment.
 */
function isBase64(text: string): boolean {
  let i = 0;
  const n = text.length;
  while (i < n && (isBase64Char(text.charCodeAt(i)) || isBlank(text.charCodeAt(i)))) i++;
  let pads = 0;
  while (i < n && text.charCodeAt(i) === 0x3d && pads < 2) {
    i++;
    pads++;
  }
  while (i < n && isBlank(text.charCodeAt(i))) i++;
  return i === n;
}

/** Strict base64 (blanks and line breaks allowed, as the SDKs wrap it); undefined when it is not base64. */
export function decodeBase64(text: string): Buffer | undefined {
  if (!isBase64(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** The JSON value of a body; undefined when it is not JSON. */
export function parseJson(body: Buffer): unknown {
  try {
    const text = body.toString('utf8');
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
}

/**
 * Deepest nesting of a request's JSON taken (the body, or JSON inside one of its fields):
 * deeper than any template's data, and far from the few thousand levels at which JSON.stringify
 * (templateText, metadata) overflows the stack.
 */
export const MAX_JSON_DEPTH = 64;

/** Why a JSON value is refused for its nesting (MAX_JSON_DEPTH), or undefined; walked with a stack of its own, not by recursion. */
export function jsonDepthProblem(value: unknown): string | undefined {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_JSON_DEPTH) return `is nested more than ${MAX_JSON_DEPTH} levels deep`;
    for (const x of Array.isArray(v) ? v : Object.values(v)) if (typeof x === 'object' && x !== null) stack.push([x, depth + 1]);
  }
  return undefined;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The names of `obj` outside `known`. */
export function unknownFields(obj: Record<string, unknown>, known: ReadonlySet<string>): string[] {
  return Object.keys(obj).filter((k) => !known.has(k));
}

export function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/**
 * A template send's body, as text: the template's id or alias and its data, one line per
 * value (nested data as JSON), so that a code or link in the data is found like one in a
 * rendered message. The template itself lives at the provider and is not rendered here.
 */
export function templateText(provider: string, template: string, data: unknown): string {
  const lines = [`${provider} template ${template} (not rendered by Test Inbox; its data follows)`, ''];
  if (isObject(data)) {
    for (const [k, v] of Object.entries(data)) lines.push(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  } else if (data !== undefined) {
    lines.push(JSON.stringify(data));
  }
  return lines.join('\n') + '\n';
}
