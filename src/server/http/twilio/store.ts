// Twilio messages in the ordinary store. Each is an SMS composed into the phone inbox of the
// digits of its `To` (readable by the inbox API and the tree like any other), carrying the
// fields of Twilio's Message resource in X-Twilio-* header fields. The SID is the message's
// key in the store (MessageKey, the Account SID its scope): a store several processes share
// (PostgreSQL, store.findByKey) finds it by SID through every process. For a store of one
// process (Maildir) the index from SID to message id is kept here, built from those headers on
// first use and kept current by this module and the store's delete events.
import PostalMime from 'postal-mime';
import { randomBytes } from 'node:crypto';
import { decodeEncodedWords, readHeaderFields } from '../../store/headers';
import { StoreError } from '../../store/errors';
import type { MessageMeta, Store } from '../../store/types';
import { composeMessage } from '../compose';
import { smsSubject } from '../../../core/sms';

/** Header fields holding the Message resource's fields. */
export const HEADER = {
  sid: 'X-Twilio-Message-Sid',
  accountSid: 'X-Twilio-Account-Sid',
  to: 'X-Twilio-To',
  from: 'X-Twilio-From',
  direction: 'X-Twilio-Direction',
  messagingServiceSid: 'X-Twilio-Messaging-Service-Sid',
} as const;

/** Subject of an SMS without text (an SMS has no subject; see smsSubject in core/sms.ts). */
export const SMS_SUBJECT = 'SMS';

export type Direction = 'outbound-api' | 'inbound';

export interface TwilioRecord {
  sid: string;
  accountSid: string;
  to: string;
  /** Undefined when sent through a Messaging Service without `From`. */
  from?: string;
  messagingServiceSid?: string;
  direction: Direction;
  /** Store message id and receipt time. */
  id: string;
  time: number;
}

export const ACCOUNT_SID_RE = /^AC[0-9a-fA-F]{32}$/;
export const MESSAGE_SID_RE = /^(SM|MM)[0-9a-fA-F]{32}$/;
export const SERVICE_SID_RE = /^MG[0-9a-fA-F]{32}$/;

/** Records read from a shared store's messages kept in memory at most (they never change; the store says which still exist). */
const RECORD_CACHE_MAX = 10_000;

/** A new Message SID: `SM` + 32 lowercase hex digits (128 random bits). */
export function newMessageSid(): string {
  return `SM${randomBytes(16).toString('hex')}`;
}

export class TwilioMessages {
  readonly #store: Store;
  /** The store's own index of SIDs, when several processes share it. */
  readonly #keys: { find: (key: string) => Promise<MessageMeta | undefined>; list: (scope: string) => Promise<MessageMeta[]> } | undefined;
  /** One process's store: every SID. A shared store: records already read, by message id (RECORD_CACHE_MAX). */
  readonly #bySid = new Map<string, TwilioRecord>();
  readonly #byId = new Map<string, TwilioRecord>();
  #ready: Promise<void> | undefined;

  constructor(store: Store) {
    this.#store = store;
    const { findByKey, listByScope } = store;
    this.#keys = findByKey && listByScope ? { find: async (k) => findByKey.call(store, k), list: async (s) => listByScope.call(store, s) } : undefined;
    store.on('delete', (metas) => {
      const gone = new Set(metas.map((m) => m.id));
      for (const [sid, r] of this.#bySid) if (gone.has(r.id)) this.#bySid.delete(sid);
      for (const id of gone) this.#byId.delete(id);
    });
  }

  /** Builds the index from the stored messages once (a shared store needs none). */
  ready(): Promise<void> {
    this.#ready ??= this.#keys ? Promise.resolve() : this.#build();
    return this.#ready;
  }

  /** A shared store's message as a record: from its header fields, read once. */
  async #recordOf(meta: MessageMeta): Promise<TwilioRecord | undefined> {
    const known = this.#byId.get(meta.id);
    if (known) return known;
    let raw: Buffer;
    try {
      raw = await this.#store.readRaw(meta.id);
    } catch (e) {
      if (StoreError.is(e, 'NOT_FOUND')) return undefined; // deleted meanwhile
      throw e;
    }
    const rec = recordFromHeaders(meta, readHeaderFields(raw) ?? []);
    if (rec) this.#remember(rec);
    return rec;
  }

  #remember(rec: TwilioRecord): void {
    if (!this.#keys) {
      this.#bySid.set(rec.sid, rec);
      return;
    }
    this.#byId.set(rec.id, rec);
    if (this.#byId.size > RECORD_CACHE_MAX) this.#byId.delete(this.#byId.keys().next().value as string);
  }

