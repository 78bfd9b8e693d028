// Run as its own process by test/server/mcp.test.ts (node --import tsx): starts a server in
// this process, uses it without MCP (a message over SMTP, listed and read, which runs the MIME
// workers), says whether the MCP SDK's server side is loaded, then asks /mcp once and says it
// again. One JSON line on stdout.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';

const SERVER_SIDE = [path.join('src', 'mcp', 'sdk.ts'), path.join('sdk', 'dist', 'cjs', 'server', 'index.js'), path.join('sdk', 'dist', 'cjs', 'server', 'webStandardStreamableHttp.js')];
const loaded = (): boolean => Object.keys(require.cache).some((k) => SERVER_SIDE.some((s) => k.endsWith(s)));

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-mcplazy-'));
  const tokens = await loadOrCreateTokens(dataDir);
  const server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: 'inbox.test' });
  try {
    const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: 'a@acme.test', to: 'lazy@inbox.test', subject: 'Hello', text: 'Your code is 123123.' });
    t.close();
    const headers = { authorization: tokens.apiToken };
    const listed = (await (await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/inboxes/lazy`, { headers })).json()) as { msgs: Array<{ id: string }> };
    const read = await fetch(`${server.httpUrl}/api/v2/domains/inbox.test/messages/${listed.msgs[0].id}/links`, { headers });
    const before = loaded();
    const mcp = await fetch(`${server.httpUrl}/mcp`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    process.stdout.write(`${JSON.stringify({ read: read.status, before, mcp: mcp.status, after: loaded() })}\n`);
  } finally {
    await server.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

void main();
