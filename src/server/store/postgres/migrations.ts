// Numbered schema migrations of the PostgreSQL store, applied on start in one transaction under
// an advisory lock, so several processes starting at once apply each exactly once. A migration
// is never edited once released; a change of schema is a new entry at the end.

import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { PHONE_INBOX_PATTERN } from '../../../core/ids';

/** The advisory lock key of schema migrations (any constant; 0x7465_7374_0002 was the retention sweep's before migration 3). */
const MIGRATION_LOCK_KEY = 0x7465_7374_0001;
/** The row of test_inbox_sweeps (migration 3) of the retention sweep by age and count. */
export const RETENTION_SWEEP = 'retention';

export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'messages',
    sql: `
      CREATE SEQUENCE test_inbox_message_seq;
      CREATE TABLE test_inbox_messages (
        -- Receipt order across every process, and the counter of the message id.
        seq bigint PRIMARY KEY,
        id text NOT NULL UNIQUE,
        domain text NOT NULL,
        inbox text NOT NULL,
        time_ms bigint NOT NULL,
        sender text NOT NULL,
        subject text NOT NULL,
        size integer NOT NULL,
        source text NOT NULL,
        code text,
        raw bytea NOT NULL
      );
      CREATE INDEX test_inbox_messages_inbox ON test_inbox_messages (domain, inbox, seq);
      CREATE INDEX test_inbox_messages_name ON test_inbox_messages (inbox, seq);
      CREATE INDEX test_inbox_messages_time ON test_inbox_messages (time_ms);
    `,
  },
  {
    // A caller's key of a message (a Twilio Message SID) and the scope that lists it (its
    // Account SID), so every process finds an SMS by SID. SMS stored before carry them in
    // their header fields (http/twilio/sidIndex.ts), read here from the first 8 KB of the raw bytes.
    version: 2,
    name: 'message keys',
    sql: `
      ALTER TABLE test_inbox_messages ADD COLUMN msg_key text, ADD COLUMN key_scope text;
      UPDATE test_inbox_messages AS m
         SET msg_key = h.sid, key_scope = h.account
        FROM (SELECT DISTINCT ON (sid) seq, sid, account
                FROM (SELECT seq,
                             (regexp_match(head, '(?:^|\\n)X-Twilio-Message-Sid: *((?:SM|MM)[0-9a-fA-F]{32})\\r?\\n', 'i'))[1] AS sid,
                             (regexp_match(head, '(?:^|\\n)X-Twilio-Account-Sid: *(AC[0-9a-fA-F]{32})\\r?\\n', 'i'))[1] AS account
                        FROM (SELECT seq, encode(substring(raw FROM 1 FOR 8192), 'escape') AS head
                                FROM test_inbox_messages WHERE inbox ~ '^[0-9]+$') AS heads) AS found
               WHERE sid IS NOT NULL AND account IS NOT NULL
               ORDER BY sid, seq) AS h
       WHERE m.seq = h.seq;
      CREATE UNIQUE INDEX test_inbox_messages_key ON test_inbox_messages (msg_key) WHERE msg_key IS NOT NULL;
      CREATE INDEX test_inbox_messages_scope ON test_inbox_messages (key_scope, seq) WHERE key_scope IS NOT NULL;
    `,
  },
  {
    // The periodic sweeps shared by every process: one row each, taken FOR UPDATE SKIP LOCKED by
    // the one process that runs the sweep of a period; when it last ran, how often, what it removed.
    version: 3,
    name: 'sweeps',
    sql: `
      CREATE TABLE test_inbox_sweeps (
        name text PRIMARY KEY,
        last_at timestamptz,
        runs bigint NOT NULL DEFAULT 0,
        removed bigint NOT NULL DEFAULT 0
      );
      INSERT INTO test_inbox_sweeps (name) VALUES ('${RETENTION_SWEEP}');
    `,
  },
  {
    // The message counts of the inboxes, as rows of deltas that statement triggers append in the
    // transaction of every INSERT and DELETE (deliveries, deletes, clears, retention): a listing's
    // total is a sum over a few rows instead of count(*) over the inbox (100k index entries at 1M
    // messages). Appending never waits for another transaction (a counter row updated in place
    // would queue every delivery to one inbox behind the one before); the periodic sweep folds
    // each inbox's deltas into one row. The table is locked while the first counts are taken, so
    // no concurrent write is missed.
    version: 4,
    name: 'inbox counts',
    sql: `
      LOCK TABLE test_inbox_messages IN SHARE ROW EXCLUSIVE MODE;
      CREATE TABLE test_inbox_counts (
        domain text NOT NULL,
        inbox text NOT NULL,
        n bigint NOT NULL
      );
      CREATE INDEX test_inbox_counts_inbox ON test_inbox_counts (domain, inbox) INCLUDE (n);
      CREATE INDEX test_inbox_counts_name ON test_inbox_counts (inbox) INCLUDE (n);
      INSERT INTO test_inbox_counts (domain, inbox, n) SELECT domain, inbox, count(*) FROM test_inbox_messages GROUP BY domain, inbox;
      CREATE FUNCTION test_inbox_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_inbox_counts (domain, inbox, n) SELECT domain, inbox, count(*) FROM added GROUP BY domain, inbox;
        RETURN NULL;
      END $$;
      CREATE FUNCTION test_inbox_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_inbox_counts (domain, inbox, n) SELECT domain, inbox, -count(*) FROM removed GROUP BY domain, inbox;
        RETURN NULL;
      END $$;
      CREATE TRIGGER test_inbox_count_added AFTER INSERT ON test_inbox_messages
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION test_inbox_count_added();
      CREATE TRIGGER test_inbox_count_removed AFTER DELETE ON test_inbox_messages
        REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION test_inbox_count_removed();
    `,
  },
  {
    // The caller's record of a keyed message (MessageKey.data), stored with its row. A key comes
    // only from the caller that added the message: the keys migration 2 read from the header
    // fields of mail that arrived by SMTP (which any sender writes) are dropped.
    version: 5,
    name: 'message key data',
    sql: `
      ALTER TABLE test_inbox_messages ADD COLUMN key_data text;
      UPDATE test_inbox_messages SET msg_key = NULL, key_scope = NULL WHERE msg_key IS NOT NULL AND source = 'smtp';
    `,
  },
  {
    // The web UI's signed-out sessions and used sign-in tickets, shared by every process
    // (spentIds.ts); each row until its id's expiry.
    version: 6,
    name: 'web UI spent ids',
    sql: `
      CREATE TABLE test_inbox_ui_spent (
        id text PRIMARY KEY,
        expires_ms bigint NOT NULL
      );
      CREATE INDEX test_inbox_ui_spent_expires ON test_inbox_ui_spent (expires_ms);
    `,
  },
  {
    // Whether a message is in a phone inbox (an SMS), kept with its row: `is:sms` and `is:email`
    // (queries.ts) test it instead of matching every row's inbox against the pattern, which made
    // a counted search over 100k messages spend most of its time in the regex. The pattern is
    // core/ids.ts's, the one rule; a change of it needs a new migration that redefines the column.
    // Adding a stored generated column rewrites the table once.
    version: 7,
    name: 'phone inbox column',
    sql: `
      ALTER TABLE test_inbox_messages ADD COLUMN phone boolean NOT NULL GENERATED ALWAYS AS (inbox ~ '${PHONE_INBOX_PATTERN.replace(/'/g, "''")}') STORED;
    `,
  },
  {
    // The fault rules of the team server (docs/chaos.md, chaosRules.ts), shared by every process:
    // each rule as chaos/rules.ts checked it, in the order added (the first that fires wins), its
    // end (ms since the epoch, the servers' clock), its `times` limit and the counters of every
    // process. A firing of a `times` rule is claimed by one UPDATE … WHERE fired < times.
    version: 8,
    name: 'fault rules',
    sql: `
      CREATE TABLE test_inbox_chaos_rules (
        pos bigint GENERATED ALWAYS AS IDENTITY,
        id text PRIMARY KEY,
        surface text NOT NULL,
        match jsonb NOT NULL,
        fault jsonb NOT NULL,
        probability double precision,
        seed bigint,
        times integer,
        expires_ms bigint NOT NULL,
        fired bigint NOT NULL DEFAULT 0,
        evaluated bigint NOT NULL DEFAULT 0
      );
    `,
  },
];

/** A statement with its own bound (node-postgres reads `query_timeout` per query; its types do not list it). */
export function bounded(text: string, values: unknown[] | undefined, timeoutMs: number): QueryConfig {
  return { text, values, ...(timeoutMs > 0 ? { query_timeout: timeoutMs } : {}) } as QueryConfig;
}

/** Applies the migrations the database lacks; resolves the schema version it ends at. Each statement may take up to `timeoutMs` (0: no bound). */
export async function migrate(client: PoolClient, timeoutMs = 0): Promise<number> {
  const run = <R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>> => client.query<R>(bounded(text, values, timeoutMs));
  await run('BEGIN');
  try {
    await run('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await run('CREATE TABLE IF NOT EXISTS test_inbox_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await run<{ v: number | null }>('SELECT max(version) AS v FROM test_inbox_schema');
    const current = rows[0]?.v ?? 0;
    const latest = MIGRATIONS[MIGRATIONS.length - 1].version;
    if (current > latest) throw new Error(`the database has schema version ${current}, newer than this server knows (${latest}); upgrade test-inbox`);
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      await run(m.sql);
      await run('INSERT INTO test_inbox_schema (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    await run('COMMIT');
    return latest;
  } catch (e) {
    await run('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
