// The reads of the PostgreSQL store: every read is a query (so a message any process acknowledged
// is listed by every process at once); totals come from the counts' deltas (migration 4).
import type pg from 'pg';
import { ALL_INBOXES, normalizeInbox, parseMessageId } from '../../../core/ids';
import { matchesNothing, type MetaTerm } from '../../../core/search';
import { StoreError } from '../errors';
import type { KeyedMessage, ListOptions, ListResult, MessageMeta, SearchOptions } from '../types';
import { keyed, type KeyedRow, META_COLUMNS, type Row, toMeta } from './columns';

/** A bounded query on the store's pool; its failures are StoreErrors. */
export type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

export class MessageQueries {
  constructor(private readonly query: Query) {}

  async list(domain: string | undefined, inbox: string, options: ListOptions): Promise<ListResult> {
    const i = normalizeInbox(inbox);
    const where: string[] = [];
    const values: unknown[] = [];
    if (domain !== undefined) where.push(`domain = $${values.push(domain.toLowerCase())}`);
    if (i !== ALL_INBOXES) where.push(`inbox = $${values.push(i)}`);
    const filter = where.length ? where.join(' AND ') : 'TRUE';
    const descending = options.sort !== 'ascending';
    let page = filter;
    if (options.cursor !== undefined) {
      const parsed = parseMessageId(options.cursor);
      if (!parsed) throw new StoreError('bad_cursor', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
      page += ` AND seq ${descending ? '<' : '>'} $${values.push(parsed.counter)}`;
    }
    const limit = Math.max(0, Math.floor(options.limit));
    const skip = Math.max(0, Math.floor(options.skip));
    const [rows, count] = await Promise.all([
      this.query<Row>(`SELECT ${META_COLUMNS} FROM test_inbox_messages WHERE ${page} ORDER BY seq ${descending ? 'DESC' : 'ASC'} OFFSET $${values.length + 1} LIMIT $${values.length + 2}`, [...values, skip, Math.min(limit + 1, Number.MAX_SAFE_INTEGER)]),
      // The total from the counts' deltas the triggers append (migration 4): a few rows, not the inbox's every index entry.
      this.query<{ n: string }>(`SELECT coalesce(sum(n), 0) AS n FROM test_inbox_counts WHERE ${filter}`, values.slice(0, where.length)),
    ]);
    const more = rows.length > limit;
    const msgs = rows.slice(0, limit).map(toMeta);
    return { msgs, total: Number(count[0].n), ...(more && msgs.length > 0 ? { nextCursor: msgs[msgs.length - 1].id } : {}) };
  }

  /** One parameterized statement for the page and one for the count; each term is one condition (searchCondition). */
  async search(terms: readonly MetaTerm[], options: SearchOptions): Promise<ListResult> {
    const values: unknown[] = [];
    const param = (v: unknown): string => `$${values.push(v)}`;
    const filter = terms.length ? terms.map((t) => (t.negated ? `NOT (${searchCondition(t, param)})` : searchCondition(t, param))).join(' AND ') : 'TRUE';
    const filterValues = values.length;
    let page = filter;
    if (options.cursor !== undefined) {
      const parsed = parseMessageId(options.cursor);
      if (!parsed) throw new StoreError('bad_cursor', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
      page += ` AND seq < ${param(parsed.counter)}`;
    }
    const limit = Math.max(0, Math.floor(options.limit));
    const skip = Math.max(0, Math.floor(options.skip));
    const pageSql = `SELECT ${META_COLUMNS} FROM test_inbox_messages WHERE ${page} ORDER BY seq DESC OFFSET ${param(skip)} LIMIT ${param(limit + 1)}`;
    const [rows, count] = await Promise.all([
      this.query<Row>(pageSql, values),
      options.count ? this.query<{ n: string }>(`SELECT count(*) AS n FROM test_inbox_messages WHERE ${filter}`, values.slice(0, filterValues)) : Promise.resolve([{ n: '-1' }]),
    ]);
    const more = rows.length > limit;
    const msgs = rows.slice(0, limit).map(toMeta);
    return { msgs, total: Number(count[0].n), ...(more && msgs.length > 0 ? { nextCursor: msgs[msgs.length - 1].id } : {}) };
  }

  async findByKey(key: string): Promise<KeyedMessage | undefined> {
    const rows = await this.query<KeyedRow>(`SELECT ${META_COLUMNS}, msg_key, key_scope, key_data FROM test_inbox_messages WHERE msg_key = $1`, [key]);
    return rows[0] ? keyed(rows[0]) : undefined;
  }

  async listByScope(scope: string): Promise<KeyedMessage[]> {
    const rows = await this.query<KeyedRow>(`SELECT ${META_COLUMNS}, msg_key, key_scope, key_data FROM test_inbox_messages WHERE key_scope = $1 ORDER BY seq DESC`, [scope]);
    return rows.map(keyed);
  }

  async get(id: string): Promise<MessageMeta | undefined> {
    const rows = await this.query<Row>(`SELECT ${META_COLUMNS} FROM test_inbox_messages WHERE id = $1`, [id]);
    return rows[0] ? toMeta(rows[0]) : undefined;
  }

  async readRaw(id: string): Promise<Buffer> {
    const rows = await this.query<{ raw: Buffer }>('SELECT raw FROM test_inbox_messages WHERE id = $1', [id]);
    if (!rows[0]) throw new StoreError('not_found', `no message ${id}`);
    return rows[0].raw;
  }

  async domains(): Promise<Array<{ name: string; inboxes: number; messages: number }>> {
    const rows = await this.query<{ name: string; inboxes: string; messages: string }>(
      `SELECT domain AS name, count(*) AS inboxes, sum(n) AS messages
         FROM (SELECT domain, inbox, sum(n) AS n FROM test_inbox_counts GROUP BY domain, inbox) AS c WHERE n > 0
        GROUP BY domain ORDER BY domain COLLATE "C"`,
    );
    return rows.map((r) => ({ name: r.name, inboxes: Number(r.inboxes), messages: Number(r.messages) }));
  }

  async inboxes(domain: string | undefined): Promise<Array<{ domain: string; inbox: string; count: number; latest: number }>> {
    const values: unknown[] = [];
    const where = domain === undefined ? '' : `WHERE domain = $${values.push(domain.toLowerCase())}`;
    const rows = await this.query<{ domain: string; inbox: string; count: string; latest: string }>(
      `SELECT domain, inbox, count(*) AS count, max(time_ms) AS latest FROM test_inbox_messages ${where} GROUP BY domain, inbox ORDER BY max(time_ms) DESC`,
      values,
    );
    return rows.map((r) => ({ domain: r.domain, inbox: r.inbox, count: Number(r.count), latest: Number(r.latest) }));
  }
}

/**
 * The SQL of one search term before its negation, the same rule as core/search.ts
 * matchesMetaTerm: text compared with case folded for A–Z only (`lower` under the "C" collation
 * folds exactly those, whatever the database's locale); never NULL, so a negation is exact.
 */
function searchCondition(t: MetaTerm, param: (v: unknown) => string): string {
  // A text holding U+0000 (which a text parameter cannot carry either) matches nothing: the core's rule.
  if (matchesNothing(t)) return 'FALSE';
  switch (t.field) {
    case 'from':
      return `strpos(lower(sender COLLATE "C"), ${param(t.value)}) > 0`;
    case 'to':
      return `strpos(inbox || '@' || domain, ${param(t.value)}) > 0`;
    case 'subject':
      return `strpos(lower(subject COLLATE "C"), ${param(t.value)}) > 0`;
    case 'domain':
      return `domain = ${param(t.value)}`;
    case 'inbox':
      return `inbox = ${param(t.value)}`;
    case 'code':
      return `(code IS NOT NULL AND code = ${param(t.value)})`;
    case 'has':
      return 'code IS NOT NULL';
    case 'is':
      // The phone column is `inbox ~ PHONE_INBOX_PATTERN` (core/ids.ts), computed once per row (migration 7).
      return `${t.value === 'sms' ? '' : 'NOT '}phone`;
    case 'after':
      return `time_ms >= ${param(t.value)}`;
    case 'before':
      return `time_ms < ${param(t.value)}`;
  }
}
