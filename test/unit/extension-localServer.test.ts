// The local server manager against the real CLI (test/support/cli.ts: the bundle or the source), real
// ports and a temp data folder.
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient } from '../../src/api/client';
import { TokenStore } from '../../src/extension/config/secrets';
import { ConfirmedServers } from '../../src/extension/config/serverTrust';
import { readSettings, type Settings } from '../../src/extension/config/settings';
import { Connection } from '../../src/extension/connection/connection';
import { LocalServerError } from '../../src/extension/errors';
import { LocalServer, probeHealth, type LocalServerOptions } from '../../src/extension/connection/localServer';
import { DEFAULT_DOMAIN, LOCK_FILE, SERVER_FILE, TOKENS_FILE } from '../../src/shared/contract';
import { startInboxServer } from '../../src/server/server';
import { memoryLog, memoryMemento, memorySecrets } from '../support/memory';
import { closedPort as freePort } from '../support/ports';
import { cliEntry } from '../support/cli';

const { cliPath: CLI, execArgv: EXEC_ARGV } = cliEntry();

describe('extension local server', function () {
  this.timeout(60_000);
  let dir: string;
  const servers: LocalServer[] = [];

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-ext-'));
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  const options = (over: Partial<LocalServerOptions> = {}): LocalServerOptions => ({
    cliPath: CLI,
    execArgv: EXEC_ARGV,
    httpPort: 0,
    smtpPort: 0,
    dataDir: dir,
    domain: DEFAULT_DOMAIN,
    apiToken: 'api-token-local-1234',
    webhookToken: 'wh-token-local-5678',
    log: memoryLog().log,
    ...over,
  });

  it('starts the CLI as a child process and stops it', async () => {
    const { log, lines } = memoryLog();
    const server = new LocalServer(options({ log }));
    servers.push(server);
    const running = await server.start();
    assert.equal(running.mode, 'started');
    assert.match(running.http, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(running.smtp.port > 0);
    assert.equal(await probeHealth(running.http), 'test-inbox');
    const pid = server.pid;
    assert.ok(pid);
    await server.stop();
    assert.equal(await probeHealth(running.http), 'none');
    assert.throws(() => process.kill(pid, 0));
    assert.ok(!lines.join('\n').includes('api-token-local-1234'), 'the token never reaches the log');
  });

  it('stops its server cleanly (the IPC channel on Windows, where SIGTERM is TerminateProcess; SIGTERM elsewhere): exit 0, store closed, lock released', async () => {
    const { log, lines } = memoryLog();
    const server = new LocalServer(options({ log }));
    servers.push(server);
    await server.start();
    await server.stop();
    const text = lines.join('\n');
    // The channel on Windows (SIGTERM is TerminateProcess there), SIGTERM on POSIX.
    assert.match(text, process.platform === 'win32' ? /parent process gone: stopping/ : /SIGTERM: stopping/, 'the server stopped itself');
    assert.match(text, /Local server exited \(code 0\)/, 'it exited by itself, with 0, no signal');
    assert.equal(existsSync(path.join(dir, LOCK_FILE)), false, 'the store closed and released its lock');
    assert.equal(existsSync(path.join(dir, SERVER_FILE)), false, 'and removed its server file');
  });

  it('attaches to a Test Inbox server already on the configured port', async () => {
    const first = new LocalServer(options());
    servers.push(first);
    const running = await first.start();
    const port = Number(new URL(running.http).port);
    const second = new LocalServer(options({ httpPort: port }));
    servers.push(second);
    const attached = await second.start();
    assert.equal(attached.mode, 'attached');
    assert.equal(attached.http, running.http);
    assert.equal(second.pid, undefined, 'no second process');
  });

  it('reports a port held by another program as portTaken, naming the port', async () => {
    const other = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not us</h1>'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as AddressInfo).port;
    try {
      const server = new LocalServer(options({ httpPort: port }));
      servers.push(server);
      await assert.rejects(server.start(), (e: unknown) => LocalServerError.is(e, 'port_taken') && e.port === port && e.message.includes(String(port)));
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
    }
  });

  it('reports a taken SMTP port from the CLI exit code', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const smtpPort = (blocker.address() as AddressInfo).port;
    try {
      const server = new LocalServer(options({ smtpPort, httpPort: await freePort() }));
      servers.push(server);
      await assert.rejects(server.start(), (e: unknown) => LocalServerError.is(e, 'port_taken') && e.port === smtpPort && /SMTP/.test(e.message));
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it('two windows starting at once on one port and data folder end with one server and one attached', async () => {
    const port = await freePort();
    const a = new LocalServer(options({ httpPort: port }));
    const b = new LocalServer(options({ httpPort: port }));
    servers.push(a, b);
    const both = await Promise.all([a.start(), b.start()]);
    assert.deepEqual(both.map((r) => r.mode).sort(), ['attached', 'started']);
    assert.equal(both[0].http, both[1].http);
    assert.equal([a.pid, b.pid].filter((p) => p !== undefined).length, 1, 'one server process');
  });

  it('reports dataDirInUse, naming the folder, when the server holding it does not answer on the configured port', async () => {
    const first = new LocalServer(options());
    servers.push(first);
    await first.start();
    const second = new LocalServer(options({ httpPort: await freePort(), dataDirWaitMs: 300 }));
    servers.push(second);
    await assert.rejects(
      second.start(),
      (e: unknown) => LocalServerError.is(e, 'data_dir_in_use') && e.message.includes(dir) && e.message.includes(`process ${first.pid}`),
    );
    assert.equal(second.pid, undefined);
  });

  it('says the program is missing instead of failing obscurely', async () => {
    const server = new LocalServer(options({ cliPath: path.join(dir, 'nope.js') }));
    await assert.rejects(server.start(), (e: unknown) => LocalServerError.is(e, 'cli_missing'));
  });

  /** A real HTTP server on a free port that answers /healthz like Test Inbox and records every request. */
  async function impostor(proofFor?: (challenge: string) => string): Promise<{ port: number; requests: http.IncomingHttpHeaders[]; urls: string[]; close(): Promise<void> }> {
    const requests: http.IncomingHttpHeaders[] = [];
    const urls: string[] = [];
    const srv = http.createServer((req, res) => {
      requests.push(req.headers);
      urls.push(req.url ?? '');
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/healthz') {
        const c = u.searchParams.get('challenge');
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ service: 'test-inbox', version: '9', status: 'ok', ...(c && proofFor ? { proof: proofFor(c) } : {}) }));
      } else res.writeHead(200, { 'content-type': 'application/json' }).end('{"domains":[]}');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    return { port: (srv.address() as AddressInfo).port, requests, urls, close: () => new Promise<void>((r) => srv.close(() => r())) };
  }

  it('does not attach to an impostor on the port when the data folder has no proof, and sends it no token', async () => {
    const fake = await impostor();
    try {
      const server = new LocalServer(options({ httpPort: fake.port }));
      servers.push(server);
      await assert.rejects(server.start(), (e: unknown) => LocalServerError.is(e, 'not_proven') && /no token was sent/.test(e.message) && e.message.includes(SERVER_FILE));
      assert.ok(fake.requests.every((h) => h.authorization === undefined), 'no authorization header reached it');
      assert.ok(fake.urls.every((u) => !u.includes('api-token-local-1234')));
    } finally {
      await fake.close();
    }
  });

  it('does not attach to an impostor that answers with a wrong proof, even with a server file for its port', async () => {
    const fake = await impostor(() => 'ab'.repeat(32));
    try {
      await fs.writeFile(path.join(dir, SERVER_FILE), JSON.stringify({ pid: 1, http: `http://127.0.0.1:${fake.port}`, smtp: '127.0.0.1:1', key: 'k'.repeat(32), apiTokenSha256: 'x', webhookTokenSha256: 'y' }), { mode: 0o600 });
      const server = new LocalServer(options({ httpPort: fake.port }));
      servers.push(server);
      await assert.rejects(server.start(), (e: unknown) => LocalServerError.is(e, 'not_proven') && /could not prove/.test(e.message));
      assert.ok(fake.requests.every((h) => h.authorization === undefined));
    } finally {
      await fake.close();
    }
  });

  it('refuses a server file that other users can read', async () => {
    const fake = await impostor();
    try {
      await fs.writeFile(path.join(dir, SERVER_FILE), JSON.stringify({ pid: 1, http: `http://127.0.0.1:${fake.port}`, smtp: '127.0.0.1:1', key: 'k', apiTokenSha256: 'x', webhookTokenSha256: 'y' }));
      await fs.chmod(path.join(dir, SERVER_FILE), 0o644);
      const server = new LocalServer(options({ httpPort: fake.port }));
      servers.push(server);
      await assert.rejects(server.start(), (e: unknown) => LocalServerError.is(e, 'not_proven') && /other users/.test(e.message));
    } finally {
      await fake.close();
    }
  });

  describe('connection to the local server', () => {
    const settingsFor = (over: Record<string, unknown>): Settings => readSettings({ get: <T>(k: string) => over[k] as T | undefined }).settings;

    it("starts its server with the data folder's tokens, reads them only after the proof, and keeps none in secret storage", async () => {
      const secrets = memorySecrets();
      const { log, lines } = memoryLog();
      const settings = settingsFor({ 'local.httpPort': 0, 'local.smtpPort': 0, 'local.dataFolder': dir });
      const conn = new Connection({
        settings: () => settings,
        tokens: new TokenStore(secrets),
        trust: new ConfirmedServers(memoryMemento()),
        log,
        createApi: (o) => createClient(o),
        cliPath: CLI,
        execArgv: EXEC_ARGV,
        defaultDataDir: dir,
      });
      try {
        const api = await conn.ensure();
        const st = conn.state;
        assert.equal(st.kind, 'ready');
        assert.deepEqual([...secrets.data.keys()], [], 'no local token in secret storage');
        const file = JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')) as { apiToken: string; webhookToken: string; twilioAuthToken: string };
        assert.ok(file.apiToken.length >= 32, 'the server generated its tokens into its data folder');
        assert.equal((await fs.stat(path.join(dir, TOKENS_FILE))).mode & 0o777, 0o600);
        const domains = await api.listDomains();
        assert.ok(Array.isArray(domains.domains));
        assert.ok(!lines.join('\n').includes(file.apiToken), 'the token never reaches the log');
        assert.equal(await conn.webhookToken(), file.webhookToken);
        // The Twilio auth token is the data folder's too: it opens the Twilio API.
        const twilioToken = await conn.twilioAuthToken();
        assert.equal(twilioToken, file.twilioAuthToken);
        assert.ok(st.kind === 'ready');
        const account = `AC${'0'.repeat(32)}`;
        const sent = await fetch(`${st.server.baseUrl}/2010-04-01/Accounts/${account}/Messages.json`, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(`${account}:${twilioToken}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'To=%2B15550100199&From=%2B15550100000&Body=hi',
        });
        assert.equal(sent.status, 201);
        assert.ok(!lines.join('\n').includes(twilioToken!), 'the Twilio auth token never reaches the log');
        // The same tokens are used again next time.
        await conn.stopLocal();
        assert.equal(conn.state.kind, 'stopped');
        await assert.rejects(conn.ensure(), /stopped/);
        await (await conn.startLocal()).listDomains();
        assert.equal(JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')).apiToken, file.apiToken);
        assert.ok(!lines.some((l) => /\b403\b|forbidden|rejected/i.test(l)), `no refused token on a normal start: ${lines.join('\n')}`);
      } finally {
        await conn.dispose();
      }
    });

    it('moves tokens an earlier version kept in secret storage into the data folder once, then uses only the folder', async () => {
      const secrets = memorySecrets();
      const tokens = new TokenStore(secrets);
      const key = 'http://127.0.0.1:0';
      await tokens.set('api', key, 'old-api-token-5555aaaa');
      await tokens.set('webhook', key, 'old-webhook-token-6666bbbb');
      const settings = settingsFor({ 'local.httpPort': 0, 'local.smtpPort': 0, 'local.dataFolder': dir });
      const sent: Array<string | undefined> = [];
      const conn = new Connection({ settings: () => settings, tokens, trust: new ConfirmedServers(memoryMemento()), log: memoryLog().log, createApi: (o) => (sent.push(o.apiToken), createClient(o)), cliPath: CLI, execArgv: EXEC_ARGV, defaultDataDir: dir });
      try {
        await (await conn.ensure()).listDomains();
        assert.deepEqual(sent, ['old-api-token-5555aaaa'], 'webhook URLs already copied keep working');
        assert.equal(JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')).apiToken, 'old-api-token-5555aaaa');
        assert.deepEqual([...secrets.data.keys()], [], 'secret storage no longer holds local tokens');
        // A token put into secret storage later (by hand, or another window of an old version) is never used.
        await tokens.set('api', key, 'stray-token-7777cccc');
        await conn.reset(true);
        await conn.ensure();
        assert.deepEqual(sent, ['old-api-token-5555aaaa', 'old-api-token-5555aaaa']);
      } finally {
        await conn.dispose();
      }
    });

    it('a reset (Switch Server, new settings) says "idle" at once, while its old process is still exiting, so the tree drops that server\'s rows now', async () => {
      const settings = settingsFor({ 'local.httpPort': 0, 'local.smtpPort': 0, 'local.dataFolder': dir });
      const conn = new Connection({ settings: () => settings, tokens: new TokenStore(memorySecrets()), trust: new ConfirmedServers(memoryMemento()), log: memoryLog().log, createApi: (o) => createClient(o), cliPath: CLI, execArgv: EXEC_ARGV, defaultDataDir: dir });
      try {
        await conn.ensure();
        const pid = conn.localPid!;
        const kinds: string[] = [];
        conn.onDidChangeState((st) => kinds.push(st.kind));
        const reset = conn.reset(true);
        // Before anything was awaited: the state says it, while the old process still runs.
        assert.deepEqual(kinds, ['idle']);
        assert.equal(isAlive(pid), true, 'the old process has not exited yet');
        await reset;
        assert.equal(isAlive(pid), false, 'and it is gone once reset resolves');
        // A connection made right away waits for that exit and starts a new process.
        await conn.ensure();
        assert.notEqual(conn.localPid, pid);
      } finally {
        await conn.dispose();
      }
    });

    it('reads tokens.json when attaching to a server started elsewhere, and stores nothing', async () => {
      const httpPort = await freePort();
      await fs.writeFile(path.join(dir, TOKENS_FILE), JSON.stringify({ apiToken: 'standalone-api-1111', webhookToken: 'standalone-wh-2222' }));
      // Started "in a terminal": no tokens given, so it uses tokens.json.
      const standalone = new LocalServer(options({ httpPort, apiToken: undefined, webhookToken: undefined }));
      servers.push(standalone);
      await standalone.start();
      const secrets = memorySecrets();
      const settings = settingsFor({ 'local.httpPort': httpPort, 'local.smtpPort': 0, 'local.dataFolder': dir });
      const sent: Array<string | undefined> = [];
      const { log, lines } = memoryLog();
      // The client logs every refused call at warn (as in the extension): none may be logged.
      const createApi = (o: { baseUrl: string; apiToken?: string }) => (sent.push(o.apiToken), createClient({ ...o, log: (level, msg) => lines.push(`${level}: ${msg}`) }));
      const conn = new Connection({ settings: () => settings, tokens: new TokenStore(secrets), trust: new ConfirmedServers(memoryMemento()), log, createApi, cliPath: CLI, execArgv: EXEC_ARGV, defaultDataDir: dir });
      try {
        await (await conn.ensure()).listDomains();
        const st = conn.state;
        assert.ok(st.kind === 'ready' && st.server.mode === 'attached');
        assert.deepEqual(sent, ['standalone-api-1111'], 'only the token the server proved it takes was ever given to a client');
        assert.deepEqual([...secrets.data.keys()], [], 'nothing copied into secret storage');
        assert.equal(await conn.webhookToken(), 'standalone-wh-2222');
        await (await conn.ensure()).listInbox('private', '*');
        assert.ok(!lines.some((l) => /^(warn|error): /.test(l) || /\b403\b|forbidden/i.test(l)), `a normal attach logs no refusal: ${lines.join('\n')}`);
        // Stop Local Server lets go of it and says whose it is; it keeps answering.
        assert.equal(await conn.stopLocal(), 'detached');
        const after = conn.state;
        assert.ok(after.kind === 'detached' && after.pid === standalone.pid && after.baseUrl === `http://127.0.0.1:${httpPort}`, JSON.stringify(after));
        assert.equal(await probeHealth(`http://127.0.0.1:${httpPort}`), 'test-inbox');
        await assert.rejects(conn.ensure(), /belongs to process/);
      } finally {
        await conn.dispose();
      }
    });

    it('sends no token to a proven server whose token it does not know, and says which token to set', async () => {
      const other = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-ext-'));
      // Started with tokens given by its caller: no tokens.json in its folder.
      const running = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: 'elsewhere-api-3333', webhookToken: 'elsewhere-wh-4444', defaultDomain: DEFAULT_DOMAIN });
      const secrets = memorySecrets();
      const settings = settingsFor({ 'local.httpPort': running.httpPort, 'local.smtpPort': 0, 'local.dataFolder': dir });
      const sent: Array<string | undefined> = [];
      const conn = new Connection({ settings: () => settings, tokens: new TokenStore(secrets), trust: new ConfirmedServers(memoryMemento()), log: memoryLog().log, createApi: (o) => (sent.push(o.apiToken), createClient(o)), cliPath: CLI, execArgv: EXEC_ARGV, defaultDataDir: other });
      try {
        await assert.rejects(conn.ensure(), (e: unknown) => LocalServerError.is(e, 'token_unknown') && e.message.includes(`pid ${process.pid}`));
        assert.deepEqual(sent, [], 'no client was made, so no token was sent');
        assert.equal(conn.state.kind, 'failed');
      } finally {
        await conn.dispose();
        await running.close();
        await fs.rm(other, { recursive: true, force: true });
      }
    });
  });
});

/** Whether a process runs (signal 0 checks without sending anything). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
