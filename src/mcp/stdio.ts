// `test-inbox mcp`: the MCP tools over stdio, for agents that start their servers as commands
// (Claude Code, Cursor, Codex, Windsurf). It finds the server and the token as the CLI's test
// commands do (src/api/node/connect.ts: --server, --token, --data-dir and their environment
// twins; by default the running local server of the data dir, proven by its challenge). It
// never starts a server: when none answers, it says on stderr how to start one, and every tool
// answers that as an error the agent can pass on, until a server runs.
import { type FlagSpec, parseFlags, UsageError } from '../shared/args';
import { API_TOKEN_ENV, DATA_DIR_ENV, EXIT_USAGE } from '../shared/contract';
import { type ConnectOptions, DOMAIN_ENV, SERVER_ENV } from '../api/connection';
import { failureOf } from '../api/errors';
import { connect, type Connection } from '../api/node/connect';
import { loadMcpSdk } from './load';
import { MCP_TOOL_NAMES, mcpToolSet, type ToolContext } from './tools';

export const MCP_COMMAND = 'mcp';

const FLAGS = {
  server: { type: 'string' },
  token: { type: 'string' },
  domain: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagSpec;

const MCP_USAGE = `Usage: test-inbox mcp [--server <url>] [--data-dir <path>] [--domain <name>]

Runs an MCP server on stdin/stdout for AI agents (Claude Code, Cursor, Codex, Windsurf):
the tools ${MCP_TOOL_NAMES.join(', ')}.
Read-only: no tool opens a link or sends anything. It does not start an inbox server; it
reads the one already running (VS Code's Test Inbox, or \`test-inbox serve\`).

Server options (each with an environment twin):
  --server <url>        Test Inbox server or hosted service (${SERVER_ENV}; default: the
                        running local server of the data dir, else http://127.0.0.1:2580)
  --token <token>       API token (${API_TOKEN_ENV}; default: the data dir's tokens.json, for
                        the server proven to run on that data dir). Prefer the variable.
  --domain <name>       default domain of the inboxes (${DOMAIN_ENV}; default: the server's
                        own, inbox.test unless it was started with --domain)
  --data-dir <path>     the local server's data dir (${DATA_DIR_ENV})
`;

/** How to get a server running, said when none answers. */
const START_HINT = 'Start one: open VS Code with the Test Inbox extension (it runs the local server), or run `npx test-inbox serve` in a terminal (with the same --data-dir, if you gave this command one); or point --server / TEST_INBOX_SERVER at a running one.';

interface McpIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** The tools' connection for a stdio session: made on first use, made again after a failure a new one may cure. */
function stdioContext(options: ConnectOptions): ToolContext & { probe(): Promise<string | undefined> } {
  let current: Promise<Connection> | undefined;
  const domains = new WeakMap<Connection, Promise<string | undefined>>();
  const connection = (): Promise<Connection> => {
    current ??= connect(options).catch((e: unknown) => {
      current = undefined;
      throw e;
    });
    return current;
  };
  return {
    connection,
    // A Test Inbox server says its time in /healthz; a hosted service has no clock to ask, so this machine's.
    serverNow: async (conn, signal) => ((await conn.isTestInbox()) ? ((await conn.api.health({ signal })).now ?? Date.now()) : Date.now()),
    // A Test Inbox server says in /healthz which domain `private` stands for; a hosted service keeps its own `private`.
    serverDomain: async (conn, signal) => {
      if (!(await conn.isTestInbox())) return undefined;
      let known = domains.get(conn);
      if (known === undefined) domains.set(conn, (known = conn.api.health({ signal }).then((h) => h.defaultDomain)));
      return known.catch((e: unknown) => {
        domains.delete(conn);
        throw e;
      });
    },
    forget: () => {
      const c = current;
      current = undefined;
      void c?.then((x) => x.close()).catch(() => undefined);
    },
    /** Undefined when a server answers and takes the token, else why not. */
    probe: async () => {
      try {
        const c = await connection();
        await c.isTestInbox();
        return undefined;
      } catch (e) {
        current = undefined;
        return failureOf(e).message;
      }
    },
  };
}

/** Runs `test-inbox mcp` (argv after the command name); resolves the exit code once stdin ends. */
export async function runMcpCommand(argv: string[], io: McpIo, version: string): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    const parsed = parseFlags(argv, FLAGS);
    values = parsed.values;
    if (values.help) {
      io.stdout.write(MCP_USAGE);
      return 0;
    }
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    for (const flag of ['server', 'token', 'domain', 'data-dir'] as const) if (values[flag] === '') throw new UsageError(`--${flag} must not be empty`);
  } catch (e) {
    if (UsageError.is(e)) {
      io.stderr.write(`test-inbox mcp: ${e.message}\n${MCP_USAGE.slice(0, MCP_USAGE.indexOf('\n'))}\nRun test-inbox mcp --help for the options.\n`);
      return EXIT_USAGE;
    }
    throw e;
  }
  const ctx = stdioContext({
    server: values.server as string | undefined,
    token: values.token as string | undefined,
    domain: values.domain as string | undefined,
    dataDir: values['data-dir'] as string | undefined,
  });
  // Said once on stderr (the agent's MCP log); the tools say it again to the agent while it lasts.
  void ctx.probe().then((problem) => {
    io.stderr.write(problem === undefined ? 'test-inbox mcp: connected to the inbox server\n' : `test-inbox mcp: ${problem}\n${START_HINT}\nThe tools answer this as an error until a server answers.\n`);
  });
  const sdk = await loadMcpSdk();
  await sdk.serveStdio(mcpToolSet(ctx, version));
  return 0;
}
