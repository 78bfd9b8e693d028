// Arrivals and removals between the processes that share one PostgreSQL store, by
// LISTEN/NOTIFY: a write announces its messages inside its transaction (delivered on COMMIT,
// never for a rollback); each process LISTENs on one dedicated connection, reads the rows of the
// arrivals others announced, and emits `message` and `delete` to its own subscribers (the push
// stream, `wait=` long-polls). A LISTEN connection that drops is replaced, and the arrivals of
// the gap are replayed, so none is lost and none is announced twice. The same connection LISTENs
// on the channels others watch (the fault rules', chaosRules.ts), told when it comes back.
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import pg from 'pg';
import type { MessageMeta, StoreLog } from '../types';
import { META_COLUMNS, type Row, toMeta } from './columns';

/** The NOTIFY channel of arrivals and removals. */
const EVENTS_CHANNEL = 'test_inbox_events';
/** NOTIFY payloads must stay under 8000 bytes; removals are sent in chunks below this. */
const MAX_NOTIFY_BYTES = 7000;
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

/** What the feed needs of its store. */
interface FeedHost {
  readonly url: string;
  readonly queryTimeoutMs: number;
  /** Give up connecting after this long. */
  readonly connectTimeoutMs: number;
  readonly log: StoreLog;
  /** The store's state: a feed of a closed store stops, one of a store still opening retries. */
  state(): 'new' | 'open' | 'closed';
  /** Keeps the promise among the store's work in flight (its close waits for it). */
  track<T>(p: Promise<T>): Promise<T>;
  /** A bounded query on the store's pool (reads arrivals while no LISTEN connection is up). */
  query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]>;
}

export class NotifyFeed {
  /** Names this process in NOTIFY payloads, so it does not announce its own writes twice. */
  private readonly origin = randomBytes(8).toString('hex');
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
  /** Other channels this connection LISTENs on (the fault rules': chaosRules.ts), each with what runs on its notifications, and when LISTEN comes back after a loss. */
  private readonly watchers = new Map<string, () => void>();

  constructor(
    private readonly host: FeedHost,
    private readonly events: EventEmitter,
  ) {}

  /** Messages up to `lastSeq` (the newest at open) are never replayed as arrivals; call once LISTEN is on. */
  opened(lastSeq: string): void {
    this.openSeq = lastSeq;
    this.lastSeq = BigInt(lastSeq);
  }

  /**
   * LISTENs on `channel` too: `changed` runs on each of its notifications (its payload is not
   * read), and whenever the LISTEN connection comes back after a loss (what it missed meanwhile
   * is unknown). Resolves once LISTEN is on, or, with the connection away, once it retries.
   */
  async watch(channel: string, changed: () => void): Promise<void> {
    this.watchers.set(channel, changed);
    const client = this.listener;
    // Away: the retry's listen() LISTENs on it and runs `changed`.
    if (client) await client.query(`LISTEN ${channel}`).catch(() => undefined);
  }

  unwatch(channel: string): void {
    this.watchers.delete(channel);
  }

  /** Stops retrying (the store is closing); the LISTEN connection stays until end(). */
  stop(): void {
    clearTimeout(this.listenRetry);
    clearTimeout(this.readRetry);
  }

  /** Closes the LISTEN connection. */
  async end(): Promise<void> {
    await this.listener?.end().catch(() => undefined);
  }

  /** One dedicated connection LISTENs; when it drops it is replaced until the database returns. */
  async listen(): Promise<void> {
    const { host } = this;
    // The pid names this process's LISTEN connection in pg_stat_activity (an operator's view, a test's target).
    // It also reads the rows of other processes' arrivals (readArrivals), each read bounded.
    const client = new pg.Client({ connectionString: host.url, connectionTimeoutMillis: host.connectTimeoutMs, query_timeout: host.queryTimeoutMs, application_name: `test-inbox listen ${process.pid}` });
    let lost = false;
    const onLost = (e?: Error): void => {
      if (lost) return;
      lost = true;
      if (this.listener === client) this.listener = undefined;
      if (host.state() === 'closed') return;
      this.lostAt ??= Date.now();
      host.log('warn', `store: LISTEN connection lost${e ? `: ${e.message}` : ''}; retrying every ${LISTEN_RETRY_MS} ms`);
      this.retryListen();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL && n.payload) void host.track(this.onNotification(n.payload));
      else this.watchers.get(n.channel)?.();
    });
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    for (const channel of this.watchers.keys()) await client.query(`LISTEN ${channel}`);
    this.listener = client;
    if (this.lostAt !== undefined) {
      for (const changed of this.watchers.values()) changed();
      await this.replay(client, this.lostAt);
    }
    // Arrivals whose read failed with the connection this one replaces.
    if (this.unread.size > 0) void host.track(this.readArrivals());
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
    this.host.log('info', `store: LISTEN back after ${Date.now() - lostAt} ms; replayed ${fresh.length} arrival(s) of the gap`);
    this.announce(fresh);
  }

  /** Emits `message` for each row not announced yet, and remembers it. */
  announce(rows: Array<{ seq: string } & MessageMeta>): void;
  announce(rows: Row[]): void;
  announce(rows: Array<Row | ({ seq: string } & MessageMeta)>): void {
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
      if (this.host.state() !== 'open') return;
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
        while (this.unread.size > 0 && this.host.state() === 'open') {
          const seqs = [...this.unread].slice(0, ARRIVALS_READ_AT_ONCE);
          const text = `SELECT ${META_COLUMNS} FROM test_inbox_messages WHERE seq = ANY($1::bigint[]) ORDER BY seq`;
          const client = this.listener;
          let rows: Row[];
          try {
            rows = client ? (await client.query<Row>(text, [seqs])).rows : await this.host.query<Row>(text, [seqs]);
          } catch (e) {
            this.host.log('warn', `store: could not read ${this.unread.size} arrival(s) announced by another process yet (tried again in ${LISTEN_RETRY_MS} ms): ${(e as Error).message}`);
            // A LISTEN connection that failed a read (its bound passed) is replaced.
            if (client && this.listener === client) void client.end().catch(() => undefined);
            clearTimeout(this.readRetry);
            this.readRetry = setTimeout(() => void this.host.track(this.readArrivals()), LISTEN_RETRY_MS);
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

  /** Announces to the other processes, inside the transaction: delivered on COMMIT, never for a rollback. */
  async notify(c: pg.PoolClient, kind: 'm' | 'd', items: string[] | MessageMeta[]): Promise<void> {
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
}
