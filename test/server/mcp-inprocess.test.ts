// G6 (issue 35): one /mcp request costs one connection, whatever its batch size. /mcp runs its
// tools' API calls through the server's own handler in-process (http/inject.ts), after its one
// auth step, instead of sending HTTP requests to its own port; and one /mcp request runs at
// most MCP_MAX_CONCURRENT_TOOL_CALLS tool calls at once, the rest queued.
// Before: a batch of 100 `wait_for_code` opened 100 long-polls back to the server, each a
// connection of its own counted against the cap that protects every client.
import assert from 'node:assert/strict';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_MAX_CONCURRENT_TOOL_CALLS } from '../../src/server/http/mcp';
import { API_TOKEN, DOMAIN, startApi, type Harness } from './api-harness';
import { until } from '../support/stalledRequest';

const BATCH = 100;

function connections(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
}

/** POSTs one JSON-RPC batch to /mcp on a connection of its own; resolves the parsed answer. */
function postBatch(port: number, batch: unknown[]): Promise<{ status: number; body: unknown }> {
  const payload = Buffer.from(JSON.stringify(batch));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': payload.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (e) {
            reject(e instanceof Error ? e : new Error(String(e)));
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('G6: /mcp runs its tool calls in-process: one connection per request, a cap on calls at once', function () {
  this.timeout(120_000);
  let h: Harness;

  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(async () => {
    await h.close();
  });

  it(`a batch of ${BATCH} wait_for_code calls opens no connection besides its own, and runs at most ${MCP_MAX_CONCURRENT_TOOL_CALLS} at once`, async () => {
    const since = Date.now() - 1;
    const batch = Array.from({ length: BATCH }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'wait_for_code', arguments: { inbox: 'batch', domain: DOMAIN, since, wait_seconds: 30 } } }));
    let maxConnections = 0;
    let maxWaits = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxConnections = Math.max(maxConnections, await connections(h.api.server));
        maxWaits = Math.max(maxWaits, h.api.pendingWaits);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const answer = postBatch(h.port, batch);
    try {
      // The first calls are waiting for mail (long-polls), the rest queued behind them.
      await until(() => (h.api.pendingWaits >= Math.min(BATCH, MCP_MAX_CONCURRENT_TOOL_CALLS) ? true : undefined), 30_000, () => `${h.api.pendingWaits} waits, ${maxConnections} connections`);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await connections(h.api.server), 1, 'the /mcp request is the only connection');
      assert.equal(h.api.pendingWaits, MCP_MAX_CONCURRENT_TOOL_CALLS, 'the cap of calls at once, the rest queued');
      await h.deliver('batch', Buffer.from(`From: a@acme.test\r\nTo: batch@${DOMAIN}\r\nSubject: code\r\n\r\nYour verification code is 424242.\r\n`));
      const { status, body } = await answer;
      assert.equal(status, 200);
      assert.ok(Array.isArray(body) && body.length === BATCH, JSON.stringify(body).slice(0, 300));
      for (const r of body as Array<{ result?: { structuredContent?: { found?: boolean; code?: string } }; error?: unknown }>) {
        assert.equal(r.error, undefined, JSON.stringify(r));
        assert.equal(r.result?.structuredContent?.found, true, JSON.stringify(r));
        assert.equal(r.result?.structuredContent?.code, '424242');
      }
    } finally {
      sampling = false;
      await sampler;
    }
    assert.equal(maxConnections, 1, `connections open at once during the batch: ${maxConnections}`);
    assert.ok(maxWaits <= MCP_MAX_CONCURRENT_TOOL_CALLS, `tool calls waiting at once: ${maxWaits}`);
  });

  it('answers the SDK client as before, and a call\'s in-process wait ends when its client goes away', async () => {
    const client = new Client({ name: 'inprocess-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${API_TOKEN}` } } }));
    try {
      await h.deliver('sdk', Buffer.from(`From: a@acme.test\r\nTo: sdk@${DOMAIN}\r\nSubject: code\r\n\r\nYour verification code is 135790.\r\n`));
      const r = (await client.callTool({ name: 'wait_for_code', arguments: { inbox: 'sdk', domain: DOMAIN } })) as { structuredContent?: { code?: string } };
      assert.equal(r.structuredContent?.code, '135790');
    } finally {
      await client.close();
    }
    // A /mcp request whose client leaves while its call waits: the in-process long-poll ends with it.
    const call = [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait_for_code', arguments: { inbox: 'nobody', domain: DOMAIN, since: 'now', wait_seconds: 30 } } }];
    const payload = Buffer.from(JSON.stringify(call));
    const req = http.request({ host: '127.0.0.1', port: h.port, method: 'POST', path: '/mcp', agent: false, headers: { host: `127.0.0.1:${h.port}`, authorization: API_TOKEN, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': payload.length } });
    req.on('error', () => undefined);
    req.end(payload);
    await until(() => (h.api.pendingWaits === 1 ? true : undefined), 30_000, () => 'the call waits in-process');
    req.destroy();
    // Well within the 30 s the call asked to wait: the wait ends with its client.
    await until(() => (h.api.pendingWaits === 0 ? true : undefined), 10_000, () => `the in-process wait outlived its client: ${h.api.pendingWaits}`);
  });
});
