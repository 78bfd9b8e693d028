// A server that cannot be reached, against real sockets: a port that was bound and closed (so
// nothing listens), then a real inbox server started on that very port. The connection says
// where and why, even before a token is set, and recovers by itself when the server answers.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import { TokenStore } from '../../src/extension/config/secrets';
import { ConfirmedServers } from '../../src/extension/config/serverTrust';
import { readSettings } from '../../src/extension/config/settings';
import { Connection, type ConnectionState } from '../../src/extension/connection/connection';
import { RECOVERY_MAX_MS } from '../../src/extension/connection/recovery';
import { describeError, ExtensionError } from '../../src/extension/errors';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { memoryLog, memoryMemento, memorySecrets } from '../support/memory';
import { closedPort } from '../support/ports';

const API_TOKEN = 'unreachable-api-token-1234';

function waitForKind(conn: Connection, kind: ConnectionState['kind'], timeoutMs: number): Promise<void> {
  if (conn.state.kind === kind) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (sub.dispose(), reject(new Error(`state stayed ${conn.state.kind}, not ${kind}`))), timeoutMs);
    const sub = conn.onDidChangeState((st) => {
      if (st.kind !== kind) return;
      clearTimeout(timer);
      sub.dispose();
      resolve();
    });
  });
}

describe('extension connection to a server that cannot be reached', function () {
  this.timeout(60_000);
  let dir: string;
  let server: InboxServer | undefined;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-unreachable-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await fs.rm(dir, { recursive: true, force: true });
  });

  function connectionTo(baseUrl: string, secrets = memorySecrets()): Connection {
    const settings = readSettings({ get: <T>(k: string) => (k === 'server' ? baseUrl : undefined) as T | undefined }).settings;
    return new Connection({ settings: () => settings, tokens: new TokenStore(secrets), trust: new ConfirmedServers(memoryMemento()), log: memoryLog().log, createApi: (o) => createClient(o), cliPath: 'unused', defaultDataDir: dir });
  }

  it('says the server cannot be reached (not that it needs a token), with Retry, and recovers by itself when a server starts on the port', async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const conn = connectionTo(baseUrl);
    try {
      await assert.rejects(conn.ensure(), (e: unknown) => ExtensionError.is(e, 'unreachable') && e.message.startsWith(`The server at ${baseUrl} cannot be reached: `));
      const st = conn.state;
      assert.ok(st.kind === 'unreachable', `state ${st.kind}`);
      assert.match(st.reason, /nothing is listening/);
      // Said at once on the next use, with the actions that help.
      const again = await conn.ensure().then(() => undefined, (e: unknown) => e);
      assert.deepEqual(describeError(again).actions, ['retry', 'showLog', 'switchServer']);

      server = await startInboxServer({ host: '127.0.0.1', httpPort: port, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'unreachable-wh-token-5678', defaultDomain: 'back.test' });
      await waitForKind(conn, 'idle', RECOVERY_MAX_MS + 5000);
      // It answers now; no token yet, so that is what it says.
      await assert.rejects(conn.ensure());
      assert.equal(conn.state.kind, 'noToken');
    } finally {
      await conn.dispose();
    }
  });

  it('waits for a token without asking the server again: each redraw of the tree would otherwise probe it in a loop', async () => {
    const requests: string[] = [];
    const srv = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"domains":[]}');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const baseUrl = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    const secrets = memorySecrets();
    const conn = connectionTo(baseUrl, secrets);
    const states: string[] = [];
    conn.onDidChangeState((st) => states.push(st.kind));
    try {
      await assert.rejects(conn.ensure(), (e: unknown) => ApiError.is(e, 'unauthorized'));
      assert.equal(conn.state.kind, 'noToken');
      assert.deepEqual(requests, ['GET / '], 'one bare GET: something answers there');
      for (let i = 0; i < 3; i++) await assert.rejects(conn.ensure(), (e: unknown) => ApiError.is(e, 'unauthorized') && /No API token is set/.test((e as Error).message));
      assert.deepEqual(requests, ['GET / '], 'asked again without a token, the server is left alone');
      assert.deepEqual(states, ['starting', 'noToken'], 'and no state is announced again (the view redraws on each)');
      // A token set (ui/tokens.ts resets the connection then) connects.
      await secrets.store(`testInbox.apiToken:${baseUrl}`, API_TOKEN);
      await conn.reset();
      await (await conn.ensure()).listDomains();
      assert.equal(conn.state.kind, 'ready');
      assert.ok(requests.slice(1).some((r) => r.endsWith(API_TOKEN)), 'the token is sent once set');
    } finally {
      await conn.dispose();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it('turns a listing that finds nobody into the unreachable state, and reconnects when the server is back', async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}`;
    server = await startInboxServer({ host: '127.0.0.1', httpPort: port, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'unreachable-wh-token-5678', defaultDomain: 'back.test' });
    const secrets = memorySecrets();
    await secrets.store(`testInbox.apiToken:${baseUrl}`, API_TOKEN);
    const conn = connectionTo(baseUrl, secrets);
    try {
      const api = await conn.ensure();
      await api.listInbox('private', '*');
      await server.close();
      server = undefined;
      await assert.rejects(api.listInbox('private', '*'));
      assert.equal(conn.state.kind, 'unreachable');
      assert.equal(conn.current(), undefined, 'no client while nothing answers');
      server = await startInboxServer({ host: '127.0.0.1', httpPort: port, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'unreachable-wh-token-5678', defaultDomain: 'back.test' });
      await waitForKind(conn, 'idle', RECOVERY_MAX_MS + 5000);
      const listing = await (await conn.ensure()).listInbox('private', '*');
      assert.ok(Array.isArray(listing.msgs));
      assert.equal(conn.state.kind, 'ready');
    } finally {
      await conn.dispose();
    }
  });
});
