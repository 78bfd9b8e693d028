// The MIME work of the provider routes, as functions of plain data that run on a MIME worker
// thread (workers/jobs.ts, workers/pool.ts): composing an OutgoingMail with nodemailer's MailComposer
// into a spool file (or memory, when small and the main thread holds budget for it), and reading
// the recipients of a raw message (SES Raw without Destination). Composing a 20 MB text took the
// main thread 11 s and 0.9 GB (issue 35 G5); here the event loop only waits for the answer.
// This module imports nothing of mail.ts (which starts the jobs): its types live here.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import * as mimeFuncs from 'nodemailer/lib/mime-funcs';
import PostalMime from 'postal-mime';
import { PROVIDER_API_HEADER } from '../../core/wire';
import { ByteBudget } from '../budget';
import { isOwnFieldName } from '../ownFields';
import { drainInto, SpoolingSink } from '../spool';

/** The header naming the API a message came through, e.g. `Resend (POST /emails)`; the message view shows it. */
export const API_HEADER = PROVIDER_API_HEADER;
/** The id the provider's API answered for the message (Resend's id, SendGrid's X-Message-Id, …). */
export const PROVIDER_ID_HEADER = 'X-Test-Inbox-Provider-Id';

export interface Mailbox {
  name?: string;
  address: string;
}

export interface OutgoingAttachment {
  filename?: string;
  /** A Buffer from the route; a Uint8Array once cloned to the worker. */
  content: Uint8Array;
  contentType?: string;
  /** Content-ID, for an inline image the HTML references as `cid:…`. */
  cid?: string;
  inline?: boolean;
}

/** A message as a provider's API describes it, read and checked by the route. */
export interface OutgoingMail {
  /** `Resend (POST /emails)`: the API and the endpoint. */
  api: string;
  /** The id the route answers the sender with. */
  providerId: string;
  from: Mailbox;
  to: Mailbox[];
  cc?: Mailbox[];
  bcc?: Mailbox[];
  replyTo?: Mailbox[];
  subject?: string;
  text?: string;
  html?: string;
  attachments?: OutgoingAttachment[];
  /** The sender's own header fields (names as given). */
  headers?: Array<[string, string]>;
  /** The provider's metadata, as X- header fields. */
  meta?: Array<[string, string]>;
  /** Message-ID header (with angle brackets); a new one when absent. */
  messageId?: string;
  date?: Date;
}

/** Where a composed message goes: memory up to `memoryBytes` (the budget the main thread holds for it), else a spool file in `dir`. */
export interface ComposeSpool {
  dir: string;
  memoryBytes: number;
  /** Bytes past this are counted, not kept: the caller refuses the message. */
  maxBytes: number;
}

/** A composed message: its bytes, or the spool file that holds them (the caller removes it). `size` counts bytes past maxBytes too. */
export type Composed = { size: number; bytes: Uint8Array; file?: undefined } | { size: number; file: string; bytes?: undefined };

const HEADER_VALUE_BAD = /[\r\n\u0000]/;

/** A header value as it may be written: line breaks would start a header of the sender's own. */
export function headerValue(v: string): string {
  return HEADER_VALUE_BAD.test(v) ? v.replace(/[\r\n\u0000]+/g, ' ') : v;
}

function mailbox(m: Mailbox): Mail.Address | string {
  return m.name ? { name: m.name, address: m.address } : m.address;
}

/**
 * A text or HTML body this long goes to MailComposer as a stream of PIECE_BYTES pieces. Given
 * whole, its quoted-printable encoder takes it as one chunk: a 20 MB text took 9 s and most of
 * 0.9 GB; in pieces 2.5 s and 160 MB. Shorter bodies go whole, as they always have.
 */
const STREAM_BODY_CHARS = 256 * 1024;
const PIECE_BYTES = 64 * 1024;

