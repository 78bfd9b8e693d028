// Web UI sessions on a team server: two real `test-inbox serve` processes on one throwaway
// PostgreSQL (test/support/postgres.ts). A session or a sign-in ticket of one process works on
// the other; a sign-out on one ends the session on both (its open push stream too), and survives
// a restart; a ticket spent on one is refused by the other; a token change (both processes
// restarted with a new token) ends every session and ticket on both.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Cluster, startCluster } from '../support/postgres';
import { startCli, type Running } from './cliProcess';

const OLD_TOKEN = 'webui-team-api-token-5b1e';
const NEW_TOKEN = 'webui-team-api-token-9c07';
const WEBHOOK = 'webui-team-webhook-token-3f2a';
const PAGE_TOKEN_HEADER = 'x-test-inbox-session';

interface Session {
  cookie: string;
  pageToken: string;
}

describe('web UI sessions on a team server: two processes on one PostgreSQL', function () {
  this.timeout(180_000);
  let cluster: Cluster;
  let url: string;
  const runs = new Set<Running>();
  const dirs: string[] = [];

  before(async () => {
    cluster = await startCluster();
    url = await cluster.createDatabase('webuiteam');
  });
  after(async () => {
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
    cluster?.destroy();
  });

  async function serve(token: string): Promise<{ http: string; stop(): Promise<void> }> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-webui-team-'));
    dirs.push(dir);
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir, '--store', url], { TEST_INBOX_API_TOKEN: token, TEST_INBOX_WEBHOOK_TOKEN: WEBHOOK });
    runs.add(r);
    const { http } = await r.ready;
    return {
      http,
      stop: async () => {
        await r.stop();
        runs.delete(r);
      },
    };
  }

  async function signIn(base: string, body: { token: string } | { ticket: string }): Promise<Session> {
    const r = await fetch(`${base}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201, await r.clone().text());
    return { cookie: /^([^;]+)/.exec(r.headers.get('set-cookie') ?? '')![1], pageToken: ((await r.json()) as { pageToken: string }).pageToken };
  }

  const headers = (s: Session): Record<string, string> => ({ cookie: s.cookie, [PAGE_TOKEN_HEADER]: s.pageToken });

  async function domains(base: string, s: Session): Promise<{ status: number; message?: string }> {
    const r = await fetch(`${base}/ui/api/v2/domains`, { headers: headers(s) });
    return { status: r.status, ...(r.status === 200 ? {} : { message: ((await r.json()) as { message: string }).message }) };
  }

  async function ticket(base: string, token: string): Promise<string> {
    const r = await fetch(`${base}/ui/ticket`, { method: 'POST', headers: { authorization: token } });
    assert.equal(r.status, 201);
    return ((await r.json()) as { ticket: string }).ticket;
  }

  it('sign-out on one process ends the session on both, a ticket works once across them, and a token change ends them all', async () => {
    let [a, b] = await Promise.all([serve(OLD_TOKEN), serve(OLD_TOKEN)]);

    // One session, both processes.
    const leaving = await signIn(a.http, { token: OLD_TOKEN });
    const staying = await signIn(b.http, { token: OLD_TOKEN });
    for (const base of [a.http, b.http]) {
      assert.equal((await domains(base, leaving)).status, 200);
      assert.equal((await domains(base, staying)).status, 200);
    }

    // Signed out on B: refused by A as well, and the push stream it holds open on A ends; the other session goes on.
    const stream = await fetch(`${a.http}/ui/api/v2/domains/private/stream`, { headers: headers(leaving) });
    assert.equal(stream.status, 200);
    const drained = (async () => {
      const reader = stream.body!.getReader();
      while (!(await reader.read()).done);
    })();
    const out = await fetch(`${b.http}/ui/session`, { method: 'DELETE', headers: headers(leaving) });
    assert.equal(out.status, 200);
    await drained;
    for (const base of [a.http, b.http]) {
      const r = await domains(base, leaving);
      assert.equal(r.status, 401, base);
      assert.match(r.message ?? '', /signed out/);
      assert.equal((await domains(base, staying)).status, 200);
    }

    // A ticket of A, spent on B; a second use, on either, is refused.
    const t = await ticket(a.http, OLD_TOKEN);
    const linked = await signIn(b.http, { ticket: t });
    assert.equal((await domains(a.http, linked)).status, 200);
    for (const base of [a.http, b.http]) {
      const again = await fetch(`${base}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ticket: t }) });
      assert.equal(again.status, 401, base);
      assert.match(((await again.json()) as { message: string }).message, /used already/);
    }

    // A restart with the same token forgets nothing: the sign-out holds, the session goes on.
    await a.stop();
    a = await serve(OLD_TOKEN);
    assert.equal((await domains(a.http, leaving)).status, 401);
    assert.equal((await domains(a.http, staying)).status, 200);

    // The token changes: both processes restart with the new one. Every session and ticket of the old one ends.
    const unspent = await ticket(b.http, OLD_TOKEN);
    await Promise.all([a.stop(), b.stop()]);
    [a, b] = await Promise.all([serve(NEW_TOKEN), serve(NEW_TOKEN)]);
    for (const base of [a.http, b.http]) {
      for (const s of [staying, linked]) {
        const r = await domains(base, s);
        assert.equal(r.status, 401, base);
        assert.match(r.message ?? '', /not valid/);
      }
      const old = await fetch(`${base}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ticket: unspent }) });
      assert.equal(old.status, 401);
      const oldToken = await fetch(`${base}/ui/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: OLD_TOKEN }) });
      assert.equal(oldToken.status, 403);
    }
    const fresh = await signIn(a.http, { token: NEW_TOKEN });
    assert.equal((await domains(b.http, fresh)).status, 200);
    await Promise.all([a.stop(), b.stop()]);
  });
});
