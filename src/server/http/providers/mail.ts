// The one way an email provider route stores what it was sent (docs/providers.md). Each route
// (resend.ts, sendgrid.ts, postmark.ts, mailgun.ts, ses.ts) reads its provider's request into an
// OutgoingMail; this module has it composed into one MIME message with nodemailer's MailComposer
// on a MIME worker thread (mime/outgoing.ts through workers/pool.ts, so the event loop never composes), the
// bytes kept in memory under the shared byte budget up to 256 KB and in a spool file past it
// (spool.ts, as SMTP does), and stores that one message into the inbox of every
// recipient (to, cc and bcc; recipientTarget is SMTP's own address rule). Bcc recipients get
// the message but are not in its headers. The API a message came through is recorded in the
// X-Test-Inbox-Api header; the provider's metadata in X- headers the route names. X-Test-Inbox-*
// fields are the server's own (../../ownFields.ts): a composed message takes none from the
// sender's `headers` (mime.ts), and for a raw MIME message the sink drops any the sender wrote and
// writes the route's own before the message.
import { promises as fs } from 'node:fs';
import { Readable } from 'node:stream';
import type { ByteBudget, Release } from '../../budget';
import { recipientTarget } from '../../recipient';
import { drainInto, SPOOL_THRESHOLD_BYTES, spooledBody, SpoolingSink } from '../../spool';
import { CODE_SCAN_MAX_BYTES } from '../../store/code';
import type { MessageBody, MessageMeta, Store } from '../../store/types';
import type { WorkerPool } from '../../workers/pool';
import type { DelayedDeliveries } from '../../chaos/delayed';
import { API_HEADER, type OutgoingMail, ownFieldLines, PROVIDER_ID_HEADER } from '../../mime/outgoing';
import { parseMailbox } from './fields';
import { parseIndexedHeaders } from '../../store/headers';
import { codedError, type CodedError } from '../../../core/errors';

export { API_HEADER, type Mailbox, type OutgoingAttachment, type OutgoingMail, PROVIDER_ID_HEADER } from '../../mime/outgoing';
/** Set on a message the provider would not have delivered (SendGrid sandbox_mode, Mailgun o:testmode). */
export const TEST_MODE_HEADER = 'X-Test-Inbox-Test-Mode';
/** Set on a message that named a stored template, which is not rendered (its id and data are the body). */
export const TEMPLATE_HEADER = 'X-Test-Inbox-Template';

/** The email provider APIs, as the message's API header names them. */
export type ProviderApi = 'Resend' | 'SendGrid' | 'Postmark' | 'Mailgun' | 'Amazon SES v2';

/** A whole MIME message a provider was given as is (Mailgun messages.mime, SES Raw content). */
interface OutgoingRaw {
  api: string;
  providerId: string;
  raw: Buffer;
  /** Every recipient, from the request's own list (the envelope), not the message's headers. */
  recipients: string[];
  meta?: Array<[string, string]>;
}

type MailRefusalCode = 'too_large' | 'bad_recipient' | 'no_recipient';

/** Why a message cannot be stored: the route answers it in its provider's shape. */
export const MailRefusal = codedError<MailRefusalCode>('MailRefusal');
export type MailRefusal = CodedError<MailRefusalCode>;