function body(text: string): string | Readable {
  if (text.length < STREAM_BODY_CHARS) return text;
  const bytes = Buffer.from(text, 'utf8');
  return Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += PIECE_BYTES) yield bytes.subarray(i, i + PIECE_BYTES);
    })(),
  );
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The server's own header fields as lines (non-ASCII as encoded-words, folded), written ahead of a message by its sink. */
export function ownFieldLines(fields: Array<[string, string]>): string {
  return fields.map(([k, v]) => `${mimeFuncs.foldLines(`${k}: ${mimeFuncs.encodeWords(headerValue(v), 'Q', 52)}`, 76)}\r\n`).join('');
}

/** The message MailComposer makes of `mail`; `domain` names a new Message-ID. Bcc goes to the envelope only: MailComposer leaves it out of the headers. */
function composer(mail: OutgoingMail, domain: string): MailComposer {
  // The server's own fields (X-Test-Inbox-*) are not the composer's: the sink drops any in the
  // message and writes the route's own ahead of it (composeToSpool, ownFields.ts).
  const headers: Array<{ key: string; value: string }> = [];
  for (const [k, v] of mail.headers ?? []) headers.push({ key: k, value: headerValue(v) });
  for (const [k, v] of mail.meta ?? []) if (!isOwnFieldName(k)) headers.push({ key: k, value: headerValue(v) });
  return new MailComposer({
    from: mailbox(mail.from),
    to: mail.to.map(mailbox),
    ...(mail.cc?.length ? { cc: mail.cc.map(mailbox) } : {}),
    ...(mail.replyTo?.length ? { replyTo: mail.replyTo.map(mailbox) } : {}),
    subject: mail.subject ?? '',
    date: mail.date ?? new Date(),
    messageId: mail.messageId ?? `<${randomUUID()}@${domain}>`,
    textEncoding: 'quoted-printable',
    headers,
    ...(mail.text !== undefined ? { text: body(mail.text) } : {}),
    ...(mail.html !== undefined ? { html: body(mail.html) } : {}),
    ...(mail.attachments?.length
      ? {
          attachments: mail.attachments.map((a) => ({
            content: asBuffer(a.content),
            ...(a.filename !== undefined ? { filename: a.filename } : {}),
            ...(a.contentType ? { contentType: a.contentType } : {}),
            ...(a.cid ? { cid: a.cid } : {}),
            ...(a.inline || a.cid ? { contentDisposition: 'inline' as const } : {}),
          })),
        }
      : {}),
  });
}

/**
 * Composes `mail` through the spool's one rule (spool.ts SpoolingSink): the first bytes in memory
 * while `spool.memoryBytes` has room, the rest in a spool file, handed to the caller (who removes
 * it once the message is stored). Runs on a MIME worker.
 */
export async function composeToSpool(mail: OutgoingMail, domain: string, spool: ComposeSpool): Promise<Composed> {
  // The main thread holds the shared budget's grant for memoryBytes: this thread's own budget keeps to it.
  const own: Array<[string, string]> = [[API_HEADER, mail.api], [PROVIDER_ID_HEADER, mail.providerId], ...(mail.meta ?? []).filter(([k]) => isOwnFieldName(k))];
  const sink = new SpoolingSink({ budget: new ByteBudget(Math.max(1, spool.memoryBytes)), dir: spool.dir, thresholdBytes: spool.memoryBytes, maxBytes: spool.maxBytes, ownFields: ownFieldLines(own) });
  try {
    await drainInto(composer(mail, domain).compile().createReadStream(), sink);
    const received = sink.received();
    if (received.spooled) return { size: sink.size, file: sink.takeFile() };
    const body = await received.body(0);
    return { size: sink.size, bytes: Buffer.isBuffer(body) ? body : new Uint8Array(0) };
  } finally {
    await sink.received().dispose();
  }
}

/** The addresses of a raw message's To, Cc and Bcc (groups opened), as SES reads them when the request has no Destination. Runs on a MIME worker. */
export async function rawRecipients(raw: Uint8Array): Promise<string[]> {
  const parsed = await PostalMime.parse(raw);
  return [...(parsed.to ?? []), ...(parsed.cc ?? []), ...(parsed.bcc ?? [])].flatMap((a) => ('group' in a && a.group ? a.group.map((g) => g.address) : [a.address ?? '']));
}
