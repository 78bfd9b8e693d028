// The PostgreSQL message store: the team server's store (docs/team-server.md). Several
// `test-inbox serve` processes share one database; every read is a query, so a message any
// process acknowledged is listed by every process at once. Arrivals and removals reach the
// other processes by LISTEN/NOTIFY (the push stream and `wait=` long-polls). Tokens never go
// into the database.
//
//   migrations.ts  the numbered schema, applied on open under an advisory lock;
//   this file      ids, writes (one transaction per delivery, acknowledged after COMMIT),
//                  reads, retention (set-based, once across processes), events.

import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import pg from 'pg';
import { ALL_INBOXES, formatMessageId, isPhoneInbox, normalizeInbox, parseMessageId, PHONE_INBOX_PATTERN } from '../../../core/ids';
import type { MetaTerm } from '../../../core/search';
import { StoreError } from '../errors';
import { indexedFields, targetsToAdd, type Target } from '../incoming';
import type { FileBody, KeyedMessage, ListOptions, ListResult, MessageBody, MessageKey, MessageMeta, MessageParts, MessageSource, RetentionOptions, SearchOptions, Store, StoreEvents, StoreLog } from '../types';
import { DEFAULT_RETENTION, RETENTION_SWEEP_INTERVAL_MS } from '../types';
import { bounded, migrate, RETENTION_SWEEP } from './migrations';
import { PostgresSpentIds } from './spentIds';

/** The NOTIFY channel of arrivals and removals. */
export const EVENTS_CHANNEL = 'test_inbox_events';
/** NOTIFY payloads must stay under 8000 bytes; removals are sent in chunks below this. */
const MAX_NOTIFY_BYTES = 7000;
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
export const DEFAULT_QUERY_TIMEOUT_MS = 15_000;
/** The bound of the periodic retention sweep's statements (set-based DELETEs over a large table). */
const SWEEP_TIMEOUT_MS = 10 * 60_000;
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
/**
 * A process runs the periodic sweep when the last one (by any process) is this share of its
 * period old: the processes' timers are out of phase, and one that fires a little early still
 * sweeps once per period, never a second time within one.
 */
const SWEEP_PERIOD_SHARE = 0.9;
/** Retry LISTEN this often while the database is away. */
const LISTEN_RETRY_MS = 1000;
/**
 * When LISTEN comes back after a loss, arrivals stamped this long before the loss are replayed
 * too (not only those after the last one seen): a delivery takes its time stamp when its
 * transaction starts, a large one commits seconds later, and the processes' clocks may differ.
 */
