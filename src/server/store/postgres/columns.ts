// The rows of the PostgreSQL store's message table as the store's types: the columns every
// query selects, a row as a MessageMeta (or a keyed message), and text escaped for a `text`
// column.
import type { KeyedMessage, MessageMeta, MessageSource } from '../types';

export const META_COLUMNS = 'seq, id, domain, inbox, time_ms, sender, subject, size, source, code';

/** A row as selected by META_COLUMNS. */
export interface Row {
  seq: string;
  id: string;
  domain: string;
  inbox: string;
  time_ms: string;
  sender: string;
  subject: string;
  size: number;
  source: MessageSource;
  code: string | null;
}

export type KeyedRow = Row & { msg_key: string; key_scope: string; key_data: string | null };

export function toMeta(r: Row): MessageMeta {
  return { id: r.id, domain: r.domain, inbox: r.inbox, time: Number(r.time_ms), from: fromColumn(r.sender), subject: fromColumn(r.subject), size: r.size, source: r.source, ...(r.code ? { code: fromColumn(r.code) } : {}) };
}

/** A keyed row; a key stored before its data was (migration 5) has none: '' (its caller reads the message). */
export function keyed(r: KeyedRow): KeyedMessage {
  return { meta: toMeta(r), key: r.msg_key, scope: r.key_scope, data: r.key_data === null ? '' : fromColumn(r.key_data) };
}

/**
 * A `text` column holds no NUL character, which a sender or subject may carry (the raw bytes,
 * in `bytea`, are stored unchanged). Text written to one is escaped: U+0000 as U+0010 '0' and
 * U+0010 itself doubled, so text without either (all ordinary text) is stored as is and every
 * string reads back exactly as the Maildir store keeps it.
 */
const ESCAPE = '\u0010';
export function toColumn(text: string): string {
  return text.includes('\u0000') || text.includes(ESCAPE) ? text.replace(/[\u0000\u0010]/g, (c) => (c === ESCAPE ? ESCAPE + ESCAPE : ESCAPE + '0')) : text;
}

function fromColumn(text: string): string {
  return text.includes(ESCAPE) ? text.replace(/\u0010([\u00100])/g, (_, c: string) => (c === '0' ? '\u0000' : ESCAPE)) : text;
}
