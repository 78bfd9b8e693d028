// The MCP endpoint of a team server: two real `test-inbox serve` processes on one throwaway
// PostgreSQL (test/support/postgres.ts) answer one SDK client's requests alternately — its
// fetch sends each POST to the other process — because /mcp is stateless (no session id).
// Mail goes in over SMTP through one process; its code comes out through the other.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import nodemailer from 'nodemailer';
import { type Cluster, startCluster } from '../support/postgres';
import { startCli } from './cliProcess';

const API = 'mcp-team-api-token-41c2';
const WEBHOOK = 'mcp-team-webhook-token-77de';

describe('MCP on a team server: two processes on one PostgreSQL answer one client alternately', function () {
  this.timeout(180_000);
  let cluster: Cluster;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];

  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
    cluster?.destroy();
  });

  it('every request goes to the other process, and each answers it', async () => {
    const url = await cluster.createDatabase('mcpteam');
    const runs = await Promise.all(
      [0, 1].map(async () => {
        const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-mcp-team-'));
        dirs.push(dir);
        const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir, '--store', url], { TEST_INBOX_API_TOKEN: API, TEST_INBOX_WEBHOOK_TOKEN: WEBHOOK });
        children.push(r.child);
        return r.ready;
      }),
    );
    const [a, b] = runs;
    const served: string[] = [];
    let next = 0;
    // One client, one URL (A's); its fetch sends each request to A and B in turn.
    const alternating = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const base = [a.http, b.http][next++ % 2];
      const target = new URL(input instanceof Request ? input.url : String(input));
      const to = new URL(target.pathname + target.search, base);
      served.push(base);
      return fetch(to, init);
    };
    const client = new Client({ name: 'mcp-team-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.http}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${API}` } }, fetch: alternating }));
    try {
      const { tools } = await client.listTools();
      assert.equal(tools.length, 5);
      const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: Number(a.smtp.split(':').pop()), secure: false, ignoreTLS: true });
      await mailer.sendMail({ from: 'shop@acme.test', to: 'team-joe@inbox.test', subject: 'Code', text: 'Your verification code is 318207.' });
      mailer.close();
      const answers: string[] = [];
      for (let i = 0; i < 4; i++) {
        const r = (await client.callTool({ name: 'wait_for_code', arguments: { inbox: 'team-joe@inbox.test', wait_seconds: 10 } })) as unknown as { structuredContent: { code?: string; found: boolean } };
        assert.equal(r.structuredContent.found, true, JSON.stringify(r.structuredContent));
        answers.push(r.structuredContent.code ?? '');
      }
      assert.deepEqual(answers, ['318207', '318207', '318207', '318207']);
      // initialize, the initialized notification, a GET the stateless endpoint refuses (405),
      // tools/list and the four calls: every process got requests, each one in turn.
      assert.ok(served.filter((s) => s === a.http).length >= 3 && served.filter((s) => s === b.http).length >= 3, served.join(' '));
      for (let i = 1; i < served.length; i++) assert.notEqual(served[i], served[i - 1]);
    } finally {
      await client.close();
    }
  });
});
