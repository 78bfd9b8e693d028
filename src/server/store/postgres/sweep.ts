// Retention of the PostgreSQL store: the age and count sweep, run once per period across every
// process, and the count limit of the inboxes a delivery just wrote to.
import type pg from 'pg';
import type { MessageMeta, RetentionOptions } from '../types';
import { META_COLUMNS, type Row, toMeta } from './columns';
import { bounded, RETENTION_SWEEP } from './migrations';

/** The bound of the periodic retention sweep's statements (set-based DELETEs over a large table). */
const SWEEP_TIMEOUT_MS = 10 * 60_000;
/**
 * A process runs the periodic sweep when the last one (by any process) is this share of its
 * period old: the processes' timers are out of phase, and one that fires a little early still
 * sweeps once per period, never a second time within one.
 */
const SWEEP_PERIOD_SHARE = 0.9;

/** The DELETE (with $1 domain, $2 inbox, $3 the count kept) that keeps an inbox's newest messages only. */
export const COUNT_LIMIT_DELETE = `DELETE FROM test_inbox_messages WHERE domain = $1 AND inbox = $2 AND seq <= (
           SELECT seq FROM test_inbox_messages WHERE domain = $1 AND inbox = $2 ORDER BY seq DESC OFFSET $3 LIMIT 1)`;

/**
 * The age and count sweep, in the caller's transaction `t`, once per period across every
 * process: the process that takes the sweep's row (FOR UPDATE SKIP LOCKED: never waiting for
 * another's sweep) while its last run is a period old runs two set-based DELETEs, announces
 * what they removed (`notify`), folds the inbox counts' deltas (migration 4) and stamps the row.
 * DELETE takes row locks on the rows it removes only, and the fold removes only the deltas it
 * sums, so ingest goes on meanwhile. Resolves what it removed, or undefined when another
 * process swept within the period.
 */
export async function sweepRetention(
  t: pg.PoolClient,
  retention: RetentionOptions,
  intervalMs: number,
  notify: (c: pg.PoolClient, kind: 'd', items: MessageMeta[]) => Promise<void>,
): Promise<MessageMeta[] | undefined> {
  // Set-based DELETEs over the whole table: bounded by SWEEP_TIMEOUT_MS, not a request's bound.
  const c = { query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => t.query<R>(bounded(text, values, SWEEP_TIMEOUT_MS)) };
  await c.query(`SET LOCAL statement_timeout = ${SWEEP_TIMEOUT_MS}`);
  const { rowCount } = await c.query(
    `SELECT 1 FROM test_inbox_sweeps WHERE name = $1 AND (last_at IS NULL OR last_at <= now() - make_interval(secs => $2)) FOR UPDATE SKIP LOCKED`,
    [RETENTION_SWEEP, (intervalMs * SWEEP_PERIOD_SHARE) / 1000],
  );
  if (!rowCount) return undefined;
  const out: MessageMeta[] = [];
  if (retention.maxAgeMs > 0) {
    const { rows } = await c.query<Row>(`DELETE FROM test_inbox_messages WHERE time_ms < $1 RETURNING ${META_COLUMNS}`, [Date.now() - retention.maxAgeMs]);
    out.push(...rows.map(toMeta));
  }
  if (retention.maxMessages > 0) {
    const { rows } = await c.query<Row>(
      `DELETE FROM test_inbox_messages WHERE seq IN (
         SELECT seq FROM (SELECT seq, row_number() OVER (PARTITION BY domain, inbox ORDER BY seq DESC) AS n FROM test_inbox_messages) AS ranked
         WHERE n > $1)
       RETURNING ${META_COLUMNS}`,
      [retention.maxMessages],
    );
    out.push(...rows.map(toMeta));
  }
  if (out.length > 0) await notify(t, 'd', out);
  // Deltas appended from now on are not in this snapshot: they stay, to be folded next time.
  await c.query(
    `WITH folded AS (DELETE FROM test_inbox_counts RETURNING domain, inbox, n)
     INSERT INTO test_inbox_counts (domain, inbox, n) SELECT domain, inbox, sum(n) FROM folded GROUP BY domain, inbox HAVING sum(n) <> 0`,
  );
  await c.query('UPDATE test_inbox_sweeps SET last_at = now(), runs = runs + 1, removed = removed + $2 WHERE name = $1', [RETENTION_SWEEP, out.length]);
  return out;
}
