// The one way an email provider route stores what it was sent (docs/providers.md). Each route
// (resend.ts, sendgrid.ts, postmark.ts, mailgun.ts, ses.ts) reads its provider's request into an
// OutgoingMail; this module composes it into one MIME message with nodemailer's MailComposer,
// as the inject route does, streams the bytes through the shared byte budget into a spool file
// past 256 KB (spool.ts, as SMTP does), and stores that one message into the inbox of every
// recipient (to, cc and bcc; recipientTarget is SMTP's own address rule). Bcc recipients get
// the message but are not in its headers. The API a message came through is recorded in the
// X-Test-Inbox-Api header; the provider's metadata in X- headers the route names. X-Test-Inbox-*
// fields are the server's own (../../ownFields.ts): the sink drops any the sender gave (its
// `headers`, a raw MIME message) and writes the route's own before the message.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import * as mimeFuncs from 'nodemailer/lib/mime-funcs';
import { PROVIDER_API_HEADER } from '../../../core/wire';
import type { ByteBudget } from '../../budget';
import { isOwnFieldName } from '../../ownFields';
import { recipientTarget } from '../../smtp';
import { drainInto, SpoolingSink } from '../../spool';
import { CODE_SCAN_MAX_BYTES } from '../../store/code';
import type { MessageMeta, Store } from '../../store/types';

/** The header naming the API a message came through, e.g. `Resend (POST /emails)`; the message view shows it. */
export const API_HEADER = PROVIDER_API_HEADER;
/** The id the provider's API answered for the message (Resend's id, SendGrid's X-Message-Id, …). */
export const PROVIDER_ID_HEADER = 'X-Test-Inbox-Provider-Id';
/** Set on a message the provider would not have delivered (SendGrid sandbox_mode, Mailgun o:testmode). */
export const TEST_MODE_HEADER = 'X-Test-Inbox-Test-Mode';
/** Set on a message that named a stored template, which is not rendered (its id and data are the body). */
export const TEMPLATE_HEADER = 'X-Test-Inbox-Template';

/** The email provider APIs, as the message's API header names them. */
export type ProviderApi = 'Resend' | 'SendGrid' | 'Postmark' | 'Mailgun' | 'Amazon SES v2';

export interface Mailbox {
  name?: string;
  address: string;
}

