// `npm run bench -- --only search`: GET /api/v2/search (issue 30) over 100k stored messages, on
// the Maildir store (the list rows' cached fixture, bench/lib/store-fixture.ts) and on
// PostgreSQL (a throwaway cluster, test/support/postgres.ts, filled by one INSERT … SELECT
// generate_series with the same shapes: half in the inbox `big`, the rest in 50 inboxes, each
// subject "Your code is <code> (#<i>)" and that code). Field queries are answered from the
// index (target: p95 ≤ 50 ms); text queries read bodies and are printed, cold (the first) and
// warm (the bodies read kept, docs/api.md "Search").
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import { startCluster } from '../test/support/postgres';
import { startOurs, type Ours } from './lib/ours';
import { figure, type Figure } from './lib/report';
import { percentile } from './lib/stats';
import { prepareStore, BIG_INBOX, DEFAULT_STORE_SPEC } from './lib/store-fixture';

export const SEARCH_FIELD_TARGET_MS = 50;
const STORED = DEFAULT_STORE_SPEC.messages;
const OTHER_INBOXES = DEFAULT_STORE_SPEC.otherInboxes;

/** Field queries: each answered from the index; `expect` the total each must answer. */
const FIELD_QUERIES: ReadonlyArray<{ q: string; what: string; expect: number }> = [
  { q: 'inbox:user7', what: 'one inbox of 1,000', expect: STORED / 2 / OTHER_INBOXES },
  { q: 'subject:"(#4242)"', what: 'a subject substring, 1 match', expect: 1 },
  { q: 'code:104242', what: 'a code, 1 match', expect: 1 },
  { q: `from:bench -inbox:${BIG_INBOX} after:2000-01-01`, what: 'half of them, counted', expect: STORED / 2 },
  { q: 'has:code is:email', what: 'all of them, counted', expect: STORED },
];

/** Text queries: their bodies are read; printed. */
const TEXT_QUERIES: ReadonlyArray<{ q: string; what: string }> = [
  { q: 'inbox:user7 lorem', what: "a word of the text in one inbox's 1,000" },
  { q: 'absentword', what: 'a word in no message: reads the newest 5,000 bodies, then answers partial' },
];

export interface SearchBenchOptions {
  requests: number;
  warmup: number;
  /** Extra serve arguments (retention off, as the other benches). */
  args: string[];
  log: (msg: string) => void;
}

interface Timed {
  ms: number;
  total: number;
  partial: boolean;
}

async function searchOnce(server: Ours, q: string): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(`${server.ready.http}/api/v2/search?q=${encodeURIComponent(q)}`, { headers: { authorization: server.apiToken } });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`search ${q}: HTTP ${res.status}: ${text.slice(0, 200)}`);
  const body = JSON.parse(text) as { total: number; partial?: boolean };
  return { ms, total: body.total, partial: body.partial === true };
}

async function rows(server: Ours, store: string, o: SearchBenchOptions): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
  const figures: Figure[] = [];
  const details: Record<string, unknown> = {};
  for (const { q, what, expect } of FIELD_QUERIES) {
    const name = `search ${store}, ${STORED / 1000}k stored: ${q} (${what}), p95`;
    const target = { op: '<=' as const, value: SEARCH_FIELD_TARGET_MS, label: `≤ ${SEARCH_FIELD_TARGET_MS} ms` };
    try {
      const times: number[] = [];
      for (let i = 0; i < o.warmup + o.requests; i++) {
        const r = await searchOnce(server, q);
        if (r.total !== expect) throw new Error(`${q} answered total ${r.total}, not ${expect}`);
        if (i >= o.warmup) times.push(r.ms);
      }
      times.sort((a, b) => a - b);
      details[`${store} ${q}`] = { p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99) };
      figures.push(figure({ name, unit: 'ms', value: percentile(times, 95), target, note: `p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms` }));
    } catch (e) {
      figures.push(figure({ name, unit: 'ms', target, note: (e as Error).message }));
    }
  }
  for (const { q, what } of TEXT_QUERIES) {
    const name = `search ${store}, ${STORED / 1000}k stored: ${q} (${what}), cold`;
    try {
      const cold = await searchOnce(server, q);
      const warm: number[] = [];
      for (let i = 0; i < 5; i++) warm.push((await searchOnce(server, q)).ms);
      warm.sort((a, b) => a - b);
      details[`${store} ${q}`] = { cold, warm };
      figures.push(figure({ name, unit: 'ms', value: cold.ms, note: `total ${cold.total}${cold.partial ? ' (partial)' : ''}; warm (bodies kept) p50 ${percentile(warm, 50).toFixed(0)} ms` }));
    } catch (e) {
      figures.push(figure({ name, unit: 'ms', note: (e as Error).message }));
    }
  }
  return { figures, details };
}

