// Copy MCP Server Config…: the config that gives an agent outside VS Code (Claude Code, Cursor,
// Codex, Windsurf) the Test Inbox MCP tools (src/extension/mcpConfig.ts; no token in any of
// them). Inside VS Code the language-model tools are the agent's way in: the extension
// registers no MCP server of its own, so Copilot never sees the same tools twice.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { ExtensionError } from '../errors';
import { MCP_AGENTS, MCP_TOKEN_ENV, type McpAgent, mcpConfigText, mcpLauncherText, type McpTransport } from '../mcpConfig';
import type { Services } from '../services';
import { showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copyMcpConfig.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Where the launcher of the stdio configs lives: the extension's global storage, which stays put across updates. */
export function launcherPath(s: Services): string {
  return path.join(s.context.globalStorageUri.fsPath, 'mcp', 'test-inbox-mcp.cjs');
}

/** Copies the config of `agent` over `transport` (asked for when not given); resolves the text copied. */
export async function run(s: Services, agentArg?: McpAgent, transportArg?: McpTransport): Promise<string | undefined> {
  await s.connection.ensure();
  const st = s.connection.state;
  if (st.kind !== 'ready') return undefined;
  if (!st.server.testInbox) {
    throw new ExtensionError('not_supported', 'The hosted service has no MCP endpoint. Run `npx test-inbox mcp --server <its URL>` with TEST_INBOX_API_TOKEN set in the agent\'s config (see the README).');
  }
  const agent = agentArg ?? (await vscode.window.showQuickPick(MCP_AGENTS.map((a) => ({ label: a.label, description: a.file, agent: a.agent })), { title: 'Copy MCP Server Config: which agent?' }))?.agent;
  if (!agent) return undefined;
  const local = st.server.local && st.server.dataDir !== undefined;
  const transport: McpTransport | undefined =
    transportArg ??
    (local
      ? (
          await vscode.window.showQuickPick(
            [
              { label: 'stdio (recommended)', description: 'runs test-inbox mcp, which reads the token from the data folder', transport: 'stdio' as const },
              { label: 'HTTP', description: `${st.server.baseUrl}/mcp, the token from ${MCP_TOKEN_ENV}`, transport: 'http' as const },
            ],
            { title: 'Copy MCP Server Config: how does the agent connect?' },
          )
        )?.transport
      : 'http');
  if (!transport) return undefined;
  if (transport === 'stdio' && !local) throw new ExtensionError('not_supported', `A stdio config is for the local server; for ${st.server.baseUrl} copy the HTTP config.`);
  let stdio: { launcher: string; dataDir: string } | undefined;
  if (transport === 'stdio') {
    const launcher = launcherPath(s);
    await fs.mkdir(path.dirname(launcher), { recursive: true });
    const text = mcpLauncherText({
      extensionsDir: path.dirname(s.context.extensionPath),
      extensionFolderPrefix: `${s.context.extension.id.toLowerCase()}-`,
      fallbackCli: s.context.asAbsolutePath(path.join('dist', 'cli.js')),
    });
    await fs.writeFile(launcher, text, { mode: 0o755 });
    stdio = { launcher, dataDir: st.server.dataDir as string };
  }
  const config = mcpConfigText(agent, transport, { serverUrl: st.server.baseUrl, stdio });
  await vscode.env.clipboard.writeText(config);
  const where = MCP_AGENTS.find((a) => a.agent === agent)!;
  void showInfo(
    transport === 'stdio'
      ? inert`Copied the ${where.label} MCP config. Paste it into ${where.file}. It runs Node with a launcher in the extension's storage (Node 20 or later on PATH); the token stays in the data folder.`
      : inert`Copied the ${where.label} MCP config. Paste it into ${where.file}, and set ${MCP_TOKEN_ENV} to the API token in the agent's environment.`,
  );
  return config;
}
