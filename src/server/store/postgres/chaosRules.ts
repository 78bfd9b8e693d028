// The fault rules of a team server (docs/chaos.md "On a team server"): the keeper of
// chaos/rules.ts's rule set in PostgreSQL (migration 8), so a rule added through one process is
// applied by every process. It keeps and counts; it decides nothing (matching, draws and time to
// live are chaos/rules.ts's, the one evaluation). Each process mirrors the table in memory and
// reloads it when another announces a change on CHAOS_CHANNEL (notify.ts's LISTEN connection,
// which also reloads it when it comes back after a loss). A firing of a rule with a `times` limit
// is claimed by one UPDATE … WHERE fired < times, so N times is N across every process; any other
// firing is counted before its fault applies; evaluations that did not fire are added in batches,
// written within COUNT_FLUSH_MS and before any read of the set.
import type pg from 'pg';
import type { ChaosFault, ChaosMatch, ChaosRule, ChaosSurface, SharedChaosRules } from '../sharedChaos';
import type { StoreLog } from '../types';
import type { NotifyFeed } from './notify';
import type { Query } from './queries';

/** The NOTIFY channel of changes of the rule set (its payload says nothing: a process reloads the set). */
export const CHAOS_CHANNEL = 'test_inbox_chaos';
/** Counts of evaluations and firings wait this long at most before they are written together. */
const COUNT_FLUSH_MS = 200;

interface RuleRow {
  id: string;
  surface: string;
  match: ChaosMatch;
  fault: ChaosFault;
  probability: number | null;
  seed: string | null;
  times: number | null;
  expires_ms: string;
  fired: string;
  evaluated: string;
}

function toRule(r: RuleRow): ChaosRule {
  return {
    id: r.id,
    surface: r.surface as ChaosSurface,
    match: r.match,
    fault: r.fault,
    ...(r.times !== null ? { times: r.times } : {}),
    ...(r.probability !== null ? { probability: r.probability, seed: Number(r.seed ?? 1) } : {}),
    expiresAt: Number(r.expires_ms),
    fired: Number(r.fired),
    evaluated: Number(r.evaluated),
  };
}

const INSERT = `INSERT INTO test_inbox_chaos_rules (id, surface, match, fault, probability, seed, times, expires_ms, fired, evaluated)`;

function values(r: ChaosRule): unknown[] {
  return [r.id, r.surface, JSON.stringify(r.match), JSON.stringify(r.fault), r.probability ?? null, r.seed ?? null, r.times ?? null, r.expiresAt, r.fired, r.evaluated];
}

interface ChaosTableHost {
  query: Query;
  transaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T>;
  feed: NotifyFeed;
  log: StoreLog;
  /** Keeps the promise among the store's work in flight (its close waits for it). */
  track<T>(p: Promise<T>): Promise<T>;
}

