// The TOTP answer has one shape per surface family (docs/api.md "Field names"): the wire JSON
// of the HTTP API and the MCP tools says `seconds_left`; the JavaScript answers of the library
// and of the CLI's --json (the library's object) say `secondsLeft`. Every surface gives the
// same code for the same secret. (The editor's Copy TOTP Code: test/integration/totp.test.ts.)
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runTestCommand } from '../../src/cli/testCommands';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { totp } from '../../src/testing';
import { clearProductEnv } from '../support/cli';

const SECRET = 'JBSWY3DPEHPK3PXP';

describe('TOTP answers: seconds_left on the wire (HTTP, MCP), secondsLeft in JavaScript (library, CLI --json)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer;
  let apiToken: string;
  /** The codes of the periods around the calls: a call may land on either side of a period's end. */
  let codes: Set<string>;

  before(async () => {
    clearProductEnv();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-totp-'));
    const tokens = await loadOrCreateTokens(dataDir);
    apiToken = tokens.apiToken;
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: 'inbox.test' });
  });

  after(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    const now = Date.now();
    codes = new Set([now - 30_000, now, now + 30_000, now + 60_000].map((at) => totp(SECRET, { at }).code));
  });

  function checkSeconds(n: unknown): void {
    assert.ok(typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 30, String(n));
  }

  it('HTTP GET /api/v2/totp/{secret}: exactly {code, seconds_left}', async () => {
    const r = await fetch(`${server.httpUrl}/api/v2/totp/${SECRET}`, { headers: { authorization: apiToken } });
    assert.equal(r.status, 200);
    const body = (await r.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['code', 'seconds_left']);
    assert.ok(codes.has(String(body.code)));
    checkSeconds(body.seconds_left);
  });

  it('MCP get_totp_code: seconds_left beside the snake_case fields of every MCP answer, no secondsLeft', async () => {
    const client = new Client({ name: 'totp-shape-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.httpUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiToken}` } } }));
    try {
      const r = (await client.callTool({ name: 'get_totp_code', arguments: { secret: SECRET } })) as { structuredContent?: Record<string, unknown>; isError?: boolean };
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const s = r.structuredContent!;
      assert.deepEqual(Object.keys(s).sort(), ['code', 'message_id', 'seconds_left', 'server_time_ms']);
      assert.ok(codes.has(String(s.code)));
      checkSeconds(s.seconds_left);
    } finally {
      await client.close();
    }
  });

  it('library totp(): exactly {code, secondsLeft}', () => {
    const r = totp(SECRET) as unknown as Record<string, unknown>;
    assert.deepEqual(Object.keys(r).sort(), ['code', 'secondsLeft']);
    assert.ok(codes.has(String(r.code)));
    checkSeconds(r.secondsLeft);
  });

  it('CLI `test-inbox totp --json`: the library object, exactly {code, secondsLeft}', async () => {
    let out = '';
    let err = '';
    const status = await runTestCommand(['totp', SECRET, '--json'], { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } });
    assert.equal(status, 0, err);
    const r = JSON.parse(out) as Record<string, unknown>;
    assert.deepEqual(Object.keys(r).sort(), ['code', 'secondsLeft']);
    assert.ok(codes.has(String(r.code)));
    checkSeconds(r.secondsLeft);
  });
});
