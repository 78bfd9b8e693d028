// The MCP server configs Copy MCP Server Config… gives for agents outside VS Code (Claude Code,
// Cursor, Codex, Windsurf), and the launcher their stdio configs run. Pure text, no vscode.
//
// No config ever holds a token. A stdio config runs `test-inbox mcp` with the local server's
// data folder: the command reads the token from that folder's tokens.json, once the server
// there proved it is the folder's own. An HTTP config names an environment variable each agent
// expands itself (`${TEST_INBOX_API_TOKEN}`, `${env:…}`, Codex's `bearer_token_env_var`).
//
// A user with only the VSIX has no `test-inbox` on PATH, and the extension's own folder changes
// with every update (…/extensions/test-inbox.test-inbox-<version>/). So the stdio config runs
// `node <launcher> mcp …`, where the launcher is a small file in the extension's global storage
// (a folder that stays put across updates) that starts the dist/cli.js of the newest installed
// version it finds in the extensions folder (skipping those VS Code marked obsolete), or the one
// it was written from. It needs Node on PATH; the HTTP config needs nothing.

/** The environment variable HTTP configs take the API token from. */
export const MCP_TOKEN_ENV = 'TEST_INBOX_API_TOKEN';
/** The name the server gets in each agent's config. */
const MCP_SERVER_NAME = 'test-inbox';

export type McpAgent = 'claude' | 'cursor' | 'codex' | 'windsurf';
export type McpTransport = 'stdio' | 'http';

export const MCP_AGENTS: ReadonlyArray<{ agent: McpAgent; label: string; file: string }> = [
  { agent: 'claude', label: 'Claude Code', file: '.mcp.json in the project (or `claude mcp add-json test-inbox \'<the entry>\'`)' },
  { agent: 'cursor', label: 'Cursor', file: '~/.cursor/mcp.json (or .cursor/mcp.json in the project)' },
  { agent: 'codex', label: 'Codex', file: '~/.codex/config.toml' },
  { agent: 'windsurf', label: 'Windsurf', file: '~/.codeium/windsurf/mcp_config.json' },
];

interface McpConfigInput {
  /** The stdio command: the launcher and the local server's data folder. */
  stdio?: { launcher: string; dataDir: string };
  /** The server's base URL (the HTTP config's endpoint is its `/mcp`). */
  serverUrl: string;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A TOML basic string. */
function toml(s: string): string {
  return JSON.stringify(s);
}

/** The config text of one agent and transport. */
export function mcpConfigText(agent: McpAgent, transport: McpTransport, input: McpConfigInput): string {
  if (transport === 'stdio') {
    if (!input.stdio) throw new Error('a stdio config needs the local server');
    const args = [input.stdio.launcher, 'mcp', '--data-dir', input.stdio.dataDir];
    if (agent === 'codex') return `[mcp_servers.${MCP_SERVER_NAME}]\ncommand = "node"\nargs = [${args.map(toml).join(', ')}]\n`;
    const entry = agent === 'claude' ? { type: 'stdio', command: 'node', args } : { command: 'node', args };
    return json({ mcpServers: { [MCP_SERVER_NAME]: entry } });
  }
  const url = `${input.serverUrl.replace(/\/+$/, '')}/mcp`;
  switch (agent) {
    case 'claude':
      return json({ mcpServers: { [MCP_SERVER_NAME]: { type: 'http', url, headers: { Authorization: `Bearer \${${MCP_TOKEN_ENV}}` } } } });
    case 'cursor':
      return json({ mcpServers: { [MCP_SERVER_NAME]: { url, headers: { Authorization: `Bearer \${env:${MCP_TOKEN_ENV}}` } } } });
    case 'windsurf':
      return json({ mcpServers: { [MCP_SERVER_NAME]: { serverUrl: url, headers: { Authorization: `Bearer \${env:${MCP_TOKEN_ENV}}` } } } });
    case 'codex':
      return `[mcp_servers.${MCP_SERVER_NAME}]\nurl = ${toml(url)}\nbearer_token_env_var = ${toml(MCP_TOKEN_ENV)}\n`;
  }
}

/**
 * The launcher (CommonJS, run by `node`): starts `dist/cli.js` of the newest installed Test
 * Inbox in `extensionsDir` (folders `<extensionFolderPrefix><version>…`), else `fallbackCli`,
 * with the arguments it was given, stdio passed through.
 */
export function mcpLauncherText(o: { extensionsDir: string; extensionFolderPrefix: string; fallbackCli: string }): string {
  return `#!/usr/bin/env node
// Written by the Test Inbox extension (Copy MCP Server Config…); written again each time.
// Runs the test-inbox CLI of the newest installed Test Inbox extension: the extension's own
// folder changes with every update, this file stays. No token is kept here.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const EXTENSIONS = ${JSON.stringify(o.extensionsDir)};
const PREFIX = ${JSON.stringify(o.extensionFolderPrefix)};
const FALLBACK = ${JSON.stringify(o.fallbackCli)};
const versionOf = (name) => name.slice(PREFIX.length).split(/[^0-9.]/)[0].split('.').map((n) => Number(n) || 0);
const newer = (a, b) => { for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) > (b[i] || 0); return false; };
let obsolete = {};
try { obsolete = JSON.parse(fs.readFileSync(path.join(EXTENSIONS, '.obsolete'), 'utf8')) || {}; } catch {}
let best;
let names = [];
try { names = fs.readdirSync(EXTENSIONS); } catch {}
for (const name of names) {
  if (!name.toLowerCase().startsWith(PREFIX) || obsolete[name]) continue;
  const cli = path.join(EXTENSIONS, name, 'dist', 'cli.js');
  if (!fs.existsSync(cli)) continue;
  const v = versionOf(name);
  if (!best || newer(v, best.v)) best = { v, cli };
}
const cli = best ? best.cli : FALLBACK;
if (!fs.existsSync(cli)) {
  process.stderr.write('test-inbox mcp: the Test Inbox extension is not installed in ' + EXTENSIONS + ' any more. Install it again, or run the CLI of the npm package: npx test-inbox mcp\\n');
  process.exit(69);
}
const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => child.kill(s));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;
}