export interface MailStoreOptions {
  store: Store;
  budget: ByteBudget;
  /** Where a composed message past 256 KB is written while it is composed (the store links it into place). */
  spoolDir: () => Promise<string>;
  /** Largest stored message: the SMTP message size. */
  maxMessageBytes: number;
  /** The MIME worker threads: messages are composed, and raw ones parsed, there. */
  mime: WorkerPool;
  /** Where a `delivery` fault rule holds a message until its delay ends (docs/chaos.md); then it is not stored now, and no meta is answered. */
  delayed?: DelayedDeliveries;
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

/** The message too large to store: past the SMTP message size. */
function tooLarge(size: number, max: number): MailRefusal {
  return new MailRefusal('too_large', `the message is ${size} bytes, more than this server's limit of ${max} bytes (its SMTP message size)`);
}

/**
 * Composes the message on a MIME worker and stores it into every recipient's inbox; resolves one
 * meta per inbox. The main thread holds the shared budget for what comes back in memory (a small
 * message, or a spooled one's head); the worker writes the rest to the spool.
 */
export async function storeMail(o: MailStoreOptions, mail: OutgoingMail): Promise<MessageMeta[]> {
  const targets = targetsOf([...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])].map((m) => m.address));
  const life = new AbortController();
  const held: Release[] = [];
  let file: string | undefined;
  try {
    // Memory for the composed message only when the budget has it now, as SpoolingSink keeps it; else it all goes to the spool.
    const memory = o.budget.tryTake(SPOOL_THRESHOLD_BYTES, life.signal);
    if (memory) held.push(memory);
    const composed = await o.mime.composeMail(mail, targets[0].domain, { dir: await o.spoolDir(), memoryBytes: memory ? SPOOL_THRESHOLD_BYTES : 0, maxBytes: o.maxMessageBytes });
    file = composed.file;
    if (composed.size > o.maxMessageBytes) throw tooLarge(composed.size, o.maxMessageBytes);
    let body: MessageBody;
    if (composed.file === undefined) body = Buffer.from(composed.bytes.buffer, composed.bytes.byteOffset, composed.bytes.byteLength);
    else {
      // The head is read under a grant of its own, as a spooled SMTP body's is.
      for (const r of held.splice(0)) r();
      body = await spooledBody(composed.file, composed.size, CODE_SCAN_MAX_BYTES, o.budget, life.signal, held);
    }
    if ((await o.delayed?.hold(targets, body, 'inject', { sender: mail.from.address })) !== undefined) return [];
    return await o.store.add(targets, body, 'inject');
  } finally {
    // Every grant of this message goes back with its lifetime.
    life.abort();
    if (file !== undefined) await fs.rm(file, { force: true });
  }
}

/** What a fault rule can match of a request's messages (http/fault.ts): the first sender and every recipient. */
export function envelopeOf(mails: ReadonlyArray<Pick<OutgoingMail, 'from' | 'to' | 'cc' | 'bcc'>>): { sender?: string; recipients: string[] } {
  const recipients = mails.flatMap((m) => [...m.to, ...(m.cc ?? []), ...(m.bcc ?? [])].map((r) => r.address));
  return mails.length > 0 ? { sender: mails[0].from.address, recipients } : { recipients };
}

/**
 * What a fault rule can match of a whole MIME message (http/fault.ts, chaos/delayed.ts): the
 * address of its From field (the request names no sender of its own) and every recipient.
 */
export function rawEnvelope(raw: Buffer, recipients: string[]): { sender?: string; recipients: string[] } {
  const from = parseIndexedHeaders(raw)?.from;
  const mailbox = from ? parseMailbox(from) : undefined;
  return mailbox !== undefined && typeof mailbox !== 'string' ? { sender: mailbox.address, recipients } : { recipients };
}

/** Stores a whole MIME message into every recipient's inbox, after the X- fields the route gives. */
export async function storeRaw(o: MailStoreOptions, mail: OutgoingRaw): Promise<MessageMeta[]> {
  const targets = targetsOf(mail.recipients);
  const { sender } = rawEnvelope(mail.raw, mail.recipients);
  return storeStream(o, targets, Readable.from([mail.raw]), ownFieldLines([[API_HEADER, mail.api], [PROVIDER_ID_HEADER, mail.providerId], ...(mail.meta ?? [])]), sender !== undefined ? { sender } : {});
}

async function storeStream(o: MailStoreOptions, targets: Array<{ domain: string; inbox: string }>, source: Readable, ownFields: string, match: { sender?: string }): Promise<MessageMeta[]> {
  const sink = new SpoolingSink({ budget: o.budget, dir: await o.spoolDir(), maxBytes: o.maxMessageBytes, ownFields });
  await drainInto(source, sink);
  const received = sink.received();
  try {
    if (sink.size > o.maxMessageBytes) throw tooLarge(sink.size, o.maxMessageBytes);
    const body = await received.body(CODE_SCAN_MAX_BYTES);
    if ((await o.delayed?.hold(targets, body, 'inject', match)) !== undefined) return [];
    return await o.store.add(targets, body, 'inject');
  } finally {
    await received.dispose();
  }
}