export async function measureSearch(o: SearchBenchOptions): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
  const figures: Figure[] = [];
  const details: Record<string, unknown> = {};
  const tmp = (p: string): string => mkdtempSync(path.join(os.tmpdir(), `test-inbox-bench-search-${p}-`));

  const store = await prepareStore(o.log, o.args, DEFAULT_STORE_SPEC);
  o.log(`search: Maildir store with ${STORED.toLocaleString('en-US')} messages`);
  const maildir = await startOurs({ dataDir: store.dir, args: o.args });
  try {
    const r = await rows(maildir, 'Maildir', o);
    figures.push(...r.figures);
    details.maildir = r.details;
  } finally {
    await maildir.stop();
  }

  o.log('search: starting a throwaway PostgreSQL cluster');
  const cluster = await startCluster();
  try {
    const url = await cluster.createDatabase('benchsearch');
    // The schema comes from a server's own migrations: start one, stop it, fill, start again.
    const first = await startOurs({ dataDir: tmp('pg'), args: [...o.args, '--store', url] });
    await first.stop();
    o.log(`search: ${STORED.toLocaleString('en-US')} messages into PostgreSQL with one INSERT … SELECT generate_series`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.';
      await client.query(
        `INSERT INTO test_inbox_messages (seq, id, domain, inbox, time_ms, sender, subject, size, source, code, raw)
         SELECT g, ib || '-' || (extract(epoch FROM now())::bigint) || '-' || g, 'inbox.test', ib,
                (extract(epoch FROM now()) * 1000)::bigint - ($1 - g), 'Bench Sender <sender@bench.test>', 'Your code is ' || c || ' (#' || (g - 1) || ')', 4096, 'smtp', c,
                convert_to('From: Bench Sender <sender@bench.test>' || chr(13) || chr(10) || 'Subject: Your code is ' || c || ' (#' || (g - 1) || ')' || chr(13) || chr(10)
                           || 'Content-Type: text/plain; charset=utf-8' || chr(13) || chr(10) || chr(13) || chr(10)
                           || 'Your verification code is 482913.' || chr(13) || chr(10) || repeat($3 || chr(13) || chr(10), 48), 'UTF8')
         FROM (SELECT g, (100000 + (g - 1) % 900000)::text AS c,
                      CASE WHEN (g - 1) % 2 = 0 THEN '${BIG_INBOX}' ELSE 'user' || (((g - 1) / 2) % $2) END AS ib
                 FROM generate_series(1, $1) AS g) AS s`,
        [STORED, OTHER_INBOXES, line],
      );
      await client.query(`SELECT setval('test_inbox_message_seq', $1)`, [STORED]);
      await client.query('ANALYZE test_inbox_messages');
    } finally {
      await client.end();
    }
    const server = await startOurs({ dataDir: tmp('pg'), args: [...o.args, '--store', url] });
    try {
      const r = await rows(server, 'PostgreSQL', o);
      figures.push(...r.figures);
      details.postgres = r.details;
    } finally {
      await server.stop();
    }
  } finally {
    cluster.destroy();
  }
  return { figures, details };
}
