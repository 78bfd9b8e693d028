// Twilio messages in the ordinary store. Each is an SMS composed into the phone inbox of the
// digits of its `To` (readable by the inbox API and the tree like any other). Its Twilio record
// (the fields of Twilio's Message resource, its text included) is the data of the message's key
// (MessageKey: the SID, scoped by the Account SID), which only add() here gives: the store keeps
// it beside the message (both stores, made durable with it) and answers it verbatim, so a record
// reads the same before and after a restart, a list needs no message parsed, and no byte a
// sender writes (an SMTP message with X-Twilio-* header fields) makes or changes a record.
// The X-Twilio-* header fields the composed message carries are for people reading it only.
import PostalMime from 'postal-mime';
import { randomBytes } from 'node:crypto';
import { decodeEncodedWords, readHeaderFields } from '../../store/headers';
import { StoreError } from '../../store/errors';
import type { KeyedMessage, Store } from '../../store/types';
import type { DelayedDeliveries } from '../../chaos/delayed';
import { composeMessage } from '../compose';
import { smsSubject } from '../../../core/sms';
import { eachInSlices, nextTurn } from '../../slices';

/** Header fields holding the Message resource's fields. */
export const HEADER = {
  sid: 'X-Twilio-Message-Sid',
  accountSid: 'X-Twilio-Account-Sid',
  to: 'X-Twilio-To',
  from: 'X-Twilio-From',
  direction: 'X-Twilio-Direction',
  messagingServiceSid: 'X-Twilio-Messaging-Service-Sid',
} as const;

type Direction = 'outbound-api' | 'inbound';

export interface TwilioRecord {
  sid: string;
  accountSid: string;
  to: string;
  /** Undefined when sent through a Messaging Service without `From`. */
  from?: string;
  messagingServiceSid?: string;
  direction: Direction;
  /** The text as sent (the Message resource's `body`). */
  body: string;
  /** When the record was made (ms): its `date_created`, its place in lists. */
  time: number;
  /** Store message id. */
  id: string;
}

/** What the key's data holds: the record without what the key and the store say (SID, Account SID, id). */
type RecordData = Omit<TwilioRecord, 'sid' | 'accountSid' | 'id'> & { v: 1 };

export const ACCOUNT_SID_RE = /^AC[0-9a-fA-F]{32}$/;
export const MESSAGE_SID_RE = /^(SM|MM)[0-9a-fA-F]{32}$/;
export const SERVICE_SID_RE = /^MG[0-9a-fA-F]{32}$/;

/** A new Message SID: `SM` + 32 lowercase hex digits (128 random bits). */
export function newMessageSid(): string {
  return `SM${randomBytes(16).toString('hex')}`;
}

/** The Twilio records by their SID (and an account's, by its Account SID): each the data of its message's key in the store. */
export class TwilioSidIndex {
  readonly #store: Store;

  readonly #delayed: DelayedDeliveries | undefined;

  /** `delayed`: where a `delivery` fault rule holds a message (docs/chaos.md). */
  constructor(store: Store, delayed?: DelayedDeliveries) {
    this.#store = store;
    this.#delayed = delayed;
  }

