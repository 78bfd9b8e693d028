// `npm run bench -- --only team`: the team server (issue 19 point 5). SMTP and HTTP ingest with
// 1, 2 and 3 `test-inbox serve` processes on one PostgreSQL, beside one process on the Maildir
// store in the same run, and list latency with 1M messages in PostgreSQL (built by one
// set-based INSERT … SELECT generate_series). The cluster is a throwaway one
// (test/support/postgres.ts, fsync off: the figures are of the server, not of this disk).
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { startCluster } from '../test/support/postgres';
import { runInjectLoad, runListLatency } from './lib/http-load';
import { startOurs, type Ours } from './lib/ours';
import { figure, type Figure } from './lib/report';
import { DEFAULT_MESSAGE_BYTES, runSmtpLoad } from './lib/smtp-load';

/** SMTP connections and HTTP requests in flight in all, shared among the processes. */
const SMTP_CONNECTIONS = 8;
const INJECT_IN_FLIGHT = 32;
/** Messages in the database of the list figure, as the issue asks. */
export const TEAM_LIST_MESSAGES = 1_000_000;
/** One message in this many goes to the big inbox that is listed (100k of the 1M); the rest spread over 1,000 inboxes. */
const BIG_EVERY = 10;

export interface TeamBenchOptions {
  warmupMs: number;
  windowMs: number;
  listRequests: number;
  listWarmup: number;
  /** Extra serve arguments (retention off, as the other benches). */
  args: string[];
  log: (msg: string) => void;
}

interface Load {
  smtp: number;
  inject: number;
  smtpP50: number;
  problems: string[];
}

/** Sends over SMTP, then HTTP, to every server at once, the load split evenly; sums the rates. */
async function loadAll(servers: Ours[], o: TeamBenchOptions): Promise<Load> {
  const n = servers.length;
  const problems: string[] = [];
  const smtp = await Promise.all(
    servers.map((s) => runSmtpLoad({ host: '127.0.0.1', port: s.ready.smtp.port, connections: Math.ceil(SMTP_CONNECTIONS / n), warmupMs: o.warmupMs, durationMs: o.windowMs, messageBytes: DEFAULT_MESSAGE_BYTES })),
  );
  const inject = await Promise.all(
    servers.map((s) => runInjectLoad({ origin: s.ready.http, token: s.apiToken, path: '/api/v2/domains/private/inboxes/load', concurrency: Math.ceil(INJECT_IN_FLIGHT / n), warmupMs: o.warmupMs, durationMs: o.windowMs })),
  );
  for (const r of [...smtp, ...inject]) if (r.firstError) problems.push(r.firstError);
  return {
    smtp: smtp.reduce((a, r) => a + r.msgsPerSec, 0),
    inject: inject.reduce((a, r) => a + r.reqPerSec, 0),
    smtpP50: Math.max(...smtp.map((r) => r.latencyP50Ms)),
    problems,
  };
}

