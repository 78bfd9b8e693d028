// The storage contract shared by the HTTP API and the SMTP server (maildev style: a
// small interface passed into both; storage never imports HTTP or SMTP code).
import type { MetaTerm } from '../../core/search';

/** How a message reached the server. */
export type MessageSource = 'smtp' | 'inject' | 'webhook';

/** What the in-memory index keeps of one stored message (headers only; bodies stay on disk). */
export interface MessageMeta {
  /** `<inbox>-<epochSeconds>-<counter>`, unique across the whole store. */
  id: string;
  /** Lowercase domain the message was delivered to. */
  domain: string;
  /** Lowercase inbox name. */
  inbox: string;
  /** Receipt time, ms since the Unix epoch. */
  time: number;
  /** Full sender as in the From header: `Name <addr>` or `addr`. */
  from: string;
  subject: string;
  /** Size of the stored .eml in bytes. */
  size: number;
  source: MessageSource;
  /** The best one-time code (core/otp.ts), detected once at ingest; absent when there is none. */
  code?: string;
}

/** The decoded subject and plain text of a message its caller composed (inject, webhook). */
export interface MessageParts {
  subject: string;
  text: string;
}

export interface ListOptions {
  /** At most this many (default and cap decided by the HTTP layer). */
  limit: number;
  /** Skip this many after sorting. */
  skip: number;
  /** `descending` (newest first, the default) or `ascending`. */
  sort: 'ascending' | 'descending';
  /** Continue after this message id (exclusive), in the chosen order. */
  cursor?: string;
}

/** A search's page (core/search.ts decides what the terms mean; the store only applies them). */
export interface SearchOptions {
  limit: number;
  skip: number;
  /** Continue after this message id (exclusive), newest first; it need not exist any more. */
  cursor?: string;
  /** Count every match for `total`; false answers total -1 (a scan that pages on needs no count). */
  count: boolean;
}

export interface ListResult {
  msgs: MessageMeta[];
  /** Total messages matching before limit/skip. */
  total: number;
  /** Id to pass as `cursor` for the next page, when there is one. */
  nextCursor?: string;
}

export interface StoreEvents {
  /** A message became durable and visible. */
  message: (meta: MessageMeta) => void;
  /** Messages were removed (delete, clear or retention). */
  delete: (metas: MessageMeta[]) => void;
}

export interface RetentionOptions {
  /** Keep at most this many messages per inbox (oldest removed first); 0 = unlimited. */
  maxMessages: number;
  /** Remove messages older than this many ms; 0 = unlimited. */
  maxAgeMs: number;
}

/** Keep 1,000 messages per inbox: plenty for a test run, and bounds disk and memory when a loop floods one inbox. */
export const DEFAULT_MAX_MESSAGES_PER_INBOX = 1000;
/** Keep messages 7 days: test mail is short-lived, a week covers a sprint's debugging. */
export const DEFAULT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_RETENTION: RetentionOptions = { maxMessages: DEFAULT_MAX_MESSAGES_PER_INBOX, maxAgeMs: DEFAULT_MAX_AGE_MS };
/** Sweep aged messages once a minute: age limits are in days, a minute late is fine. */
export const RETENTION_SWEEP_INTERVAL_MS = 60_000;

/** Where a store reports what it could not do itself (a failed checkpoint, a skipped file); never message content. */
export type StoreLog = (level: 'info' | 'warn' | 'error', msg: string) => void;

/**
 * A read's answer: the Maildir store answers from its in-memory index at once, the PostgreSQL
 * store (postgres/store.ts) after a query, so that a message another process acknowledged is
 * listed at once. Callers `await` every read.
 */
export type Answer<T> = T | Promise<T>;

/**
 * A message body already written to a file (an SMTP spool file, spool.ts): the store links it
 * into place (or copies it file to file) instead of reading it into memory. `head` is its first
 * bytes, at least the header block as far as CODE_SCAN_MAX_BYTES (code.ts), for the index.
 * The caller removes `file` once add() settled.
 */
export interface FileBody {
  file: string;
  size: number;
  head: Buffer;
}

/**
 * A caller's own key of a message it adds (a Twilio Message SID), unique in the store, the
 * scope that lists it (the Twilio Account SID), and the caller's record of the message (`data`,
 * stored and answered verbatim). Only add() makes one: nothing in a message's bytes does, so
 * mail a sender writes can never carry a key. Both stores keep them (the Maildir store in
 * keys.ts, PostgreSQL in the message's row), made durable with the message.
 */
export interface MessageKey {
  key: string;
  scope: string;
  data: string;
}

/** A keyed message: its index entry and the key it was added with. */
export interface KeyedMessage extends MessageKey {
  meta: MessageMeta;
}

/** The bytes of a message: in memory, or in a file of the data folder's file system. */
export type MessageBody = Buffer | FileBody;

export interface Store {
  /** Rebuilds the index from disk. Damaged or foreign files are skipped with a warning. */
  open(): Promise<void>;
  close(): Promise<void>;

  /**
   * Stores one RFC 5322 message into each (domain, inbox) target. Resolves only when
   * every copy is durable (written, fsynced, renamed into new/). All or nothing: on
   * failure no copy remains visible. A FileBody is never read into memory whole. `parts`: the
   * message's decoded subject and text when the caller composed it itself, so its code is read
   * from them (code.ts codeOfParts). `key`: the caller's key of the message (one target only);
   * a key the store holds already is refused with StoreError duplicate_key, nothing stored.
   */
  add(targets: Array<{ domain: string; inbox: string }>, body: MessageBody, source: MessageSource, parts?: MessageParts, key?: MessageKey): Promise<MessageMeta[]>;

  /** The message added with this key (MessageKey), through every process that shares the store. */
  findByKey(key: string): Answer<KeyedMessage | undefined>;
  /** The keyed messages of a scope (MessageKey), newest first. */
  listByScope(scope: string): Answer<KeyedMessage[]>;

  /** Messages of an inbox, or of every inbox of the domain when `inbox` is `*`. `domain` undefined = every domain. */
  list(domain: string | undefined, inbox: string, options: ListOptions): Answer<ListResult>;
  get(id: string): Answer<MessageMeta | undefined>;
  /**
   * Messages for which every term holds (core/search.ts matchesMetaTerm is the rule), newest
   * first, with `nextCursor` when more remain. Only terms the index decides: the body terms of
   * a query are the caller's (server/http/api/search.ts).
   */
  search(terms: readonly MetaTerm[], options: SearchOptions): Answer<ListResult>;
  /** The stored .eml bytes. */
  readRaw(id: string): Promise<Buffer>;

  /** Removes one message; resolves false when it does not exist. */
  delete(id: string): Promise<boolean>;
  /** Removes every message of an inbox (or `*`); resolves the count removed. */
  clear(domain: string | undefined, inbox: string): Promise<number>;

  /** Known domains with counts. */
  domains(): Answer<Array<{ name: string; inboxes: number; messages: number }>>;
  /** Inboxes of a domain (or every domain) with their message counts, most recent first. */
  inboxes(domain: string | undefined): Answer<Array<{ domain: string; inbox: string; count: number; latest: number }>>;

  on<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void;
  off<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void;
}
