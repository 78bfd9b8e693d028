// Composes an injected (docs/api.md §4.4) or webhook (docs/api.md §4.5) message into RFC 5322 MIME bytes,
// so that every stored message is an ordinary .eml whatever way it arrived. nodemailer's
// MailComposer writes the message (header encoding and folding, quoted-printable body); this
// file only decides what goes in it.
//
// Shape of the result:
//   From, To, Subject (RFC 2047 Q encoded-words when not plain ASCII), Date, Message-ID,
//   MIME-Version, Content-Type: text/plain; charset=utf-8,
//   Content-Transfer-Encoding: quoted-printable; CRLF line endings throughout.
// When the payload has no `from`, the sender is `<source>@<domain>` (e.g. `webhook@inbox.test`);
// when it has no subject, the subject is NO_SUBJECT (core/title.ts; docs/api.md §4.5 rule 4).
import { randomUUID } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import * as mimeFuncs from 'nodemailer/lib/mime-funcs';
import type MimeNode from 'nodemailer/lib/mime-node';
import * as qp from 'nodemailer/lib/qp';
import type { MessageSource } from '../store/types';
import { NO_SUBJECT } from '../../core/title';
import { codedError, type CodedError } from '../../core/errors';

/** Header lines are folded to this length (RFC 5322 2.1.1 recommends at most 78 characters). */
const HEADER_LINE_LENGTH = 76;
/** Longest run of non-blank characters MailComposer may leave unencoded: longer cannot be folded onto a 78-character line. */
const MAX_PLAIN_WORD = HEADER_LINE_LENGTH - 'Subject: '.length;
/** Source bytes per encoded-word, as MailComposer uses: the word stays within 75 characters (RFC 2047 2). */
const ENCODED_WORD_LENGTH = 52;

type ComposeErrorCode = 'bad_from';

/** A payload that cannot become a message; the HTTP layer answers 400 with the message. */
export const ComposeError = codedError<ComposeErrorCode>('ComposeError');
export type ComposeError = CodedError<ComposeErrorCode>;

interface ComposeInput {
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
  /** Extra header fields (names `X-…`, values without line breaks), e.g. the Twilio resource's fields. */
  extraHeaders?: Record<string, string>;
}

/** The sender written when the payload has no `from` (docs/api.md §4.5 rule 4). */
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
function fromProblem(from: string): string | undefined {
  if (CONTROL_RE.test(from)) return 'from must not contain line breaks or control characters';
  return undefined;
}

/** The Subject a composed message carries: the payload's, trimmed, or NO_SUBJECT. */
export function composedSubject(subject: string | undefined): string {
  return subject === undefined || subject.trim() === '' ? NO_SUBJECT : subject.trim();
}

export async function composeMessage(input: ComposeInput): Promise<Buffer> {
  const from = input.from === undefined || input.from.trim() === '' ? dummyFrom(input.source, input.domain) : input.from.trim();
  const problem = fromProblem(from);
  if (problem) throw new ComposeError('bad_from', problem);
  // Blanks at the ends of a header are not significant (RFC 5322 3.2.2); they are dropped.
  const subject = composedSubject(input.subject);
  const mailbox = senderMailbox(from);
  // Quoted-printable whatever the text: the stored .eml stays readable as it is.
  const headers: Mail.Headers = { ...input.extraHeaders, 'Content-Transfer-Encoding': 'quoted-printable' };
  if (needsPreEncoding(subject)) {
    const line = mimeFuncs.foldLines(`Subject: ${mimeFuncs.encodeWord(subject, 'Q', ENCODED_WORD_LENGTH)}`, HEADER_LINE_LENGTH);
    headers.Subject = { prepared: true, value: line.slice('Subject: '.length) };
  }
  const composer = new MailComposer({
    ...(mailbox ? { from: mailbox } : {}),
    to: `${input.inbox}@${input.domain}`,
    ...(headers.Subject ? {} : { subject }),
    date: input.date ?? new Date(),
    // Q encoded-words: MailComposer splits long B words between the halves of some
    // surrogate pairs (characters outside the emoji block), which then read back as U+FFFD.
    textEncoding: 'quoted-printable',
    messageId: `<${randomUUID()}@${input.domain}>`,
    headers,
    // Every line break a CRLF: MailComposer keeps the text's own.
    text: (input.text ?? '').replace(/\r\n|\r|\n/g, '\r\n'),
  });
  const built = leafMessage(composer.compile());
  // A sender that is no address (a phone number, a service name) is a bare phrase, which
  // MailComposer does not write: it goes in front of the header block MailComposer wrote.
  return mailbox ? built : Buffer.concat([Buffer.from(mimeFuncs.foldLines(`From: ${phrase(from)}`, HEADER_LINE_LENGTH) + '\r\n', 'utf8'), built]);
}

/** Quoted-printable lines are wrapped to this length (RFC 2045 6.7 rule 5), as nodemailer's encoder does. */
const QP_LINE_LENGTH = 76;

/**
 * The bytes `node.build()` makes of the one text/plain quoted-printable part MailComposer compiles
 * a composed message into: its header block (nodemailer writes it), a blank line, its text's
 * UTF-8 bytes quoted-printable encoded and wrapped, and a final CRLF when the body does not end
 * in one. The same bytes without build()'s stream pipeline: a compose took 150 µs with it and
 * 105–115 µs without (a loop of 5,000 here), and compose is about a fifth of the server's CPU per
 * injected message. The compose tests check it byte for byte against build().
 */
export function leafMessage(node: MimeNode): Buffer {
  if (node.childNodes.length > 0 || (node.content !== undefined && typeof node.content !== 'string')) throw new TypeError('leafMessage writes a single text part only');
  const text = node.content ?? '';
  const body = text === '' ? '' : qp.wrap(qp.encode(Buffer.from(text, 'utf8')), QP_LINE_LENGTH);
  return Buffer.from(`${node.buildHeaders()}\r\n\r\n${body}${body === '' || body.endsWith('\n') ? '' : '\r\n'}`, 'utf8');
}

/**
 * `Name <addr>` (the name as written, quotes removed) or a bare address as one mailbox;
 * undefined for free text (a phone number, a service name), which is kept whole as a phrase.
 */
function senderMailbox(from: string): { name: string; address: string } | undefined {
  const m = NAME_ADDR_RE.exec(from);
  if (m) {
    let name = m[1].trim();
    if (name.length >= 2 && name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
    return { name, address: m[2] };
  }
  return BARE_ADDR_RE.test(from) ? { name: '', address: from } : undefined;
}

/** Free text as a display phrase: encoded-words when not ASCII, a quoted string when it has specials. */
function phrase(text: string): string {
  if (!PRINTABLE_ASCII_RE.test(text)) return mimeFuncs.encodeWord(text, 'Q', ENCODED_WORD_LENGTH);
  if (SPECIALS_RE.test(text)) return `"${text.replace(/(["\\])/g, '\\$1')}"`;
  return text;
}

/**
 * MailComposer encodes non-ASCII subjects and folds at blanks, but turns line breaks into
 * blanks and leaves a word too long to fold as one over-long line. Those subjects are given
 * to it already encoded (whole, as Q encoded-words), so they read back unchanged.
 */
function needsPreEncoding(subject: string): boolean {
  return CONTROL_RE.test(subject) || subject.split(/\s+/).some((w) => w.length > MAX_PLAIN_WORD);
}
