// The PostgreSQL message store: the team server's store (docs/team-server.md). Several
// `test-inbox serve` processes share one database; every read is a query, so a message any
// process acknowledged is listed by every process at once. Arrivals and removals reach the
// other processes by LISTEN/NOTIFY (the push stream and `wait=` long-polls). Tokens never go
// into the database.
//
//   migrations.ts  the numbered schema, applied on open under an advisory lock;
//   notify.ts      LISTEN/NOTIFY: arrivals and removals between the processes;
//   sweep.ts       retention: the age and count sweep, once across processes;
//   queries.ts     the reads; columns.ts the rows as the store's types;
//   failures.ts    what a database failure means (unreachable, refused login, failed statement);
//   spentIds.ts    the web UI's signed-out sessions and used tickets, shared by every process;
//   chaosRules.ts  the fault rules, shared by every process (each mirrors them in memory);
//   this file      the pool and lifecycle, ids and writes (one transaction per delivery,
//                  acknowledged after COMMIT), composing the rest.

import { EventEmitter } from 'node:events';
import { promises as fs } from 'node:fs';
import pg from 'pg';
import { ALL_INBOXES, formatMessageId, isPhoneInbox, normalizeInbox } from '../../../core/ids';
import type { MetaTerm } from '../../../core/search';
import { StoreError } from '../errors';
import { indexedFields, targetsToAdd, type Target } from '../incoming';
import type { FileBody, KeyedMessage, ListOptions, ListResult, MessageBody, MessageKey, MessageMeta, MessageParts, MessageSource, RetentionOptions, SearchOptions, Store, StoreEvents, StoreLog } from '../types';
import { DEFAULT_RETENTION, RETENTION_SWEEP_INTERVAL_MS } from '../types';
import { META_COLUMNS, type Row, toColumn, toMeta } from './columns';
import { describeUrl, isUnavailable, openFailure, queryFailure } from './failures';
import { bounded, migrate } from './migrations';
import { NotifyFeed } from './notify';
import { MessageQueries } from './queries';
import { PostgresSpentIds } from './spentIds';
import { PostgresChaosRules } from './chaosRules';
import { COUNT_LIMIT_DELETE, sweepRetention } from './sweep';

/** Connections per process: ingest and reads of one server; PostgreSQL's default allows 100 in all. */
const POOL_SIZE = 10;
/**
 * Give up connecting, or waiting for a pooled connection, after this long: a start against a dead
 * address fails promptly, a request answers 503.
 */
const CONNECT_TIMEOUT_MS = 5000;
/**
 * Every statement of a request is bounded: past this, the client gives up on it (the database
 * stopped answering, a lock is held elsewhere) and the database cancels it (statement_timeout),
 * and the request answers 503 (SMTP 451). Work that may take longer (migrations, the sweep)
 * sets its own bound.
 */
const DEFAULT_QUERY_TIMEOUT_MS = 15_000;
/** The bound of each statement of the schema migrations on open (a whole table rewritten, another process's migration waited for). */
const MIGRATION_TIMEOUT_MS = 30 * 60_000;
/**
 * A spooled body (FileBody) goes to the database in pieces of this size through a large object
 * (lo_put), never read into memory whole: at most one piece per pooled connection is in memory,
 * POOL_SIZE x 256 KB = 2.5 MB across the process, whatever the size and number of messages.
 */
const FILE_CHUNK_BYTES = 256 * 1024;
/** SQLSTATE of a unique index refusing a row (a message key stored already). */
const UNIQUE_VIOLATION = '23505';

interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/db` (node-postgres connection string). */
  url: string;
  retention?: Partial<RetentionOptions>;
  log?: StoreLog;
  /** How often the age and count sweep runs; default RETENTION_SWEEP_INTERVAL_MS. */
  sweepIntervalMs?: number;
  /** The bound of each statement of a request (DEFAULT_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}

export class PostgresStore implements Store {
  readonly retention: RetentionOptions;
  /** The web UI's signed-out sessions and used tickets, shared by every process of the team server. */
  readonly spentIds = new PostgresSpentIds((text, values) => this.query(text, values));
  /** The fault rules (chaos/rules.ts's SharedChaosRules), shared by every process of the team server. */
  readonly chaosRules: PostgresChaosRules;
  /** Where the store is, for messages (no password). */
  readonly where: string;
  private readonly url: string;
  private readonly log: StoreLog;
  private readonly sweepIntervalMs: number;
  private readonly queryTimeoutMs: number;
  private readonly events = new EventEmitter();
  /** Arrivals and removals between the processes (notify.ts). */
  private readonly feed: NotifyFeed;
  private readonly reads: MessageQueries;
  private pool: pg.Pool | undefined;
  private timer: NodeJS.Timeout | undefined;
  private status: 'new' | 'open' | 'closed' = 'new';
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(options: PostgresStoreOptions) {
    this.url = options.url;
    this.where = describeUrl(options.url);
    this.retention = { ...DEFAULT_RETENTION, ...options.retention };
    for (const [k, v] of Object.entries(this.retention)) {
      if (!Number.isInteger(v) || v < 0) throw new RangeError(`retention.${k} must be a whole number >= 0, got ${String(v)}`);
    }
    this.log = options.log ?? (() => undefined);
    this.sweepIntervalMs = options.sweepIntervalMs ?? RETENTION_SWEEP_INTERVAL_MS;
    this.queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.events.setMaxListeners(0);
    this.feed = new NotifyFeed(
      {
        url: this.url,
        queryTimeoutMs: this.queryTimeoutMs,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        log: this.log,
        state: () => this.status,
        track: (p) => this.track(p),
        query: (text, values) => this.query(text, values),
      },
      this.events,
    );
    this.reads = new MessageQueries((text, values) => this.query(text, values));
    this.chaosRules = new PostgresChaosRules({
      query: (text, values) => this.query(text, values),
      transaction: (work) => this.transaction(work),
      feed: this.feed,
      log: this.log,
      track: (p) => this.track(p),
    });
  }

  // ---- lifecycle -------------------------------------------------------------------------

  async open(): Promise<void> {
    if (this.status !== 'new') throw new StoreError('not_open', `store ${this.where} was already opened`);
    // Every statement bounded twice: the client stops waiting (query_timeout: a database that stopped
    // answering) and the database cancels it (statement_timeout: a lock held elsewhere).
    const pool = new pg.Pool({
      connectionString: this.url,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: this.queryTimeoutMs,
      statement_timeout: this.queryTimeoutMs,
      application_name: 'test-inbox',
    });
    // An idle connection the server drops must not crash the process: the next query reconnects.
    pool.on('error', (e) => this.log('warn', `store: database connection lost: ${e.message}`));
    // pg-pool listens for a client's errors only while it is idle in the pool: a connection cut
    // while checked out, or just after its release, would be an unhandled 'error' that ends the
    // process. Every client gets a listener of its own for its whole life; the statement in
    // flight fails by itself, and the pool drops a broken client on release.
    pool.on('connect', (client) => client.on('error', () => undefined));
    this.pool = pool;
    try {
      const client = await pool.connect();
      try {
        // Migrations rewrite whole tables and wait for another process's: not bounded like a request.
        await client.query(bounded('SET statement_timeout = 0', undefined, this.queryTimeoutMs));
        await migrate(client, MIGRATION_TIMEOUT_MS);
      } finally {
        // Its session's settings go with it.
        client.release(true);
      }
      await this.feed.listen();
      const { rows } = await pool.query<{ n: string; last: string }>('SELECT count(*) AS n, coalesce(max(seq), 0) AS last FROM test_inbox_messages');
      // Messages already there at open are never replayed as arrivals (LISTEN was on before this count).
      this.feed.opened(rows[0].last);
      this.log('info', `store: ${rows[0].n} message(s) in PostgreSQL at ${this.where}`);
    } catch (e) {
      this.status = 'closed';
      await this.feed.end();
      await pool.end().catch(() => undefined);
      throw openFailure(e, this.where);
    }
    this.status = 'open';
    this.sweep();
    if (this.sweepIntervalMs > 0) {
      this.timer = setInterval(() => this.sweep(), this.sweepIntervalMs);
      this.timer.unref();
    }
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    const wasOpen = this.status === 'open';
    this.status = 'closed';
    clearInterval(this.timer);
    this.feed.stop();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    if (wasOpen) {
      await this.feed.end();
      await this.pool?.end().catch(() => undefined);
    }
  }

  // ---- queries ---------------------------------------------------------------------------

  private db(): pg.Pool {
    if (this.status !== 'open' || !this.pool) throw new StoreError('not_open', 'the store is not open');
    return this.pool;
  }

  /** A query on the pool; its failures are StoreErrors (failures.ts). */
  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    try {
      return (await this.db().query<R>(text, values)).rows;
    } catch (e) {
      throw queryFailure(e, this.where);
    }
  }

  /** Runs `work` in one transaction; commits, or rolls back and rethrows. */
  private async transaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.db().connect();
    } catch (e) {
      throw queryFailure(e, this.where);
    }
    let broken = false;
    // A connection lost between two statements (the database stopped while a spooled body is
    // read) fails no statement of ours by itself: it marks the client broken for the release.
    const lost = (): void => {
      broken = true;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const out = await work(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      // A connection that timed out or broke is dropped (the database rolls its transaction back):
      // a ROLLBACK on it would wait for the bound a second time.
      broken ||= isUnavailable(e);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      throw queryFailure(e, this.where);
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  // ---- writes ----------------------------------------------------------------------------

  async add(targets: Target[], body: MessageBody, source: MessageSource, parts?: MessageParts, key?: MessageKey): Promise<MessageMeta[]> {
    const norm = targetsToAdd(this.status === 'open', targets);
    if (key !== undefined && norm.length !== 1) throw new StoreError('bad_target', `a message key names one message, not ${norm.length}`);
    return this.track(this.addNormalized(norm, body, source, parts, key));
  }

  private async addNormalized(norm: Target[], body: MessageBody, source: MessageSource, parts: MessageParts | undefined, key: MessageKey | undefined): Promise<MessageMeta[]> {
    const { size, from, subject, codes } = await indexedFields(norm, body, parts);
    const added = await this.transaction(async (c) => {
      const { rows } = await c.query<{ seq: string }>('SELECT nextval($1) AS seq FROM generate_series(1, $2)', ['test_inbox_message_seq', norm.length]);
      const time = Date.now();
      const seconds = Math.floor(time / 1000);
      const out: Array<MessageMeta & { seq: string }> = norm.map(({ domain, inbox }, i) => {
        const code = codes.get(isPhoneInbox(inbox));
        const seq = rows[i].seq;
        return { seq, id: formatMessageId(inbox, seconds, Number(seq)), domain, inbox, time, from, subject, size, source, ...(code ? { code } : {}) };
      });
      // One copy of the bytes per recipient row; a spooled body arrives through a large object (uploadFile), unlinked in this transaction.
      const oid = Buffer.isBuffer(body) ? undefined : await this.uploadFile(c, body);
      try {
        await c.query(
          `INSERT INTO test_inbox_messages (seq, id, domain, inbox, time_ms, sender, subject, size, source, code, raw, msg_key, key_scope, key_data)
           SELECT t.*, r.*, $12::text, $13::text, $14::text FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[]) AS t, (SELECT ${oid === undefined ? '$11::bytea' : 'lo_get($11::oid)'}) AS r`,
          [out.map((m) => m.seq), out.map((m) => m.id), out.map((m) => m.domain), out.map((m) => m.inbox), out.map((m) => m.time), out.map((m) => toColumn(m.from)), out.map((m) => toColumn(m.subject)), out.map((m) => m.size), out.map((m) => m.source), out.map((m) => (m.code === undefined ? null : toColumn(m.code))), oid ?? body, key?.key ?? null, key?.scope ?? null, key === undefined ? null : toColumn(key.data)],
        );
      } catch (e) {
        if ((e as { code?: unknown }).code === UNIQUE_VIOLATION && key !== undefined) throw new StoreError('duplicate_key', `a message with key ${key.key} is stored already`, { cause: e });
        throw e;
      }
      if (oid !== undefined) await c.query('SELECT lo_unlink($1::oid)', [oid]);
      await this.feed.notify(c, 'm', out.map((m) => m.seq));
      return out;
    });
    // Acknowledged only now, after COMMIT.
    this.feed.announce(added);
    const metas = added.map(({ seq: _seq, ...meta }) => meta as MessageMeta);
    if (this.retention.maxMessages > 0) void this.track(this.enforceCount(norm).catch((e: unknown) => this.log('warn', `store: retention by count failed: ${(e as Error).message}`)));
    return metas;
  }

  /**
   * Writes a spooled body into a new large object in pieces of FILE_CHUNK_BYTES (lo_put), inside
   * the delivery's transaction: node-postgres has no streamed parameters, and reading a 24 MB
   * body whole would hold it (and its copy in the protocol message) in this process's memory,
   * outside the shared byte budget. Resolves the object's oid; a rollback removes the object.
   */
  private async uploadFile(c: pg.PoolClient, body: FileBody): Promise<string> {
    const { rows } = await c.query<{ oid: string }>('SELECT lo_create(0)::text AS oid');
    const oid = rows[0].oid;
    const fh = await fs.open(body.file, 'r');
    try {
      const chunk = Buffer.allocUnsafe(Math.min(FILE_CHUNK_BYTES, Math.max(1, body.size)));
      let offset = 0;
      while (offset < body.size) {
        const { bytesRead } = await fh.read(chunk, 0, Math.min(chunk.length, body.size - offset), offset);
        if (bytesRead === 0) throw new StoreError('io', `the spooled message ${body.file} ended at ${offset} of ${body.size} bytes`);
        await c.query('SELECT lo_put($1::oid, $2::bigint, $3::bytea)', [oid, offset, chunk.subarray(0, bytesRead)]);
        offset += bytesRead;
      }
    } finally {
      await fh.close();
    }
    return oid;
  }

  async delete(id: string): Promise<boolean> {
    const gone = await this.track(this.remove('DELETE FROM test_inbox_messages WHERE id = $1', [id]));
    return gone.length > 0;
  }

  async clear(domain: string | undefined, inbox: string): Promise<number> {
    const i = normalizeInbox(inbox);
    const d = domain?.toLowerCase();
    const where: string[] = [];
    const values: unknown[] = [];
    if (d !== undefined) where.push(`domain = $${values.push(d)}`);
    if (i !== ALL_INBOXES) where.push(`inbox = $${values.push(i)}`);
    const gone = await this.track(this.remove(`DELETE FROM test_inbox_messages${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, values));
    return gone.length;
  }

  /** Runs one set-based DELETE … RETURNING, announces what it removed, resolves it. */
  private async remove(sql: string, values: unknown[]): Promise<MessageMeta[]> {
    const metas = await this.transaction(async (c) => {
      const { rows } = await c.query<Row>(`${sql} RETURNING ${META_COLUMNS}`, values);
      const out = rows.map(toMeta);
      if (out.length > 0) await this.feed.notify(c, 'd', out);
      return out;
    });
    if (metas.length > 0) this.events.emit('delete', metas);
    return metas;
  }

  // ---- retention -------------------------------------------------------------------------

  private async enforceCount(inboxes: Array<{ domain: string; inbox: string }>): Promise<void> {
    for (const { domain, inbox } of inboxes) await this.remove(COUNT_LIMIT_DELETE, [domain, inbox, this.retention.maxMessages]);
  }

  /** The age and count sweep (sweep.ts), once per period across every process. */
  private sweep(): void {
    if (this.status !== 'open') return;
    const run = async (): Promise<void> => {
      const removed = await this.transaction((t) => sweepRetention(t, this.retention, this.sweepIntervalMs, (c, kind, items) => this.feed.notify(c, kind, items)));
      if (removed === undefined) return;
      if (removed.length > 0) {
        this.events.emit('delete', removed);
        this.log('info', `store: retention sweep removed ${removed.length} message(s)`);
      }
    };
    void this.track(run().catch((e: unknown) => this.log('warn', `store: retention sweep failed: ${(e as Error).message}`)));
  }

  // ---- reads (queries.ts) ------------------------------------------------------------------

  list(domain: string | undefined, inbox: string, options: ListOptions): Promise<ListResult> {
    return this.reads.list(domain, inbox, options);
  }

  search(terms: readonly MetaTerm[], options: SearchOptions): Promise<ListResult> {
    return this.reads.search(terms, options);
  }

  findByKey(key: string): Promise<KeyedMessage | undefined> {
    return this.reads.findByKey(key);
  }

  listByScope(scope: string): Promise<KeyedMessage[]> {
    return this.reads.listByScope(scope);
  }

  get(id: string): Promise<MessageMeta | undefined> {
    return this.reads.get(id);
  }

  readRaw(id: string): Promise<Buffer> {
    return this.reads.readRaw(id);
  }

  domains(): Promise<Array<{ name: string; inboxes: number; messages: number }>> {
    return this.reads.domains();
  }

  inboxes(domain: string | undefined): Promise<Array<{ domain: string; inbox: string; count: number; latest: number }>> {
    return this.reads.inboxes(domain);
  }

  on<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.on(event, listener);
  }

  off<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.off(event, listener);
  }

  /** Keeps the promise among the work in flight, which close() waits for. */
  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = (): void => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }
}