  /** Kept for callers that wait for the records to be ready: the store holds them, nothing to build. */
  ready(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Stores the SMS and its record durably; resolves the record. A SID the store holds already
   * is StoreError duplicate_key (nothing stored).
   */
  async add(input: Omit<TwilioRecord, 'id' | 'time'> & { domain: string; inbox: string }): Promise<TwilioRecord> {
    const extraHeaders: Record<string, string> = {
      [HEADER.sid]: input.sid,
      [HEADER.accountSid]: input.accountSid,
      [HEADER.to]: input.to,
      [HEADER.direction]: input.direction,
    };
    if (input.from !== undefined) extraHeaders[HEADER.from] = input.from;
    if (input.messagingServiceSid !== undefined) extraHeaders[HEADER.messagingServiceSid] = input.messagingServiceSid;
    const time = Date.now();
    const raw = await composeMessage({
      from: input.from ?? input.messagingServiceSid,
      // An SMS has no subject: its first words stand in, so listings and the tree name it (as the hosted service does).
      subject: smsSubject(input.body),
      text: input.body,
      inbox: input.inbox,
      domain: input.domain,
      source: input.direction === 'inbound' ? 'webhook' : 'inject',
      date: new Date(time),
      extraHeaders,
    });
    const data: RecordData = { v: 1, to: input.to, direction: input.direction, body: input.body, time };
    if (input.from !== undefined) data.from = input.from;
    if (input.messagingServiceSid !== undefined) data.messagingServiceSid = input.messagingServiceSid;
    const targets = [{ domain: input.domain, inbox: input.inbox }];
    const source = input.direction === 'inbound' ? 'webhook' : 'inject';
    const key = { key: input.sid, scope: input.accountSid, data: JSON.stringify(data) };
    const record = { sid: input.sid, accountSid: input.accountSid, to: input.to, from: input.from, messagingServiceSid: input.messagingServiceSid, direction: input.direction, body: input.body, time };
    // Held by a delivery fault rule: stored (and readable by its SID) when its delay ends.
    if ((await this.#delayed?.hold(targets, raw, source, input.from !== undefined ? { sender: input.from } : {}, undefined, key)) !== undefined) return { ...record, id: '' };
    const [meta] = await this.#store.add(targets, raw, source, undefined, key);
    return { sid: input.sid, accountSid: input.accountSid, to: input.to, from: input.from, messagingServiceSid: input.messagingServiceSid, direction: input.direction, body: input.body, time, id: meta.id };
  }

  async get(sid: string): Promise<TwilioRecord | undefined> {
    const found = await this.#store.findByKey(sid);
    return found && this.#recordOf(found);
  }

  /**
   * The records of an account that `keep` keeps, newest first. Read in slices that take turns
   * (slices.ts): thousands of records, and twenty lists at once, never hold the event loop.
   * With `signal`: stops early (an empty or partial list) once it is aborted.
   */
  async list(accountSid: string, keep: (r: TwilioRecord) => boolean = () => true, signal?: AbortSignal): Promise<TwilioRecord[]> {
    const out: TwilioRecord[] = [];
    const legacy: KeyedMessage[] = [];
    // A turn of its own: twenty lists that arrive together take turns from their first record on.
    await nextTurn();
    await eachInSlices(
      await this.#store.listByScope(accountSid),
      (k) => {
        const rec = this.#fromData(k);
        if (rec === undefined) legacy.push(k);
        else if (keep(rec)) out.push(rec);
      },
      signal,
    );
    // Records kept before records were data (the team server's database): each reads its message, on I/O.
    for (const k of legacy) {
      const rec = await this.#legacy(k);
      if (rec && keep(rec)) out.push(rec);
    }
    // Stable: the store's order (newest first) among records of one millisecond.
    return out.sort((a, b) => b.time - a.time);
  }

  async #recordOf(k: KeyedMessage): Promise<TwilioRecord | undefined> {
    return this.#fromData(k) ?? this.#legacy(k);
  }

  /** The record its key's data holds; undefined for a legacy record (no data). */
  #fromData(k: KeyedMessage): TwilioRecord | undefined {
    const data = parseData(k.data);
    if (!data) return undefined;
    return { sid: k.key, accountSid: k.scope, to: data.to, from: data.from, messagingServiceSid: data.messagingServiceSid, direction: data.direction, body: data.body, time: data.time, id: k.meta.id };
  }

  /**
   * A record the team server's database keyed before records were kept as data (schema
   * migration 2 read them from the messages the Twilio routes had stored; migration 5 dropped
   * those of SMTP mail): read from its header fields and text, as it was then.
   */
  async #legacy({ meta, key, scope }: KeyedMessage): Promise<TwilioRecord | undefined> {
    let raw: Buffer;
    try {
      raw = await this.#store.readRaw(meta.id);
    } catch (e) {
      if (StoreError.is(e, 'not_found')) return undefined; // deleted meanwhile
      throw e;
    }
    const fields = readHeaderFields(raw) ?? [];
    const get = (name: string): string | undefined => {
      const v = fields.find(([n]) => n === name.toLowerCase())?.[1];
      return v === undefined ? undefined : decodeEncodedWords(v);
    };
    const to = get(HEADER.to);
    const direction = get(HEADER.direction);
    if (to === undefined || (direction !== 'outbound-api' && direction !== 'inbound')) return undefined;
    const email = await PostalMime.parse(raw);
    const body = (email.text ?? '').replace(/\r\n/g, '\n').replace(/[\r\n]+$/, '');
    return { sid: key, accountSid: scope, to, from: get(HEADER.from), messagingServiceSid: get(HEADER.messagingServiceSid), direction, body, time: meta.time, id: meta.id };
  }
}

function parseData(text: string): RecordData | undefined {
  if (text === '') return undefined;
  try {
    const v = JSON.parse(text) as RecordData;
    return v.v === 1 ? v : undefined;
  } catch {
    return undefined;
  }
}