export interface OutgoingAttachment {
  filename?: string;
  content: Buffer;
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

/** A whole MIME message a provider was given as is (Mailgun messages.mime, SES Raw content). */
interface OutgoingRaw {
  api: string;
  providerId: string;
  raw: Buffer;
  /** Every recipient, from the request's own list (the envelope), not the message's headers. */
  recipients: string[];
  meta?: Array<[string, string]>;
}

/** Why a message cannot be stored: the route answers it in its provider's shape. */
export class MailRefusal extends Error {
  readonly code: 'too_large' | 'bad_recipient' | 'no_recipient';
  constructor(code: MailRefusal['code'], message: string) {
    super(message);
    this.name = 'MailRefusal';
    this.code = code;
  }
  static is(err: unknown, code?: MailRefusal['code']): err is MailRefusal {
    return err instanceof MailRefusal && (code === undefined || err.code === code);
  }
}

export interface MailStoreOptions {
  store: Store;
  budget: ByteBudget;
  /** Where a composed message past 256 KB is written while it is composed (the store links it into place). */
  spoolDir: () => Promise<string>;
  /** Largest stored message: the SMTP message size. */
  maxMessageBytes: number;
}

const HEADER_VALUE_BAD = /[\r\n\u0000]/;

/** A header value as it may be written: line breaks would start a header of the sender's own. */
function headerValue(v: string): string {
  return HEADER_VALUE_BAD.test(v) ? v.replace(/[\r\n\u0000]+/g, ' ') : v;
}

/** Each recipient's inbox, once per inbox; MailRefusal when an address names none. */
function targetsOf(addresses: string[]): Array<{ domain: string; inbox: string }> {
  const seen = new Set<string>();
  const out: Array<{ domain: string; inbox: string }> = [];
  for (const a of addresses) {
    const t = recipientTarget(a);
    if ('problem' in t) throw new MailRefusal('bad_recipient', t.problem);
    const key = `${t.domain}\u0000${t.inbox}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  if (out.length === 0) throw new MailRefusal('no_recipient', 'the message has no recipient');
  return out;
}

/** The server's own header fields as lines (non-ASCII as encoded-words, folded), written ahead of the message. */
function ownFieldLines(fields: Array<[string, string]>): string {
  return fields.map(([k, v]) => `${mimeFuncs.foldLines(`${k}: ${mimeFuncs.encodeWords(headerValue(v), 'Q', 52)}`, 76)}\r\n`).join('');
}

function mailbox(m: Mailbox): Mail.Address | string {
  return m.name ? { name: m.name, address: m.address } : m.address;
}

/** Composes the message and stores it into every recipient's inbox; resolves one meta per inbox. */
export async function storeMail(o: MailStoreOptions, mail: OutgoingMail): Promise<MessageMeta[]> {
  const targets = targetsOf([...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((m) => m.address));
  const headers: Array<{ key: string; value: string }> = [];
  for (const [k, v] of mail.headers ?? []) headers.push({ key: k, value: headerValue(v) });
  const own: Array<[string, string]> = [[API_HEADER, mail.api], [PROVIDER_ID_HEADER, mail.providerId]];
  for (const [k, v] of mail.meta ?? []) {
    if (isOwnFieldName(k)) own.push([k, v]);
    else headers.push({ key: k, value: headerValue(v) });
  }
  const domain = targets[0].domain;
  const composer = new MailComposer({
    from: mailbox(mail.from),
    to: mail.to.map(mailbox),
    ...(mail.cc?.length ? { cc: mail.cc.map(mailbox) } : {}),
    // Bcc goes to the envelope (the targets above) only: MailComposer leaves it out of the headers.
    ...(mail.replyTo?.length ? { replyTo: mail.replyTo.map(mailbox) } : {}),
    subject: mail.subject ?? '',
    date: mail.date ?? new Date(),
    messageId: mail.messageId ?? `<${randomUUID()}@${domain}>`,
    textEncoding: 'quoted-printable',
    headers,
    ...(mail.text !== undefined ? { text: mail.text } : {}),
    ...(mail.html !== undefined ? { html: mail.html } : {}),
    ...(mail.attachments?.length
      ? {
          attachments: mail.attachments.map((a) => ({
            content: a.content,
            ...(a.filename !== undefined ? { filename: a.filename } : {}),
            ...(a.contentType ? { contentType: a.contentType } : {}),
            ...(a.cid ? { cid: a.cid } : {}),
            ...(a.inline || a.cid ? { contentDisposition: 'inline' as const } : {}),
          })),
        }
      : {}),
  });
  return storeStream(o, targets, composer.compile().createReadStream(), ownFieldLines(own));
}

/** Stores a whole MIME message into every recipient's inbox, after the X- fields the route gives. */
export async function storeRaw(o: MailStoreOptions, mail: OutgoingRaw): Promise<MessageMeta[]> {
  const targets = targetsOf(mail.recipients);
  return storeStream(o, targets, Readable.from([mail.raw]), ownFieldLines([[API_HEADER, mail.api], [PROVIDER_ID_HEADER, mail.providerId], ...(mail.meta ?? [])]));
}

async function storeStream(o: MailStoreOptions, targets: Array<{ domain: string; inbox: string }>, source: Readable, ownFields: string): Promise<MessageMeta[]> {
  const sink = new SpoolingSink({ budget: o.budget, dir: await o.spoolDir(), maxBytes: o.maxMessageBytes, ownFields });
  await drainInto(source, sink);
  const received = sink.received();
  try {
    if (sink.size > o.maxMessageBytes) throw new MailRefusal('too_large', `the message is ${sink.size} bytes, more than this server's limit of ${o.maxMessageBytes} bytes (its SMTP message size)`);
    return await o.store.add(targets, await received.body(CODE_SCAN_MAX_BYTES), 'inject');
  } finally {
    await received.dispose();
  }
}
