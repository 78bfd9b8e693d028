// The configs Copy MCP Server Config… copies (src/extension/mcpConfig.ts) for Claude Code,
// Cursor, Codex and Windsurf: none holds a token (checked against the real tokens of a data
// folder), each is the agent's documented shape, and the stdio one works as copied: its
// command line, run by the MCP SDK's client, goes through the launcher to the newest installed
// version of the extension and answers a code from a real server.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import nodemailer from 'nodemailer';
import { MCP_AGENTS, MCP_TOKEN_ENV, mcpConfigText, mcpLauncherText, type McpTransport } from '../../src/extension/mcpConfig';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { childEnv } from '../support/cli';

const REPO = path.resolve(__dirname, '..', '..');

describe('Copy MCP Server Config: the configs and the launcher', function () {
  this.timeout(60_000);
  let root: string;
  let dataDir: string;
  let server: InboxServer;
  let tokens: { apiToken: string; webhookToken: string; twilioAuthToken?: string };

  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-mcpconfig-'));
    dataDir = path.join(root, 'data');
    await fs.mkdir(dataDir, { mode: 0o700 });
    tokens = await loadOrCreateTokens(dataDir);
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: 'inbox.test' });
  });
  after(async () => {
    await server?.close();
    await fs.rm(root, { recursive: true, force: true });
  });

  const input = () => ({ serverUrl: server.httpUrl, stdio: { launcher: path.join(root, 'storage', 'mcp', 'test-inbox-mcp.cjs'), dataDir } });

  it('holds no token in any config, for every agent and transport', () => {
    const secrets = [tokens.apiToken, tokens.webhookToken, tokens.twilioAuthToken].filter((t): t is string => typeof t === 'string' && t.length > 0);
    assert.ok(secrets.length >= 2);
    for (const { agent } of MCP_AGENTS) {
      for (const transport of ['stdio', 'http'] as McpTransport[]) {
        const text = mcpConfigText(agent, transport, input());
        for (const secret of secrets) assert.ok(!text.includes(secret), `${agent} ${transport} holds a token`);
        if (transport === 'http') assert.ok(text.includes(MCP_TOKEN_ENV), `${agent} http names the variable`);
      }
    }
    assert.ok(!mcpLauncherText({ extensionsDir: root, extensionFolderPrefix: 'test-inbox.test-inbox-', fallbackCli: '/x/cli.js' }).match(new RegExp(secrets.join('|'))));
  });

  it("is each agent's documented shape", () => {
    const url = `${server.httpUrl}/mcp`;
    assert.deepEqual(JSON.parse(mcpConfigText('claude', 'http', input())), { mcpServers: { 'test-inbox': { type: 'http', url, headers: { Authorization: `Bearer \${${MCP_TOKEN_ENV}}` } } } });
    assert.deepEqual(JSON.parse(mcpConfigText('cursor', 'http', input())), { mcpServers: { 'test-inbox': { url, headers: { Authorization: `Bearer \${env:${MCP_TOKEN_ENV}}` } } } });
    assert.deepEqual(JSON.parse(mcpConfigText('windsurf', 'http', input())), { mcpServers: { 'test-inbox': { serverUrl: url, headers: { Authorization: `Bearer \${env:${MCP_TOKEN_ENV}}` } } } });
    assert.equal(mcpConfigText('codex', 'http', input()), `[mcp_servers.test-inbox]\nurl = "${url}"\nbearer_token_env_var = "${MCP_TOKEN_ENV}"\n`);
    const args = [input().stdio.launcher, 'mcp', '--data-dir', dataDir];
    assert.deepEqual(JSON.parse(mcpConfigText('claude', 'stdio', input())), { mcpServers: { 'test-inbox': { type: 'stdio', command: 'node', args } } });
    for (const agent of ['cursor', 'windsurf'] as const) assert.deepEqual(JSON.parse(mcpConfigText(agent, 'stdio', input())), { mcpServers: { 'test-inbox': { command: 'node', args } } });
    assert.equal(mcpConfigText('codex', 'stdio', input()), `[mcp_servers.test-inbox]\ncommand = "node"\nargs = [${args.map((a) => JSON.stringify(a)).join(', ')}]\n`);
  });

  it('works as copied: the stdio command runs the newest installed version, which answers a code', async () => {
    // An extensions folder as VS Code keeps it: an old version, the current one, and a newer one marked obsolete.
    const extensions = path.join(root, 'extensions');
    const install = async (version: string, body: string) => {
      const dist = path.join(extensions, `test-inbox.test-inbox-${version}`, 'dist');
      await fs.mkdir(dist, { recursive: true });
      await fs.writeFile(path.join(dist, 'cli.js'), body);
    };
    await install('0.9.0', "process.stderr.write('the old version ran\\n'); process.exit(3);\n");
    await install('0.11.0-linux-x64', "process.stderr.write('an obsolete version ran\\n'); process.exit(3);\n");
    await fs.writeFile(path.join(extensions, '.obsolete'), JSON.stringify({ 'test-inbox.test-inbox-0.11.0-linux-x64': true }));
    // The current version's cli.js runs the CLI of these sources (the bundle's own `main`).
    await install('0.10.0', `require(${JSON.stringify(require.resolve('tsx/cjs'))});\nrequire(${JSON.stringify(path.join(REPO, 'src', 'cli', 'cli.ts'))}).main(process.argv.slice(2));\n`);
    const launcher = input().stdio.launcher;
    await fs.mkdir(path.dirname(launcher), { recursive: true });
    await fs.writeFile(launcher, mcpLauncherText({ extensionsDir: extensions, extensionFolderPrefix: 'test-inbox.test-inbox-', fallbackCli: path.join(extensions, 'gone', 'cli.js') }));

    const mailer = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    await mailer.sendMail({ from: 'a@acme.test', to: 'cfg@inbox.test', subject: 'Code', text: 'Your verification code is 605040.' });
    mailer.close();

    const entry = (JSON.parse(mcpConfigText('cursor', 'stdio', input())) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers['test-inbox'];
    assert.equal(entry.command, 'node');
    const env = childEnv();
    const client = new Client({ name: 'config-test', version: '1.0.0' });
    // `node` as the agent would find it on PATH: this Node.
    await client.connect(new StdioClientTransport({ command: process.execPath, args: entry.args, env, stderr: 'pipe' }));
    try {
      const r = (await client.callTool({ name: 'wait_for_code', arguments: { inbox: 'cfg@inbox.test' } })) as unknown as { structuredContent: { code: string } };
      assert.equal(r.structuredContent.code, '605040');
    } finally {
      await client.close();
    }
  });
});
