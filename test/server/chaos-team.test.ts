// Failures on demand on a team server (issue 39, docs/chaos.md "On a team server"): two real
// `test-inbox serve` processes on one throwaway PostgreSQL (test/support/postgres.ts). A rule added
// through one process applies to SMTP and to a provider API on the other; a rule's `times` holds
// across both when they are hammered at once; a removal through one stops it on the other; both
// list the same rules with the counters of both; a time to live ends a rule on both; /healthz of
// each names the number of active rules. Every assertion is an outcome a client sees.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { type Cluster, startCluster } from '../support/postgres';
import { startCli, type Running } from './cliProcess';

const API = 'chaos-team-api-token-7d3a';
const WEBHOOK = 'chaos-team-webhook-token-2b9e';
const PROVIDER_KEY = 're_chaos_team_provider_key_5c1f';

interface Proc {
  http: string;
  smtpPort: number;
  pid: number;
  stop(): Promise<void>;
}

interface RuleView {
  id: string;
  fired: number;
  times?: number;
}

describe('failures on demand on a team server: two processes on one PostgreSQL', function () {
  this.timeout(180_000);
  let cluster: Cluster;
  let url: string;
  let a: Proc;
  let b: Proc;
  const runs = new Set<Running>();
  const dirs: string[] = [];

  async function serve(url: string): Promise<Proc> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-chaos-team-'));
    dirs.push(dir);
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir, '--store', url], { TEST_INBOX_API_TOKEN: API, TEST_INBOX_WEBHOOK_TOKEN: WEBHOOK, TEST_INBOX_PROVIDER_KEY: PROVIDER_KEY });
    runs.add(r);
    const { http, smtp } = await r.ready;
    return {
      http,
      smtpPort: Number(smtp.slice(smtp.lastIndexOf(':') + 1)),
      pid: r.child.pid!,
      stop: async () => {
        await r.stop();
        runs.delete(r);
      },
    };
  }

  before(async () => {
    cluster = await startCluster();
    url = await cluster.createDatabase('chaosteam');
    // One first, so the second finds the schema made (both at once is the migrations' own test).
    a = await serve(url);
    b = await serve(url);
  });
  after(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
    cluster?.destroy();
  });
  afterEach(async () => {
    const r = await api(a, 'DELETE', '/api/v2/chaos');
    assert.equal(r.status, 200);
    await activeOn([a, b], 0);
  });

  async function api(p: Proc, method: string, target: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const r = await fetch(`${p.http}${target}`, { method, headers: { authorization: `Bearer ${API}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  }

  async function addRule(p: Proc, rule: unknown): Promise<string> {
    const r = await api(p, 'POST', '/api/v2/chaos/rules', rule);
    assert.equal(r.status, 201, JSON.stringify(r.json));
    return r.json.id as string;
  }

  async function listed(p: Proc): Promise<RuleView[]> {
    const r = await api(p, 'GET', '/api/v2/chaos');
    assert.equal(r.status, 200);
    return r.json.rules as RuleView[];
  }

  async function healthzRules(p: Proc): Promise<number> {
    const r = await fetch(`${p.http}/healthz`);
    return ((await r.json()) as { chaosRules: number }).chaosRules;
  }

  /** Waits (5 s at most) until /healthz of each process names `n` active rules: another process's change arrives by NOTIFY. */
  async function activeOn(procs: Proc[], n: number): Promise<void> {
    const until = Date.now() + 5000;
    for (const p of procs) {
      for (;;) {
        const got = await healthzRules(p);
        if (got === n) break;
        if (Date.now() > until) assert.fail(`${p.http}/healthz names ${got} active rules, not ${n}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }
  }

  /** Sends one message by SMTP through `p`: its reply code (250 when accepted). */
  async function smtpSend(p: Proc, to: string): Promise<number> {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: p.smtpPort, secure: false });
    try {
      const info = await t.sendMail({ from: 'app@example.com', to, subject: 'Your code', text: 'Your code is 424242' });
      return Number(/^(\d{3})/.exec(String(info.response))![1]);
    } catch (e) {
      const code = (e as { responseCode?: number }).responseCode;
      if (code === undefined) throw e;
      return code;
    } finally {
      t.close();
    }
  }

  /** Sends one email through `p`'s Resend API: its HTTP status and Retry-After. */
  async function resendSend(p: Proc, to: string): Promise<{ status: number; retryAfter: string | null }> {
    const r = await fetch(`${p.http}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PROVIDER_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'app@acme.test', to, subject: 'Code', text: 'Your code is 111111' }),
    });
    await r.arrayBuffer();
    return { status: r.status, retryAfter: r.headers.get('retry-after') };
  }

  it('a rule added through A applies to SMTP and to the Resend API on B; both list the same rules with the counters of both; /healthz of each names them', async () => {
    assert.deepEqual([await healthzRules(a), await healthzRules(b)], [0, 0]);
    const grey = await addRule(a, { surface: 'smtp', match: { recipient: 'grey@inbox.test' }, fault: { reply: { code: 451, text: '4.7.1 Greylisted, try again later' } } });
    const limited = await addRule(a, { surface: 'resend', match: { recipient: 'ann@inbox.test' }, fault: { status: 429, retry_after: 3 } });
    await activeOn([a, b], 2);

    assert.equal(await smtpSend(b, 'grey@inbox.test'), 451);
    assert.equal(await smtpSend(b, 'joe@inbox.test'), 250, 'another recipient goes through');
    assert.deepEqual(await resendSend(b, 'ann@inbox.test'), { status: 429, retryAfter: '3' });
    assert.equal((await resendSend(b, 'joe@inbox.test')).status, 200);
    // And on A, the process it was added through.
    assert.equal(await smtpSend(a, 'grey@inbox.test'), 451);
    assert.deepEqual(await resendSend(a, 'ann@inbox.test'), { status: 429, retryAfter: '3' });

    // Each process counted its own firings; either lists the sum.
    const onA = await listed(a);
    const onB = await listed(b);
    assert.deepEqual(
      onA.map((r) => [r.id, r.fired]),
      [
        [grey, 2],
        [limited, 2],
      ],
    );
    assert.deepEqual(
      onB.map((r) => [r.id, r.fired]),
      onA.map((r) => [r.id, r.fired]),
    );
    const one = await api(b, 'GET', `/api/v2/chaos/rules/${grey}`);
    assert.equal(one.status, 200);
    assert.equal((one.json.rule as RuleView).fired, 2);
  });

  it('"times: N" fires exactly N times in total when both processes are hammered at once (Resend and SMTP)', async () => {
    const resendRule = await addRule(b, { surface: 'resend', match: { recipient: 'burst@inbox.test' }, fault: { status: 429 }, times: 5 });
    const smtpRule = await addRule(a, { surface: 'smtp', match: { recipient: 'burst@inbox.test', stage: 'rcpt' }, fault: { reply: { code: 451, text: '4.7.1 slow down' } }, times: 3 });
    await activeOn([a, b], 2);

    const http = await Promise.all(Array.from({ length: 40 }, (_, i) => resendSend(i % 2 === 0 ? a : b, 'burst@inbox.test')));
    const statuses = http.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 429).length, 5, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 200).length, 35, statuses.join(' '));

    const smtp = await Promise.all(Array.from({ length: 16 }, (_, i) => smtpSend(i % 2 === 0 ? a : b, 'burst@inbox.test')));
    assert.equal(smtp.filter((c) => c === 451).length, 3, smtp.join(' '));
    assert.equal(smtp.filter((c) => c === 250).length, 13, smtp.join(' '));

    for (const p of [a, b]) {
      const rules = await listed(p);
      assert.deepEqual(
        rules.map((r) => [r.id, r.fired, r.times]),
        [
          [resendRule, 5, 5],
          [smtpRule, 3, 3],
        ],
        p.http,
      );
    }
    // Used up on both: the next sends go through.
    assert.equal((await resendSend(a, 'burst@inbox.test')).status, 200);
    assert.equal(await smtpSend(b, 'burst@inbox.test'), 250);
  });

  it('a rule removed through B stops on A; clearing through B clears A', async () => {
    const id = await addRule(a, { surface: 'smtp', match: { recipient: 'gone@inbox.test' }, fault: { reply: { code: 550, text: '5.1.1 no such user' } } });
    await addRule(a, { surface: 'resend', match: { recipient: 'gone@inbox.test' }, fault: { status: 503 } });
    await activeOn([a, b], 2);
    assert.equal(await smtpSend(a, 'gone@inbox.test'), 550);

    const removed = await api(b, 'DELETE', `/api/v2/chaos/rules/${id}`);
    assert.equal(removed.status, 200);
    assert.equal(removed.json.active, 1);
    await activeOn([a, b], 1);
    assert.equal(await smtpSend(a, 'gone@inbox.test'), 250);
    assert.equal((await api(a, 'GET', `/api/v2/chaos/rules/${id}`)).status, 404);
    assert.equal((await resendSend(a, 'gone@inbox.test')).status, 503);

    const cleared = await api(b, 'DELETE', '/api/v2/chaos');
    assert.equal(cleared.status, 200);
    assert.equal(cleared.json.removed, 1);
    await activeOn([a, b], 0);
    assert.equal((await resendSend(a, 'gone@inbox.test')).status, 200);
    assert.deepEqual(await listed(a), []);
  });

  it('a rule\'s time to live ends it on both processes', async () => {
    await addRule(b, { surface: 'smtp', match: { recipient: 'brief@inbox.test' }, fault: { reply: { code: 451, text: '4.7.1 briefly' } }, ttl: '3s' });
    await addRule(b, { surface: 'resend', match: { recipient: 'brief@inbox.test' }, fault: { status: 429 }, ttl: '3s' });
    const added = Date.now();
    await activeOn([a, b], 2);
    assert.equal(await smtpSend(a, 'brief@inbox.test'), 451);
    assert.equal((await resendSend(b, 'brief@inbox.test')).status, 429);

    await new Promise((r) => setTimeout(r, Math.max(0, added + 3500 - Date.now())));
    for (const p of [a, b]) {
      assert.equal(await healthzRules(p), 0, p.http);
      assert.deepEqual(await listed(p), [], p.http);
      assert.equal(await smtpSend(p, 'brief@inbox.test'), 250, p.http);
      assert.equal((await resendSend(p, 'brief@inbox.test')).status, 200, p.http);
    }
  });

  it('PUT through A replaces the set both apply', async () => {
    await addRule(b, { surface: 'resend', match: { recipient: 'old@inbox.test' }, fault: { status: 500 } });
    await activeOn([a, b], 1);
    const put = await api(a, 'PUT', '/api/v2/chaos', [
      { surface: 'resend', match: { recipient: 'new@inbox.test' }, fault: { status: 429 }, times: 1 },
      { surface: 'smtp', match: { recipient: 'new@inbox.test' }, fault: { reply: { code: 452, text: '4.2.2 mailbox full' } }, times: 1 },
    ]);
    assert.equal(put.status, 200);
    assert.equal(put.json.active, 2);
    await activeOn([a, b], 2);
    assert.equal((await resendSend(b, 'old@inbox.test')).status, 200);
    assert.equal((await resendSend(b, 'new@inbox.test')).status, 429);
    assert.equal((await resendSend(a, 'new@inbox.test')).status, 200, 'times: 1, spent on B');
    assert.equal(await smtpSend(a, 'new@inbox.test'), 452);
    assert.equal(await smtpSend(b, 'new@inbox.test'), 250);
  });

  it('a process whose LISTEN connection was cut reloads the whole set when it comes back', async () => {
    // B's LISTEN connection ends (as when the database restarts); a rule added through A meanwhile reaches B when it is back.
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const { rows } = await c.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1', [`test-inbox listen ${b.pid}`]);
      assert.deepEqual(
        rows.map((r) => r.ok),
        [true],
      );
    } finally {
      await c.end();
    }
    await addRule(a, { surface: 'smtp', match: { recipient: 'late@inbox.test' }, fault: { reply: { code: 451, text: '4.7.1 later' } } });
    await activeOn([a, b], 1);
    assert.equal(await smtpSend(b, 'late@inbox.test'), 451);
  });
});
