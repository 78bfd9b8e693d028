// The team server when its database stops answering (not refusing: a frozen host, a partition),
// through a real PostgreSQL behind a TCP proxy that stops forwarding (test/support/tcpProxy.ts).
// Every statement is bounded: each request answers 503 with Retry-After (SMTP 451) instead of
// hanging, whether it waited on a statement or for a pooled connection, and the server takes
// mail again once the database answers.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { PostgresStore } from '../../src/server/store/postgres/store';
import type { MessageMeta } from '../../src/server/store/types';
import { sharedCluster } from '../support/postgres';
import { startTcpProxy, type TcpProxy } from '../support/tcpProxy';

const API = 'bounds-api-token-41c7';
/** A request that takes this long is taken as hung (the bounds are far below it). */
const HUNG_MS = 90_000;

describe('team server: a database that stops answering', function () {
  this.timeout(240_000);
  let proxy: TcpProxy;
  let server: InboxServer;
  let dir: string;

  beforeEach(async () => {
    const cluster = await sharedCluster();
    const url = new URL(await cluster.createDatabase('bounds'));
    proxy = await startTcpProxy(cluster.port);
    url.port = String(proxy.port);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-bounds-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, databaseUrl: url.toString(), apiToken: API, webhookToken: 'bounds-webhook-token-9e1d', defaultDomain: 'inbox.test' });
  });
  afterEach(async () => {
    proxy.resume();
    await server.close();
    await proxy.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const inject = (subject: string): Promise<Response> =>
    fetch(`${server.httpUrl}/api/v2/domains/private/inboxes/joe`, {
      method: 'POST',
      headers: { Authorization: API, 'Content-Type': 'application/json' },
      body: JSON.stringify({ from: 'a@acme.test', subject, text: 'x' }),
      signal: AbortSignal.timeout(HUNG_MS),
    });
  const list = (): Promise<Response> => fetch(`${server.httpUrl}/api/v2/domains/private/inboxes/joe?sort=ascending`, { headers: { Authorization: API }, signal: AbortSignal.timeout(HUNG_MS) });

  it('answers 503 with Retry-After and SMTP 451 within its bounds, on a statement or waiting for a pooled connection, and recovers', async () => {
    assert.equal((await inject('before')).status, 200);
    // Every pooled connection open and idle: the requests below then wait on their statements.
    await Promise.all(Array.from({ length: 10 }, () => list().then((r) => r.json())));
    proxy.pause();
    // More requests than pooled connections (10): some wait on a statement, the rest for a connection.
    const requests = [...Array.from({ length: 12 }, (_, i) => inject(`during ${i}`)), ...Array.from({ length: 4 }, () => list())];
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true, socketTimeout: HUNG_MS });
    const smtp = transport.sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'smtp during', text: 'x' }).then(
      () => 'stored',
      (e: { responseCode?: number; code?: string }) => e.responseCode ?? e.code,
    );
    const answers = await Promise.all(requests.map((r) => r.then(async (res) => ({ status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as { status: string; message: string } }))));
    for (const a of answers) {
      assert.equal(a.status, 503, JSON.stringify(a.json));
      assert.equal(a.retryAfter, '2');
      assert.equal(a.json.status, 'error');
      assert.match(a.json.message, /database is unreachable/);
    }
    assert.equal(await smtp, 451);
    transport.close();

    proxy.resume();
    const back = await inject('after');
    assert.equal(back.status, 200, await back.text());
    const listing = (await (await list()).json()) as { msgs: Array<{ subject: string }> };
    assert.deepEqual(
      listing.msgs.map((m) => m.subject),
      ['before', 'after'],
    );
  });
});

describe('team server: arrivals through another process while this one is busy', function () {
  this.timeout(120_000);

  it('announces an arrival committed through another process while every pooled connection of this one is taken', async () => {
    const cluster = await sharedCluster();
    const url = await cluster.createDatabase('arrivals');
    const a = new PostgresStore({ url });
    const b = new PostgresStore({ url });
    const holder = new pg.Client({ connectionString: url });
    await Promise.all([a.open(), b.open(), holder.connect()]);
    const blocked: Array<Promise<unknown>> = [];
    try {
      const [held] = await a.add([{ domain: 'inbox.test', inbox: 'held' }], Buffer.from('Subject: held\r\n\r\nx\r\n'), 'smtp');
      // Another session holds the row lock of one message; deletes of it through B wait on it,
      // each holding one of B's pooled connections (POOL_SIZE, 10) until the lock goes.
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM test_inbox_messages WHERE id = $1 FOR UPDATE', [held.id]);
      for (let i = 0; i < 10; i++) blocked.push(b.delete(held.id).catch((e: unknown) => e));
      for (;;) {
        // (A fresh snapshot of the backends each time: the holder's transaction would keep its first.)
        await holder.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await holder.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()");
        if (Number(rows[0].n) >= 10) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const heard = new Promise<MessageMeta>((resolve) => b.on('message', (m) => m.inbox === 'joe' && resolve(m)));
      const [sent] = await a.add([{ domain: 'inbox.test', inbox: 'joe' }], Buffer.from('Subject: through A\r\n\r\nx\r\n'), 'smtp');
      // While B's pool is still taken (the lock is held until B has announced it).
      const got = await Promise.race([heard, new Promise<undefined>((r) => setTimeout(r, 30_000, undefined))]);
      assert.equal(got?.id, sent.id, 'B announced the arrival while its pool was busy');
      assert.equal(got?.subject, 'through A');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await Promise.all(blocked);
      await holder.end();
      await Promise.all([a.close(), b.close()]);
    }
  });
});