export async function measureTeam(o: TeamBenchOptions): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
  const figures: Figure[] = [];
  const details: Record<string, unknown> = {};
  const tmp = (p: string): string => mkdtempSync(path.join(os.tmpdir(), `test-inbox-bench-team-${p}-`));
  o.log('team: starting a throwaway PostgreSQL cluster');
  const cluster = await startCluster();
  try {
    o.log('team: Maildir store, one process');
    const maildir = await startOurs({ dataDir: tmp('maildir'), args: o.args });
    let reference: Load;
    try {
      reference = await loadAll([maildir], o);
    } finally {
      await maildir.stop();
    }
    details.maildir = reference;
    for (const n of [1, 2, 3]) {
      o.log(`team: PostgreSQL store, ${n} process(es)`);
      const url = await cluster.createDatabase(`bench${n}`);
      const servers = await Promise.all(Array.from({ length: n }, () => startOurs({ dataDir: tmp(`pg${n}`), args: [...o.args, '--store', url] })));
      let r: Load;
      try {
        r = await loadAll(servers, o);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
      details[`postgres${n}`] = r;
      const note = r.problems.length ? r.problems.slice(0, 2).join('; ') : undefined;
      figures.push(
        figure({ name: `team: SMTP ingest, ${n} process(es) on PostgreSQL, ${SMTP_CONNECTIONS} conns in all`, unit: 'msg/s', value: r.smtp, reference: { name: 'Maildir, 1 process', value: reference.smtp }, ...(note ? { note } : {}) }),
        figure({ name: `team: HTTP inject, ${n} process(es) on PostgreSQL, ${INJECT_IN_FLIGHT} in flight in all`, unit: 'req/s', value: r.inject, reference: { name: 'Maildir, 1 process', value: reference.inject } }),
      );
    }

    o.log(`team: building ${TEAM_LIST_MESSAGES.toLocaleString('en-US')} messages with one INSERT … SELECT generate_series`);
    const url = await cluster.createDatabase('bench1m');
    // The schema comes from a server's own migrations: start one, stop it, fill, start again.
    const first = await startOurs({ dataDir: tmp('pg1m'), args: [...o.args, '--store', url] });
    await first.stop();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const builtAt = Date.now();
    try {
      await client.query(
        `INSERT INTO test_inbox_messages (seq, id, domain, inbox, time_ms, sender, subject, size, source, code, raw)
         SELECT g, ib || '-' || (extract(epoch FROM now())::bigint) || '-' || g, 'inbox.test', ib,
                (extract(epoch FROM now()) * 1000)::bigint - ($1 - g), 'bench@acme.test', 'Message ' || g, 120, 'smtp', NULL,
                convert_to('From: bench@acme.test' || chr(13) || chr(10) || 'Subject: Message ' || g || chr(13) || chr(10) || chr(13) || chr(10) || 'body ' || g, 'UTF8')
         FROM (SELECT g, CASE WHEN g % $2 = 0 THEN 'big' ELSE 'i' || (g % 1000) END AS ib FROM generate_series(1, $1) AS g) AS s`,
        [TEAM_LIST_MESSAGES, BIG_EVERY],
      );
      await client.query(`SELECT setval('test_inbox_message_seq', $1)`, [TEAM_LIST_MESSAGES]);
      await client.query('ANALYZE test_inbox_messages');
    } finally {
      await client.end();
    }
    const buildMs = Date.now() - builtAt;
    const server = await startOurs({ dataDir: tmp('pg1m'), args: [...o.args, '--store', url] });
    try {
      const big = await runListLatency({ origin: server.ready.http, token: server.apiToken, path: '/api/v2/domains/private/inboxes/big?limit=50', warmup: o.listWarmup, requests: o.listRequests, expectMsgs: 50 });
      const small = await runListLatency({ origin: server.ready.http, token: server.apiToken, path: '/api/v2/domains/private/inboxes/i1?limit=50', warmup: o.listWarmup, requests: o.listRequests, expectMsgs: 50 });
      details.list1m = { big, small, buildMs };
      figures.push(
        figure({ name: `team: list 50 newest of a ${TEAM_LIST_MESSAGES / BIG_EVERY / 1000}k inbox, ${TEAM_LIST_MESSAGES / 1e6}M in PostgreSQL, p50`, unit: 'ms', value: big.p50Ms, note: `p99 ${big.p99Ms.toFixed(1)} ms; built in ${(buildMs / 1000).toFixed(0)} s` }),
        figure({ name: `team: list 50 newest of a ${TEAM_LIST_MESSAGES / 1000 / 1000}k-msg inbox, ${TEAM_LIST_MESSAGES / 1e6}M in PostgreSQL, p50`, unit: 'ms', value: small.p50Ms, note: `p99 ${small.p99Ms.toFixed(1)} ms` }),
      );
    } finally {
      await server.stop();
    }
  } finally {
    cluster.destroy();
  }
  return { figures, details };
}
