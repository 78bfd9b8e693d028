// Which server the library and the CLI's test commands send the API token to: a URL the caller names gets the token it gives; a URL taken from the data dir's
// server.json is used only once that server proves it serves the data dir; a server nobody
// named and that proves nothing gets no token. And with no token, a server that does not
// answer is "unreachable" (exit 69), not "unauthorized" (77).
// Impostors are real HTTP servers on port 0 that answer everything like a hosted service.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateToken, SERVER_FILE, tokenDigest } from '../../src/shared/contract';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { EXIT_NO_PERMISSION, EXIT_UNAVAILABLE, runTestCommand } from '../../src/cli/testCommands';
import { connect } from '../../src/testing/connection';
import { TestInboxError } from '../../src/testing/types';
import { waitForCodeOn } from '../../src/testing/wait';
import { closedPort } from '../support/ports';

/** An HTTP server that answers every request 200 with a hosted-looking JSON body, and records the Authorization headers it saw. */
async function impostor(): Promise<{ url: string; seen: Array<string | undefined>; close(): Promise<void> }> {
  const seen: Array<string | undefined> = [];
  const srv = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"domain":"private","to":"joe","msgs":[]}');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}

/** A server.json (mode 0600) as a server that stopped without removing it left it: its URL, a key nobody answers for. */
async function staleServerFile(dataDir: string, url: string): Promise<void> {
  const file = {
    pid: 999_999,
    http: url,
    smtp: '127.0.0.1:1',
    key: generateToken(),
    apiTokenSha256: await tokenDigest('old'),
    webhookTokenSha256: await tokenDigest('old-webhook'),
  };
  await fs.writeFile(path.join(dataDir, SERVER_FILE), JSON.stringify(file), { mode: 0o600 });
}

describe('where the test library sends the API token (impostors, stale server.json)', function () {
  this.timeout(30_000);
  let dataDir: string;
  const token = 'ci-secret-token-0123456789';

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-trust-'));
  });
  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('never sends TEST_INBOX_API_TOKEN to the URL of a stale server.json whose proof fails, nor to an unnamed server without a proof', async () => {
    const onStalePort = await impostor();
    const onDefaultPort = await impostor();
    try {
      await staleServerFile(dataDir, onStalePort.url);
      const env = { TEST_INBOX_API_TOKEN: token, TEST_INBOX_DATA_DIR: dataDir };
      await assert.rejects(
        (async () => {
          const conn = await connect({}, env, onDefaultPort.url);
          try {
            await waitForCodeOn(conn, 'joe', { timeout: 0 });
          } finally {
            await conn.close();
          }
        })(),
        (e: unknown) =>
          TestInboxError.is(e, 'unauthorized') &&
          e.message.includes(`the server at ${onDefaultPort.url} did not prove it is a Test Inbox server that takes this API token, so the token was not sent`) &&
          e.message.includes(`the server named in ${path.join(dataDir, SERVER_FILE)} was not used: the server at ${onStalePort.url} could not prove it serves that data dir`),
      );
      assert.deepEqual(onStalePort.seen.filter((a) => a !== undefined), [], 'no token reached the stale URL');
      assert.ok(onStalePort.seen.length > 0, 'the stale URL was asked for its proof');
      assert.deepEqual(onDefaultPort.seen.filter((a) => a !== undefined), [], 'no token reached the unnamed server');
    } finally {
      await onStalePort.close();
      await onDefaultPort.close();
    }
  });

  it('sends the token to a server without a proof when the caller names its URL (a hosted service)', async () => {
    const hosted = await impostor();
    try {
      await staleServerFile(dataDir, hosted.url);
      const conn = await connect({ server: hosted.url }, { TEST_INBOX_API_TOKEN: token, TEST_INBOX_DATA_DIR: dataDir });
      try {
        await assert.rejects(waitForCodeOn(conn, 'joe', { timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
      } finally {
        await conn.close();
      }
      assert.ok(hosted.seen.includes(token), 'the named URL got the token');
    } finally {
      await hosted.close();
    }
  });

  it('uses the URL of server.json once that server proves it serves the data dir, with the given token or tokens.json', async () => {
    const tokens = await loadOrCreateTokens(dataDir);
    const server: InboxServer = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: 'inbox.test' });
    const unused = await impostor();
    try {
      for (const env of [{ TEST_INBOX_DATA_DIR: dataDir }, { TEST_INBOX_DATA_DIR: dataDir, TEST_INBOX_API_TOKEN: tokens.apiToken }]) {
        const conn = await connect({}, env, unused.url);
        try {
          assert.equal(conn.baseUrl, server.httpUrl);
          assert.equal(await conn.isTestInbox(), true);
          await assert.rejects(waitForCodeOn(conn, 'joe', { timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
        } finally {
          await conn.close();
        }
      }
      assert.deepEqual(unused.seen, [], 'the fallback was not asked');
    } finally {
      await server.close();
      await unused.close();
    }
  });

  it('says where it looked for the server, and --data-dir / TEST_INBOX_DATA_DIR, when no server it found answers', async () => {
    const closed = `http://127.0.0.1:${await closedPort()}`;
    for (const env of [{}, { TEST_INBOX_API_TOKEN: token }]) {
      await assert.rejects(connect({ dataDir }, env, closed), (e: unknown) => {
        assert.ok(TestInboxError.is(e, 'unreachable'), String(e));
        assert.ok(e.message.includes(closed), e.message);
        assert.ok(e.message.includes(dataDir), e.message);
        assert.match(e.message, /pass --data-dir \(dataDir option\) or set TEST_INBOX_DATA_DIR/);
        return true;
      }, JSON.stringify(env));
    }
    // A server the caller named is not looked for: no data folder hint.
    await assert.rejects(connect({ dataDir, server: closed }, {}), (e: unknown) => TestInboxError.is(e, 'unreachable') && !/--data-dir/.test(e.message));
  });

  it('exits 69 (unreachable), not 77 (no token), when nothing answers at the server without a token; 77 when it answers', async () => {
    const io = (): { out: string[]; err: string[]; io: { stdout: { write(s: string): boolean }; stderr: { write(s: string): boolean } } } => {
      const out: string[] = [];
      const err: string[] = [];
      return { out, err, io: { stdout: { write: (s) => out.push(s) > 0 }, stderr: { write: (s) => err.push(s) > 0 } } };
    };
    const saved = process.env.TEST_INBOX_API_TOKEN;
    delete process.env.TEST_INBOX_API_TOKEN;
    const answering = await impostor();
    try {
      const port = await closedPort();
      const closed = io();
      assert.equal(await runTestCommand(['code', 'joe', '--server', `http://127.0.0.1:${port}`, '--data-dir', dataDir], closed.io), EXIT_UNAVAILABLE);
      assert.deepEqual(closed.out, []);
      assert.match(closed.err.join(''), new RegExp(`^test-inbox code: .*127\\.0\\.0\\.1:${port}`));
      const open = io();
      assert.equal(await runTestCommand(['code', 'joe', '--server', answering.url, '--data-dir', dataDir], open.io), EXIT_NO_PERMISSION);
      assert.match(open.err.join(''), /no API token for http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      if (saved !== undefined) process.env.TEST_INBOX_API_TOKEN = saved;
      await answering.close();
    }
  });
});