export class PostgresChaosRules implements SharedChaosRules {
  /** Evaluations (and firings, of counts a failed write gave back) per rule not written yet. */
  private pending = new Map<string, { evaluated: number; fired: number }>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly host: ChaosTableHost) {}

  async load(now: number): Promise<ChaosRule[]> {
    await this.flush();
    const rows = await this.host.query<RuleRow>('SELECT id, surface, match, fault, probability, seed, times, expires_ms, fired, evaluated FROM test_inbox_chaos_rules WHERE expires_ms > $1 ORDER BY pos', [now]);
    return rows.map(toRule);
  }

  add(rule: ChaosRule, max: number, now: number): Promise<boolean> {
    return this.host.transaction(async (c) => {
      // One writer of the set at a time: the count of live rules holds until COMMIT.
      await c.query('LOCK TABLE test_inbox_chaos_rules IN SHARE ROW EXCLUSIVE MODE');
      await c.query('DELETE FROM test_inbox_chaos_rules WHERE expires_ms <= $1', [now]);
      const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM test_inbox_chaos_rules');
      if (Number(rows[0].n) >= max) return false;
      await c.query(`${INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, values(rule));
      await this.announce(c);
      return true;
    });
  }

  replace(rules: readonly ChaosRule[]): Promise<void> {
    return this.host.transaction(async (c) => {
      await c.query('LOCK TABLE test_inbox_chaos_rules IN SHARE ROW EXCLUSIVE MODE');
      await c.query('DELETE FROM test_inbox_chaos_rules');
      for (const r of rules) await c.query(`${INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, values(r));
      await this.announce(c);
    });
  }

  remove(id: string): Promise<boolean> {
    this.pending.delete(id);
    return this.host.transaction(async (c) => {
      const { rowCount } = await c.query('DELETE FROM test_inbox_chaos_rules WHERE id = $1', [id]);
      if (rowCount) await this.announce(c);
      return (rowCount ?? 0) > 0;
    });
  }

  clear(now: number): Promise<number> {
    this.pending.clear();
    return this.host.transaction(async (c) => {
      const { rows } = await c.query<{ live: boolean }>('DELETE FROM test_inbox_chaos_rules RETURNING expires_ms > $1 AS live', [now]);
      if (rows.length > 0) await this.announce(c);
      return rows.filter((r) => r.live).length;
    });
  }

  async claim(id: string, now: number): Promise<number | undefined> {
    try {
      const rows = await this.host.query<{ fired: string }>('UPDATE test_inbox_chaos_rules SET fired = fired + 1 WHERE id = $1 AND fired < times AND expires_ms > $2 RETURNING fired', [id, now]);
      return rows.length === 1 ? Number(rows[0].fired) : undefined;
    } catch (e) {
      // The database is away: the rule does not fire (its N times are not spent on a guess).
      this.host.log('warn', `failures on demand: rule ${id} could not claim a firing, so it did not fire: ${(e as Error).message}`);
      return undefined;
    }
  }

  count(id: string): void {
    const c = this.pending.get(id) ?? { evaluated: 0, fired: 0 };
    c.evaluated++;
    this.pending.set(id, c);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush().catch(() => undefined), COUNT_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  async fired(id: string): Promise<void> {
    try {
      await this.host.track(this.host.query('UPDATE test_inbox_chaos_rules SET fired = fired + 1, evaluated = evaluated + 1 WHERE id = $1', [id]));
    } catch (e) {
      // The fault applies all the same: only its count is missing.
      this.host.log('warn', `failures on demand: a firing of rule ${id} could not be counted: ${(e as Error).message}`);
    }
  }

  /** Writes the pending counts (one statement for every rule), after any write still under way. */
  private flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const next = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const counts = [...this.pending];
      this.pending = new Map();
      try {
        await this.host.query(
          'UPDATE test_inbox_chaos_rules AS r SET evaluated = r.evaluated + c.e, fired = r.fired + c.f FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS c(id, e, f) WHERE r.id = c.id',
          [counts.map(([id]) => id), counts.map(([, n]) => n.evaluated), counts.map(([, n]) => n.fired)],
        );
      } catch (e) {
        this.host.log('warn', `failures on demand: the counters of ${counts.length} fault rule(s) could not be written yet: ${(e as Error).message}`);
        for (const [id, n] of counts) {
          const c = this.pending.get(id) ?? { evaluated: 0, fired: 0 };
          this.pending.set(id, { evaluated: c.evaluated + n.evaluated, fired: c.fired + n.fired });
        }
      }
    });
    this.flushing = next;
    return this.host.track(next);
  }

  async watch(changed: () => void): Promise<void> {
    await this.host.feed.watch(CHAOS_CHANNEL, changed);
  }

  async close(): Promise<void> {
    this.host.feed.unwatch(CHAOS_CHANNEL);
    await this.flush();
  }

  /** Tells every process (this one too) that the set changed, on COMMIT. */
  private async announce(c: pg.PoolClient): Promise<void> {
    await c.query('SELECT pg_notify($1, $2)', [CHAOS_CHANNEL, '']);
  }
}