const REPLAY_GRACE_MS = 60_000;
/** At most this many arrivals are replayed after one loss (the newest); listings are queries and show the rest. */
const REPLAY_MAX = 10_000;
/** Arrivals read at once by one query of readArrivals. */
const ARRIVALS_READ_AT_ONCE = 1000;
/** Arrivals announced to this process's subscribers remembered (so none is announced twice), for 2 x REPLAY_GRACE_MS at most. */
const ANNOUNCED_MAX = 100_000;

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/db` (node-postgres connection string). */
  url: string;
  retention?: Partial<RetentionOptions>;
  log?: StoreLog;
  /** How often the age and count sweep runs; default RETENTION_SWEEP_INTERVAL_MS. */
  sweepIntervalMs?: number;
  /** The bound of each statement of a request (DEFAULT_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}

const META_COLUMNS = 'seq, id, domain, inbox, time_ms, sender, subject, size, source, code';

interface Row {
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

function toMeta(r: Row): MessageMeta {
  return { id: r.id, domain: r.domain, inbox: r.inbox, time: Number(r.time_ms), from: fromColumn(r.sender), subject: fromColumn(r.subject), size: r.size, source: r.source, ...(r.code ? { code: fromColumn(r.code) } : {}) };
}

/** A keyed row; a key stored before its data was (migration 5) has none: '' (its caller reads the message). */
function keyed(r: KeyedRow): KeyedMessage {
  return { meta: toMeta(r), key: r.msg_key, scope: r.key_scope, data: r.key_data === null ? '' : fromColumn(r.key_data) };
}

type KeyedRow = Row & { msg_key: string; key_scope: string; key_data: string | null };

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

export function fromColumn(text: string): string {
  return text.includes(ESCAPE) ? text.replace(/\u0010([\u00100])/g, (_, c: string) => (c === '0' ? '\u0000' : ESCAPE)) : text;
}

/** SQLSTATE classes and socket errors that mean "the database is not reachable now", not "the query is wrong". */
function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    // 57014: a statement cancelled by statement_timeout (the query bound).
    if (/^(08|57P|53)/.test(code) || code === '57014') return true;
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE|EHOSTUNREACH|ENETUNREACH)$/.test(code)) return true;
  }
  const msg = e instanceof Error ? e.message : '';
  // 'timeout exceeded when trying to connect': every pooled connection stayed busy (pg-pool);
  // 'Query read timeout': a statement past its bound (query_timeout).
  return /Connection terminated|connection timeout|timeout expired|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(msg);
}

/** The URL without its password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the database URL';
  }
}

export class PostgresStore implements Store {
  readonly retention: RetentionOptions;
  /** The web UI's signed-out sessions and used tickets, shared by every process of the team server. */
  readonly spentIds = new PostgresSpentIds((text, values) => this.query(text, values));
  /** Where the store is, for messages (no password). */
  readonly where: string;
  private readonly url: string;
  private readonly log: StoreLog;
  private readonly sweepIntervalMs: number;
  private readonly queryTimeoutMs: number;
  private readonly events = new EventEmitter();
  /** Names this process in NOTIFY payloads, so it does not announce its own writes twice. */
  private readonly origin = randomBytes(8).toString('hex');
  private pool: pg.Pool | undefined;
  private listener: pg.Client | undefined;
  private listenRetry: NodeJS.Timeout | undefined;
  /** When the LISTEN connection was lost, until the arrivals of the gap are replayed. */
  private lostAt: number | undefined;
  /** Arrivals (by seq) this process announced lately, with when: none is announced twice. */
  private readonly announced = new Map<string, number>();
  /** The highest seq this process announced (or found at open): a replay starts after it. */
  private lastSeq = 0n;
  /** Arrivals other processes announced whose rows were not read yet (readArrivals). */
  private readonly unread = new Set<string>();
  private reading: Promise<void> | undefined;
  private readRetry: NodeJS.Timeout | undefined;
  /** The newest seq at open: a replay never reaches back before it. */
  private openSeq = '0';
  private timer: NodeJS.Timeout | undefined;
  private state: 'new' | 'open' | 'closed' = 'new';
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
  }

  // ---- lifecycle -------------------------------------------------------------------------

  async open(): Promise<void> {
    if (this.state !== 'new') throw new StoreError('NOT_OPEN', `store ${this.where} was already opened`);
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
      await this.listen();
      const { rows } = await pool.query<{ n: string; last: string }>('SELECT count(*) AS n, coalesce(max(seq), 0) AS last FROM test_inbox_messages');
      // Messages already there at open are never replayed as arrivals (LISTEN was on before this count).
      this.openSeq = rows[0].last;
      this.lastSeq = BigInt(rows[0].last);
      this.log('info', `store: ${rows[0].n} message(s) in PostgreSQL at ${this.where}`);
    } catch (e) {
      this.state = 'closed';
      await this.listener?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw this.startError(e);
    }
    this.state = 'open';
    this.sweep();
    if (this.sweepIntervalMs > 0) {
      this.timer = setInterval(() => this.sweep(), this.sweepIntervalMs);
      this.timer.unref();
    }
  }

  private startError(e: unknown): StoreError {
    if (StoreError.is(e)) return e;
    const code = (e as { code?: unknown }).code;
    const why = (e as Error).message;
    if (code === '28P01' || code === '28000') return new StoreError('DB_AUTH', `the database at ${this.where} refused the login: ${why}`, { cause: e });
    if (code === '3D000') return new StoreError('DB_UNREACHABLE', `the database at ${this.where} does not exist: ${why}`, { cause: e });
    if (isUnavailable(e)) return new StoreError('DB_UNREACHABLE', `cannot reach the database at ${this.where}: ${why || String(code)}`, { cause: e });
    return new StoreError('IO', `cannot open the store at ${this.where}: ${why}`, { cause: e });
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasOpen = this.state === 'open';
    this.state = 'closed';
    clearInterval(this.timer);
    clearTimeout(this.listenRetry);
    clearTimeout(this.readRetry);
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    if (wasOpen) {
      await this.listener?.end().catch(() => undefined);
      await this.pool?.end().catch(() => undefined);
    }
  }

  /** One dedicated connection LISTENs; when it drops it is replaced until the database returns. */
  private async listen(): Promise<void> {
    // The pid names this process's LISTEN connection in pg_stat_activity (an operator's view, a test's target).
    // It also reads the rows of other processes' arrivals (readArrivals), each read bounded.
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: this.queryTimeoutMs, application_name: `test-inbox listen ${process.pid}` });
    let lost = false;
    const onLost = (e?: Error): void => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = undefined;
      if (this.state === 'closed') return;
      this.lostAt ??= Date.now();
      this.log('warn', `store: LISTEN connection lost${e ? `: ${e.message}` : ''}; retrying every ${LISTEN_RETRY_MS} ms`);
      this.retryListen();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL && n.payload) void this.track(this.onNotification(n.payload));
    });
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    this.listener = client;
    if (this.lostAt !== undefined) await this.replay(client, this.lostAt);
    // Arrivals whose read failed with the connection this one replaces.
    if (this.unread.size > 0) void this.track(this.readArrivals());
  }

  /**
   * Announces the arrivals committed while LISTEN was away (their NOTIFY went to no one here):
   * every message after the last one announced, or stamped from REPLAY_GRACE_MS before the loss,
   * newer than the store's open and not announced yet. Runs once LISTEN is back, so nothing falls between.
   */
  private async replay(client: pg.Client, lostAt: number): Promise<void> {
    // On the LISTEN connection: a pool busy with requests does not hold it up.
    const { rows } = await client.query<Row>(
      `SELECT * FROM (SELECT ${META_COLUMNS} FROM test_inbox_messages WHERE (seq > $1 OR time_ms >= $2) AND seq > $4 ORDER BY seq DESC LIMIT $3) AS gap ORDER BY seq`,
      [this.lastSeq.toString(), lostAt - REPLAY_GRACE_MS, REPLAY_MAX, this.openSeq],
    );
    const fresh = rows.filter((r) => !this.announced.has(r.seq));
    this.lostAt = undefined;
    this.log('info', `store: LISTEN back after ${Date.now() - lostAt} ms; replayed ${fresh.length} arrival(s) of the gap`);
    this.announce(fresh);
  }

  /** Emits `message` for each row not announced yet, and remembers it. */
  private announce(rows: Array<{ seq: string } & MessageMeta>): void;
  private announce(rows: Row[]): void;
  private announce(rows: Array<Row | ({ seq: string } & MessageMeta)>): void {
    const now = Date.now();
    for (const [seq, at] of this.announced) {
      if (at >= now - 2 * REPLAY_GRACE_MS && this.announced.size < ANNOUNCED_MAX) break;
      this.announced.delete(seq);
    }
    for (const r of rows) {
      if (this.announced.has(r.seq)) continue;
      this.announced.set(r.seq, now);
      const seq = BigInt(r.seq);
      if (seq > this.lastSeq) this.lastSeq = seq;
      if ('time_ms' in r) {
        this.events.emit('message', toMeta(r));
      } else {
        const { seq: _seq, ...meta } = r;
        this.events.emit('message', meta as MessageMeta);
      }
    }
  }

  private retryListen(): void {
    clearTimeout(this.listenRetry);
    this.listenRetry = setTimeout(() => {
      if (this.state !== 'open') return;
      // Back: listen() replays the gap. A failure (of the connection or of the replay) tries again.
      this.listen().catch(() => {
        void this.listener?.end().catch(() => undefined);
        this.retryListen();
      });
    }, LISTEN_RETRY_MS);
    this.listenRetry.unref();
  }

  /**
   * Reads the rows of the arrivals other processes announced and announces them here. They are
   * read on the LISTEN connection, which serves nothing else, so a pool busy with requests
   * never delays them; an arrival stays in `unread` until its row was read (or is gone), and
   * a read that fails is tried again (the LISTEN connection it broke is replaced, and its
   * replay covers the gap too). No committed arrival is dropped on the way.
   */
  private readArrivals(): Promise<void> {
    this.reading ??= (async () => {
      try {
        while (this.unread.size > 0 && this.state === 'open') {
          const seqs = [...this.unread].slice(0, ARRIVALS_READ_AT_ONCE);
          const text = `SELECT ${META_COLUMNS} FROM test_inbox_messages WHERE seq = ANY($1::bigint[]) ORDER BY seq`;
          const client = this.listener;
          let rows: Row[];
          try {
            rows = client ? (await client.query<Row>(text, [seqs])).rows : await this.query<Row>(text, [seqs]);
          } catch (e) {
            this.log('warn', `store: could not read ${this.unread.size} arrival(s) announced by another process yet (tried again in ${LISTEN_RETRY_MS} ms): ${(e as Error).message}`);
            // A LISTEN connection that failed a read (its bound passed) is replaced.
            if (client && this.listener === client) void client.end().catch(() => undefined);
            clearTimeout(this.readRetry);
            this.readRetry = setTimeout(() => void this.track(this.readArrivals()), LISTEN_RETRY_MS);
            this.readRetry.unref();
            return;
          }
          // Read, or gone meanwhile (its removal is announced on its own).
          for (const seq of seqs) this.unread.delete(seq);
          this.announce(rows);
        }
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  private async onNotification(payload: string): Promise<void> {
    let note: { o?: string; k?: string; s?: string[]; m?: MessageMeta[] };
    try {
      note = JSON.parse(payload) as typeof note;
    } catch {
      return;
    }
    if (note.o === this.origin) return;
    if (note.k === 'm' && Array.isArray(note.s) && note.s.length > 0) {
      for (const seq of note.s) if (typeof seq === 'string' && /^[0-9]{1,19}$/.test(seq) && !this.announced.has(seq)) this.unread.add(seq);
      await this.readArrivals();
    } else if (note.k === 'd' && Array.isArray(note.m) && note.m.length > 0) {
      this.events.emit('delete', note.m);
    }
  }

  // ---- queries ---------------------------------------------------------------------------

  private db(): pg.Pool {
    if (this.state !== 'open' || !this.pool) throw new StoreError('NOT_OPEN', 'the store is not open');
    return this.pool;
  }

  private wrap(e: unknown): StoreError {
    if (StoreError.is(e)) return e;
    if (isUnavailable(e)) return new StoreError('DB_UNREACHABLE', `the database at ${this.where} is unreachable: ${(e as Error).message}`, { cause: e });
    return new StoreError('IO', `the database at ${this.where} failed: ${(e as Error).message}`, { cause: e });
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    try {
      return (await this.db().query<R>(text, values)).rows;
    } catch (e) {
      throw this.wrap(e);
    }
  }

  /** Runs `work` in one transaction; commits, or rolls back and rethrows. */
  private async transaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.db().connect();
    } catch (e) {
      throw this.wrap(e);
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
      throw this.wrap(e);
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  /** Announces to the other processes, inside the transaction: delivered on COMMIT, never for a rollback. */
  private async notify(c: pg.PoolClient, kind: 'm' | 'd', items: string[] | MessageMeta[]): Promise<void> {
    const key = kind === 'm' ? 's' : 'm';
    let chunk: unknown[] = [];
    let bytes = 0;
    const flush = async (): Promise<void> => {
      if (chunk.length === 0) return;
      await c.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, JSON.stringify({ o: this.origin, k: kind, [key]: chunk })]);
      chunk = [];
      bytes = 0;
    };
    for (const item of items) {
      const size = Buffer.byteLength(JSON.stringify(item)) + 1;
      if (bytes + size > MAX_NOTIFY_BYTES) await flush();
      chunk.push(item);
      bytes += size;
    }
    await flush();
  }

  // ---- writes ----------------------------------------------------------------------------

  async add(targets: Target[], body: MessageBody, source: MessageSource, parts?: MessageParts, key?: MessageKey): Promise<MessageMeta[]> {
    const norm = targetsToAdd(this.state === 'open', targets);
    if (key !== undefined && norm.length !== 1) throw new StoreError('BAD_TARGET', `a message key names one message, not ${norm.length}`);
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
        if ((e as { code?: unknown }).code === UNIQUE_VIOLATION && key !== undefined) throw new StoreError('DUPLICATE_KEY', `a message with key ${key.key} is stored already`, { cause: e });
        throw e;
      }
      if (oid !== undefined) await c.query('SELECT lo_unlink($1::oid)', [oid]);
      await this.notify(c, 'm', out.map((m) => m.seq));
      return out;
    });
    // Acknowledged only now, after COMMIT.
    this.announce(added);
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
        if (bytesRead === 0) throw new StoreError('IO', `the spooled message ${body.file} ended at ${offset} of ${body.size} bytes`);
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
      if (out.length > 0) await this.notify(c, 'd', out);
      return out;
    });
    if (metas.length > 0) this.events.emit('delete', metas);
    return metas;
  }

  // ---- retention -------------------------------------------------------------------------

  private async enforceCount(inboxes: Array<{ domain: string; inbox: string }>): Promise<void> {
    for (const { domain, inbox } of inboxes) {
      await this.remove(
        `DELETE FROM test_inbox_messages WHERE domain = $1 AND inbox = $2 AND seq <= (
           SELECT seq FROM test_inbox_messages WHERE domain = $1 AND inbox = $2 ORDER BY seq DESC OFFSET $3 LIMIT 1)`,
        [domain, inbox, this.retention.maxMessages],
      );
    }
  }

  /**
   * The age and count sweep, once per period across every process: the process that takes the
   * sweep's row (FOR UPDATE SKIP LOCKED: never waiting for another's sweep) while its last run is a
   * period old runs two set-based DELETEs, folds the inbox counts' deltas (migration 4) and stamps
   * the row, in one transaction. DELETE takes row locks on the rows it removes only, and the fold
   * removes only the deltas it sums, so ingest goes on meanwhile.
   */
  private sweep(): void {
    if (this.state !== 'open') return;
    const run = async (): Promise<void> => {
      const removed = await this.transaction(async (t) => {
        // Set-based DELETEs over the whole table: bounded by SWEEP_TIMEOUT_MS, not a request's bound.
        const c = { query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => t.query<R>(bounded(text, values, SWEEP_TIMEOUT_MS)) };
        await c.query(`SET LOCAL statement_timeout = ${SWEEP_TIMEOUT_MS}`);
        const { rowCount } = await c.query(
          `SELECT 1 FROM test_inbox_sweeps WHERE name = $1 AND (last_at IS NULL OR last_at <= now() - make_interval(secs => $2)) FOR UPDATE SKIP LOCKED`,
          [RETENTION_SWEEP, (this.sweepIntervalMs * SWEEP_PERIOD_SHARE) / 1000],
        );
        if (!rowCount) return undefined;
        const out: MessageMeta[] = [];
        if (this.retention.maxAgeMs > 0) {
          const { rows } = await c.query<Row>(`DELETE FROM test_inbox_messages WHERE time_ms < $1 RETURNING ${META_COLUMNS}`, [Date.now() - this.retention.maxAgeMs]);
          out.push(...rows.map(toMeta));
        }
        if (this.retention.maxMessages > 0) {
          const { rows } = await c.query<Row>(
            `DELETE FROM test_inbox_messages WHERE seq IN (
               SELECT seq FROM (SELECT seq, row_number() OVER (PARTITION BY domain, inbox ORDER BY seq DESC) AS n FROM test_inbox_messages) AS ranked
               WHERE n > $1)
             RETURNING ${META_COLUMNS}`,
            [this.retention.maxMessages],
          );
          out.push(...rows.map(toMeta));
        }
        if (out.length > 0) await this.notify(t, 'd', out);
        // Deltas appended from now on are not in this snapshot: they stay, to be folded next time.
        await c.query(
          `WITH folded AS (DELETE FROM test_inbox_counts RETURNING domain, inbox, n)
           INSERT INTO test_inbox_counts (domain, inbox, n) SELECT domain, inbox, sum(n) FROM folded GROUP BY domain, inbox HAVING sum(n) <> 0`,
        );
        await c.query('UPDATE test_inbox_sweeps SET last_at = now(), runs = runs + 1, removed = removed + $2 WHERE name = $1', [RETENTION_SWEEP, out.length]);
        return out;
      });
      if (removed === undefined) return;
      if (removed.length > 0) {
        this.events.emit('delete', removed);
        this.log('info', `store: retention sweep removed ${removed.length} message(s)`);
      }
    };
    void this.track(run().catch((e: unknown) => this.log('warn', `store: retention sweep failed: ${(e as Error).message}`)));
  }

  // ---- reads -----------------------------------------------------------------------------

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
      if (!parsed) throw new StoreError('BAD_CURSOR', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
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
      if (!parsed) throw new StoreError('BAD_CURSOR', `cursor ${JSON.stringify(options.cursor)} is not a message id`);
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
    if (!rows[0]) throw new StoreError('NOT_FOUND', `no message ${id}`);
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

  on<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.on(event, listener);
  }

  off<E extends keyof StoreEvents>(event: E, listener: StoreEvents[E]): void {
    this.events.off(event, listener);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = (): void => void this.inflight.delete(p);
    p.then(done, done);
    return p;
  }
}

/**
 * The SQL of one search term before its negation, the same rule as core/search.ts
 * matchesMetaTerm: text compared with case folded for A–Z only (`lower` under the "C" collation
 * folds exactly those, whatever the database's locale); never NULL, so a negation is exact.
 */
function searchCondition(t: MetaTerm, param: (v: unknown) => string): string {
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
      return `${t.value === 'sms' ? '' : 'NOT '}inbox ~ ${param(PHONE_INBOX_PATTERN)}`;
    case 'after':
      return `time_ms >= ${param(t.value)}`;
    case 'before':
      return `time_ms < ${param(t.value)}`;
  }
}