  async #build(): Promise<void> {
    const all = (await this.#store.list(undefined, '*', { limit: Number.MAX_SAFE_INTEGER, skip: 0, sort: 'ascending' })).msgs;
    for (const meta of all) {
      if (!/^[0-9]+$/.test(meta.inbox)) continue;
      let raw: Buffer;
      try {
        raw = await this.#store.readRaw(meta.id);
      } catch {
        continue; // deleted meanwhile
      }
      const rec = recordFromHeaders(meta, readHeaderFields(raw) ?? []);
      if (rec) this.#bySid.set(rec.sid, rec);
    }
  }

  /**
   * Stores the SMS durably and indexes it; resolves its record. A SID a shared store holds
   * already (an inbound webhook's, delivered to two processes at once) gives way to a new one.
   */
  async add(input: Omit<TwilioRecord, 'id' | 'time'> & { body: string; domain: string; inbox: string }): Promise<TwilioRecord> {
    await this.ready();
    try {
      return await this.#add(input);
    } catch (e) {
      if (!StoreError.is(e, 'DUPLICATE_KEY')) throw e;
      return this.#add({ ...input, sid: newMessageSid() });
    }
  }

  async #add(input: Omit<TwilioRecord, 'id' | 'time'> & { body: string; domain: string; inbox: string }): Promise<TwilioRecord> {
    const extraHeaders: Record<string, string> = {
      [HEADER.sid]: input.sid,
      [HEADER.accountSid]: input.accountSid,
      [HEADER.to]: input.to,
      [HEADER.direction]: input.direction,
    };
    if (input.from !== undefined) extraHeaders[HEADER.from] = input.from;
    if (input.messagingServiceSid !== undefined) extraHeaders[HEADER.messagingServiceSid] = input.messagingServiceSid;
    const raw = await composeMessage({
      from: input.from ?? input.messagingServiceSid,
      // An SMS has no subject: its first words stand in, so listings and the tree name it (as the hosted service does).
      subject: smsSubject(input.body),
      text: input.body,
      inbox: input.inbox,
      domain: input.domain,
      source: input.direction === 'inbound' ? 'webhook' : 'inject',
      extraHeaders,
    });
    const [meta] = await this.#store.add([{ domain: input.domain, inbox: input.inbox }], raw, input.direction === 'inbound' ? 'webhook' : 'inject', undefined, {
      key: input.sid,
      scope: input.accountSid,
    });
    const rec: TwilioRecord = {
      sid: input.sid,
      accountSid: input.accountSid,
      to: input.to,
      from: input.from,
      messagingServiceSid: input.messagingServiceSid,
      direction: input.direction,
      id: meta.id,
      time: meta.time,
    };
    this.#remember(rec);
    return rec;
  }

  async get(sid: string): Promise<TwilioRecord | undefined> {
    if (this.#keys) {
      const meta = await this.#keys.find(sid);
      return meta ? this.#recordOf(meta) : undefined;
    }
    const r = this.#bySid.get(sid);
    return r && (await this.#store.get(r.id)) ? r : undefined;
  }

  /** The records of an account, newest first (ties: the later id first; a shared store: its receipt order). */
  async list(accountSid: string): Promise<TwilioRecord[]> {
    if (this.#keys) {
      const records = await Promise.all((await this.#keys.list(accountSid)).map((m) => this.#recordOf(m)));
      return records.filter((r): r is TwilioRecord => r !== undefined);
    }
    const mine = [...this.#bySid.values()].filter((r) => r.accountSid === accountSid);
    const live = await Promise.all(mine.map(async (r) => ((await this.#store.get(r.id)) ? r : undefined)));
    return live.filter((r): r is TwilioRecord => r !== undefined).sort((a, b) => b.time - a.time || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }

  /** The message's text as stored (trailing line breaks removed, as the SMS shape has it). */
  async body(rec: TwilioRecord): Promise<string> {
    const email = await PostalMime.parse(await this.#store.readRaw(rec.id));
    return (email.text ?? '').replace(/\r\n/g, '\n').replace(/[\r\n]+$/, '');
  }
}

function recordFromHeaders(meta: MessageMeta, fields: Array<[string, string]>): TwilioRecord | undefined {
  const get = (name: string): string | undefined => {
    const v = fields.find(([n]) => n === name.toLowerCase())?.[1];
    return v === undefined ? undefined : decodeEncodedWords(v);
  };
  const sid = get(HEADER.sid);
  const accountSid = get(HEADER.accountSid);
  const to = get(HEADER.to);
  const direction = get(HEADER.direction);
  if (!sid || !MESSAGE_SID_RE.test(sid) || !accountSid || !ACCOUNT_SID_RE.test(accountSid) || to === undefined) return undefined;
  if (direction !== 'outbound-api' && direction !== 'inbound') return undefined;
  return { sid, accountSid, to, from: get(HEADER.from), messagingServiceSid: get(HEADER.messagingServiceSid), direction, id: meta.id, time: meta.time };
}
