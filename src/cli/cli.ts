// `test-inbox`. `serve` runs the local inbox server in the foreground: when ready it prints
// exactly one JSON line on stdout, the ready line of src/shared/contract.ts; everything else goes to
// stderr. SIGINT/SIGTERM stop it cleanly (exit 0). The commands for tests (code, link, totp,
// send-sms, send-mail, clear) are dispatched to ./testCommands.ts.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { redact } from '../core/redact';
import {
  ALLOWED_HOSTS_ENV,
  API_TOKEN_ENV,
  DATABASE_URL_ENV,
  PUBLIC_URL_ENV,
  DEFAULT_LOG_LEVEL,
  LOG_LEVEL_ENV,
  DURABILITY_ENV,
  HTTP_PORT_ENV,
  SMTP_PORT_ENV,
  COMPAT_ENV,
  COMPAT_OPEN_ENV,
  LOG_LEVELS,
  type LogLevel,
  logsAt,
  DEFAULT_DOMAIN,
  DEFAULT_HOST,
  DEFAULT_HTTP_PORT,
  DEFAULT_SMTP_PORT,
  EXIT_DATA_DIR_IN_USE,
  EXIT_DATABASE_UNAVAILABLE,
  EXIT_FAILURE,
  EXIT_PORT_IN_USE,
  EXIT_USAGE,
  formatReadyLine,
  readServerFile,
  SERVE_COMMAND,
  SERVER_FILE,
  ServerFileProblem,
  SMTP_AUTH_ENV,
  CHAOS_FILE_ENV,
  SMTP_TLS_CERT_ENV,
  SMTP_TLS_DIR,
  SMTP_TLS_ENV,
  SMTP_TLS_KEY_ENV,
  SMTPS_PORT_ENV,
  TOKENS_FILE,
  TWILIO_AUTH_TOKEN_ENV,
  PROVIDER_KEY_ENV,
  WEBHOOK_TOKEN_ENV,
} from '../shared/contract';
import { parseFlags, UsageError } from '../shared/args';
import { MIN_SWEEP_EVERY_MS, SERVE_FLAGS, type ServeConfig, serveConfigOf } from './serveOptions';

export type { ServeConfig };
import { hostForUrl, type InboxServer, secretForms, ServerStartError, startInboxServer } from '../server/server';
import { StoreError } from '../server/store/errors';
import { APPLIED_SURFACES, ChaosRuleError, ChaosRules } from '../server/chaos/rules';
import { prepareDataDirLocked } from '../server/store/maildir/layout';
import { DEFAULT_MAX_AGE_MS, DEFAULT_MAX_MESSAGES_PER_INBOX, RETENTION_SWEEP_INTERVAL_MS } from '../server/store/types';
import { resolveTokens, type TokenName, TokensError } from '../server/tokens';
import { VERSION } from '../server/version';
import { defaultConnectionCaps, readSoftFdLimit } from '../server/limits';
import { DEFAULT_MAX_RECIPIENTS } from '../server/smtp/smtp';
import { isMimeWorker, serveMimeJobs } from '../server/workers/pool';

import { isTestCommand, runTestCommand, TEST_COMMANDS, TEST_COMMANDS_EXIT_CODES, TEST_COMMANDS_LIST } from './testCommands';
import { MCP_COMMAND, runMcpCommand } from '../mcp/stdio';

function fdCapsText(): string {
  const c = defaultConnectionCaps(readSoftFdLimit());
  return `here ${c.smtp} each for a limit of ${c.fdLimit}`;
}

/** `test-inbox --help`: every command, serve first. */
const OVERVIEW = `Usage: test-inbox <command> [options]

Email and SMS test inboxes: a local inbox server (SMTP in, HTTP API out), and commands that
read it (or a hosted Mailinator-compatible service) from scripts and CI.

Commands:
  ${SERVE_COMMAND.padEnd(20)}  run the local inbox server in the foreground
${TEST_COMMANDS_LIST}  ${MCP_COMMAND.padEnd(20)}  serve the read-only MCP tools (codes, links, TOTP) to AI agents on stdio

Options:
  -h, --help              show this help
  -v, --version           print the version

Run test-inbox <command> --help for the options of a command.

Exit codes of serve: 0 stopped by SIGINT/SIGTERM, ${EXIT_PORT_IN_USE} a port is in use, ${EXIT_DATA_DIR_IN_USE} another server uses the
data dir, ${EXIT_DATABASE_UNAVAILABLE} the --store database is unavailable, ${EXIT_USAGE} bad command line, ${EXIT_FAILURE} other failure.
${TEST_COMMANDS_EXIT_CODES}`;

const USAGE = `Usage: test-inbox serve [options]

Runs the local inbox server: SMTP in, HTTP API out, messages kept in a Maildir.
When ready, prints one JSON line on stdout: {"http":"http://HOST:PORT","smtp":"HOST:PORT"}
(when bound to every interface, HOST is loopback and "reachable" lists the machine's addresses;
with --compat, "ca" is the path of the local CA's certificate)

Options:
  --host <addr>           interface to bind (default ${DEFAULT_HOST}; 0.0.0.0 for every
                          interface: a container, the LAN)
  --allowed-hosts <list>  more names the HTTP server answers to, comma-separated: a compose
                          service name, a LAN name or address (testinbox,192.168.1.20); one
                          host each, no wildcards (or env ${ALLOWED_HOSTS_ENV}). Always allowed:
                          localhost, 127.0.0.1, [::1], the --public-url host and, with another
                          --host, that address, the machine's name and its interface addresses
  --http-port <n>         HTTP API port, 0 picks a free one (default ${DEFAULT_HTTP_PORT}; or env
                          ${HTTP_PORT_ENV})
  --smtp-port <n>         SMTP port, 0 picks a free one (default ${DEFAULT_SMTP_PORT}; or env
                          ${SMTP_PORT_ENV})
  --data-dir <path>       where messages and tokens are kept (default $XDG_DATA_HOME/test-inbox
                          when set, else %LOCALAPPDATA%\\test-inbox on Windows,
                          ~/Library/Application Support/test-inbox on macOS and
                          ~/.local/share/test-inbox on Linux; a ~/.local/share/test-inbox
                          of an earlier version stays in use while it holds data)
  --store <url>           keep messages in PostgreSQL (postgres://user:password@host/db) instead
                          of a Maildir under --data-dir; several servers may share one database
                          (or env ${DATABASE_URL_ENV}; see docs/team-server.md)
  --public-url <url>      the address users open behind a TLS proxy (https://mail.example.com):
                          the web UI's Origin check and Secure cookie use it (or env ${PUBLIC_URL_ENV})
  --domain <name>         domain that writes to "private" go to (default ${DEFAULT_DOMAIN})
  --chaos <file>          fault rules in force from the start: a JSON array of rules (or
                          {"rules": […]}), as PUT /api/v2/chaos takes (docs/chaos.md; or env
                          ${CHAOS_FILE_ENV}); change them later with test-inbox chaos
  --durability <rule>     what an acknowledgement (SMTP 250, HTTP ok) waits for, Maildir only:
                          process (default): the message survives the server's death, and a
                          power loss after the next flush (at least once a second); strict: an
                          fdatasync first, so it survives a power loss at once (or env
                          ${DURABILITY_ENV}). --store keeps PostgreSQL's own durability
  --log-level <level>     ${LOG_LEVELS.join(', ')} (default ${DEFAULT_LOG_LEVEL}); debug adds a line per
                          message on stderr: its id, sender, inbox and size, never its body
                          or a token (or env ${LOG_LEVEL_ENV})
  --api-token <token>     API token (or env ${API_TOKEN_ENV})
  --webhook-token <token> webhook token (or env ${WEBHOOK_TOKEN_ENV})
  --twilio-auth-token <token>
                          auth token of the Twilio-compatible API and of inbound
                          Twilio webhook signatures (or env ${TWILIO_AUTH_TOKEN_ENV})
  --provider-key <key>    key of the Resend, SendGrid, Postmark, Mailgun and SES APIs
                          (or env ${PROVIDER_KEY_ENV}; see docs/providers.md)
  (the four tokens above: one not given is generated into <data-dir>/${TOKENS_FILE}, mode 0600,
  and shown once on stderr)
  --max-messages <n>      keep at most n messages per inbox, oldest removed first; 0 = no limit
                          (default ${DEFAULT_MAX_MESSAGES_PER_INBOX})
  --max-age <duration>    remove messages older than this: 90s, 30m, 12h, 7d, 2w (a bare number
                          is seconds); 0 = no limit (default ${DEFAULT_MAX_AGE_MS / 86_400_000}d)
  --sweep-every <duration>
                          with --store: how often the retention sweep runs, once across all
                          processes of the database; at least ${MIN_SWEEP_EVERY_MS}ms (default ${RETENTION_SWEEP_INTERVAL_MS / 60_000}m)
  --max-recipients <n>    recipients of one SMTP message; past it RCPT gets 452 4.5.3
                          (default ${DEFAULT_MAX_RECIPIENTS})
  --max-smtp-connections <n>
  --max-http-connections <n>
                          open connections at once; past it SMTP answers 421 4.3.2 and HTTP 503
                          (default: sized from the open-file limit, ${fdCapsText()})

SMTP security (default: plain SMTP, no STARTTLS, any login or none accepted):
  --smtp-tls              offer STARTTLS, with a self-signed certificate generated into
                          <data-dir>/${SMTP_TLS_DIR}/ (or env ${SMTP_TLS_ENV}=1)
  --smtp-tls-cert <file>  use this PEM certificate (chain) instead; implies --smtp-tls
                          (or env ${SMTP_TLS_CERT_ENV})
  --smtp-tls-key <file>   its PEM private key, unencrypted (or env ${SMTP_TLS_KEY_ENV})
  --smtps-port <n>        also listen for TLS from the first byte (port-465 style) on this
                          port, 0 picks a free one (or env ${SMTPS_PORT_ENV})
  --smtp-auth <user:password>
                          require this login; other credentials get 535 and mail without
                          AUTH gets 530 (prefer env ${SMTP_AUTH_ENV}: argv is visible to
                          other users)

Drop-in APIs (docs/compat.md; default: off):
  --compat                also serve Mailpit's /api/v1, MailHog's /api/v2 and Inbucket's
                          /api/v1/mailbox on the HTTP port, so their clients work unchanged
                          but for the address (or env ${COMPAT_ENV}=1). They take no token
                          while the server listens on loopback alone; on any other address
                          HTTP Basic auth, any user, the API token as the password.
                          Also Mailosaur's API (the API token is its key), and a CONNECT
                          proxy with a local CA so Mailosaur's SDK keeps its default base
                          URL: serve prints the two variables its test process sets
  --compat-open           serve them without a token on any address too, for a container
                          (or env ${COMPAT_OPEN_ENV}=1): anyone who reaches the port reads
                          and deletes all mail; implies --compat

  -h, --help              show this help
  -v, --version           print the version

Exit codes: 0 stopped by SIGINT/SIGTERM, ${EXIT_PORT_IN_USE} a port is in use, ${EXIT_DATA_DIR_IN_USE} another server uses the data dir,
${EXIT_DATABASE_UNAVAILABLE} the --store database is unreachable or refused the login,
${EXIT_USAGE} bad command line, ${EXIT_FAILURE} other failure.

Run test-inbox --help for the other commands.
`;

/** The serve configuration from argv (after the command name) and env; `help` or `version` when asked for. */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): ServeConfig | 'help' | 'version' {
  const parsed = parseFlags(argv, SERVE_FLAGS);
  const v = parsed.values as { help?: boolean; version?: boolean };
  const [command, ...extra] = parsed.positionals;
  // `test-inbox --help` prints every command, `test-inbox serve --help` serve's options (main()).
  if (v.help && (command === undefined || command === SERVE_COMMAND)) return 'help';
  if (v.version) return 'version';
  if (command !== SERVE_COMMAND) throw new UsageError(command === undefined ? `missing command: ${SERVE_COMMAND}` : `unknown command ${JSON.stringify(command)} (the commands are ${SERVE_COMMAND}, ${TEST_COMMANDS.join(', ')}, ${MCP_COMMAND})`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  return serveConfigOf(parsed.values, env);
}

/** The rules of `serve --chaos <file>`, checked whole before anything starts: a bad file is a usage error that names the rule and field. */
async function readChaosFile(file: string): Promise<unknown[]> {
  let value: unknown;
  try {
    value = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (e) {
    fail(`--chaos ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`, EXIT_USAGE);
  }
  const rules = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? (value as { rules?: unknown }).rules : undefined;
  if (!Array.isArray(rules)) fail(`--chaos ${file}: the file holds a JSON array of rules, or {"rules": […]} (docs/chaos.md)`, EXIT_USAGE);
  try {
    await new ChaosRules(Date.now, APPLIED_SURFACES).replace(rules);
  } catch (e) {
    if (ChaosRuleError.is(e)) fail(`--chaos ${file}: ${e.message}`, EXIT_USAGE);
    throw e;
  }
  return rules;
}

/** How a generated token is named when it is shown once. */
const TOKEN_TITLES: Record<TokenName, string> = { apiToken: 'API token', webhookToken: 'webhook token', twilioAuthToken: 'Twilio auth token', providerKey: 'provider key' };

/** A second signal this soon after the first is the same interrupt delivered twice (see stop()). */
const REPEAT_SIGNAL_GRACE_MS = 2_000;

/** The tokens this process knows: every line on stderr has them redacted (the one-time display of generated tokens aside). */
const knownSecrets: string[] = [];

/** The password of a database URL, as given and percent-decoded, so no log line shows it. */
function databasePassword(url: string): string[] {
  try {
    const p = new URL(url).password;
    return p ? [p, decodeURIComponent(p)] : [];
  } catch {
    return [];
  }
}

/** The serve command's --log-level; lines past it are not written (the server drops its own first). */
let stderrLevel: LogLevel = DEFAULT_LOG_LEVEL;

function stderrLog(level: LogLevel, msg: string): void {
  if (!logsAt(stderrLevel, level)) return;
  process.stderr.write(`${new Date().toISOString()} ${level} ${redact(msg, knownSecrets)}\n`);
}

function fail(message: string, code: number): never {
  process.stderr.write(`test-inbox: ${redact(message, knownSecrets)}\n`);
  process.exit(code);
}

/** Where the server that holds the data dir says it listens (its server.json), to name it when a second start is refused. */
async function servedAt(dataDir: string): Promise<string> {
  const sf = await readServerFile(path.join(dataDir, SERVER_FILE), (f) => fs.readFile(f, 'utf8'));
  return ServerFileProblem.is(sf) ? '' : `. It serves ${sf.http} (SMTP ${sf.smtp}): the test commands, the library and the editor attach to it`;
}

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === MCP_COMMAND) {
    process.exitCode = await runMcpCommand(argv.slice(1), { stdout: process.stdout, stderr: process.stderr }, VERSION);
    return;
  }
  if (isTestCommand(argv[0])) {
    process.exitCode = await runTestCommand(argv, {
      stdout: process.stdout,
      stderr: process.stderr,
      // Created only when read (totp's secret): an unread stdin stream is never opened.
      get stdin() {
        return process.stdin;
      },
    });
    return;
  }
  const config = readServeConfig(argv);
  if (config === 'help') {
    process.stdout.write(argv.includes(SERVE_COMMAND) ? USAGE : OVERVIEW);
    return;
  }
  if (config === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  await serve(config);
}

/** The serve command's configuration, or help or version; a usage error exits EXIT_USAGE with the usage line. */
function readServeConfig(argv: string[]): ServeConfig | 'help' | 'version' {
  try {
    return parseServeArgs(argv);
  } catch (e) {
    if (UsageError.is(e)) {
      const usage = argv.includes(SERVE_COMMAND) ? `${USAGE.slice(0, USAGE.indexOf('\n'))}\nRun test-inbox ${SERVE_COMMAND} --help for the options.` : `${OVERVIEW.slice(0, OVERVIEW.indexOf('\n'))}\nRun test-inbox --help for the commands.`;
      fail(`${e.message}\n${usage}`, EXIT_USAGE);
    }
    throw e;
  }
}

/** `test-inbox serve`: prepares the data dir, starts the server, saves its tokens, then says where it listens. */
async function serve(config: ServeConfig): Promise<void> {
  stderrLevel = config.logLevel;
  const chaosRules = config.chaosFile === undefined ? undefined : await readChaosFile(config.chaosFile);
  knownSecrets.push(...secretForms([config.apiToken, config.webhookToken, config.twilioAuthToken, config.providerKey]));
  if (config.databaseUrl !== undefined) knownSecrets.push(...databasePassword(config.databaseUrl));
  // Before tokens.json is read: a data dir of an older layout may hold a domain directory by that name.
  try {
    await prepareDataDirLocked(config.dataDir, stderrLog);
  } catch (e) {
    if (StoreError.is(e, 'unsafe')) fail(e.message, EXIT_FAILURE);
    fail(`cannot prepare the data dir ${config.dataDir}: ${(e as Error).message}`, EXIT_FAILURE);
  }

  // Generated tokens are saved and shown only once the server has started: a start that
  // fails (a port in use, the data dir in use) leaves no new token behind and prints none.
  let tokens;
  try {
    tokens = await resolveTokens(config.dataDir, { apiToken: config.apiToken, webhookToken: config.webhookToken, twilioAuthToken: config.twilioAuthToken, providerKey: config.providerKey });
  } catch (e) {
    if (TokensError.is(e)) fail(e.message, EXIT_FAILURE);
    throw e;
  }
  knownSecrets.push(...secretForms([tokens.apiToken, tokens.webhookToken, tokens.twilioAuthToken, tokens.providerKey]));

  const server = await startServer(config, tokens, chaosRules);
  try {
    await tokens.save();
  } catch (e) {
    await server.close().catch(() => undefined);
    fail((e as Error).message, EXIT_FAILURE);
  }
  if (config.compat?.open) {
    stderrLog('warn', `--compat-open: the drop-in APIs (Mailpit, MailHog, Inbucket) answer without a token on ${config.host}: anyone who reaches port ${server.httpPort} reads and deletes all mail (docs/compat.md)`);
  }
  // Shown once, when generated; never logged again.
  for (const key of tokens.generated) {
    process.stderr.write(`test-inbox: generated ${TOKEN_TITLES[key]}: ${tokens[key]} (saved in ${tokens.file})\n`);
  }
  stopOnSignals(server);
  announce(server, tokens.file);
}

/** The server started with the configuration and tokens; a start that fails exits with its code (port in use, data dir in use, database). */
async function startServer(config: ServeConfig, tokens: Awaited<ReturnType<typeof resolveTokens>>, chaosRules: unknown[] | undefined): Promise<InboxServer> {
  try {
    // ServeConfig is the server's options but for the tokens (resolved by now), the fault rules (read from chaosFile) and the log.
    const { chaosFile: _chaosFile, ...options } = config;
    return await startInboxServer({
      ...options,
      apiToken: tokens.apiToken,
      webhookToken: tokens.webhookToken,
      twilioAuthToken: tokens.twilioAuthToken,
      providerKey: tokens.providerKey,
      log: stderrLog,
      ...(chaosRules !== undefined ? { chaosRules } : {}),
    });
  } catch (e) {
    if (ServerStartError.is(e, 'port_in_use')) fail(e.message, EXIT_PORT_IN_USE);
    if (StoreError.is(e, 'locked')) fail(e.message + (await servedAt(config.dataDir)), EXIT_DATA_DIR_IN_USE);
    if (StoreError.is(e, 'db_unreachable') || StoreError.is(e, 'db_auth')) fail(e.message, EXIT_DATABASE_UNAVAILABLE);
    fail((e as Error).message, EXIT_FAILURE);
  }
}

/** Stops the server on the signals that end a process, and when the parent that forked it goes. */
function stopOnSignals(server: InboxServer): void {
  // A terminal's Ctrl+C reaches the whole process group: under `npx` (or any wrapper that
  // forwards signals) the server gets the same interrupt twice within milliseconds. A repeat
  // inside REPEAT_SIGNAL_GRACE_MS is that echo and is ignored; one after it is a person
  // pressing Ctrl+C again on a stop that hangs, and exits at once.
  let stoppingSince: number | undefined;
  const stop = (signal: string): void => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < REPEAT_SIGNAL_GRACE_MS) return;
      stderrLog('warn', `${signal} again: exiting without waiting`);
      process.exit(EXIT_FAILURE);
    }
    stoppingSince = Date.now();
    stderrLog('info', `${signal}: stopping`);
    server.close().then(
      () => process.exit(0),
      (e: unknown) => fail(`error while stopping: ${(e as Error).message}`, EXIT_FAILURE),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // Windows consoles: Ctrl+Break is SIGBREAK, and closing the console window is SIGHUP (Windows
  // then ends the process within seconds; the store's close fits in that). Ctrl+C is SIGINT there too.
  // Only there: on POSIX a hangup keeps its meaning (nohup ignores it).
  if (process.platform === 'win32') {
    process.on('SIGBREAK', () => stop('SIGBREAK'));
    process.on('SIGHUP', () => stop('SIGHUP'));
  }
  // Forked with an IPC channel (the extension does this): the channel closes when the parent
  // dies, even by SIGKILL, so the server never outlives the window that started it.
  if (process.send) process.on('disconnect', () => stop('parent process gone'));
}

/** The ready line on stdout (the process contract), and the compat proxy's two variables on stderr. */
function announce(server: InboxServer, tokensFile: string): void {
  const smtpHost = hostForUrl(server.smtpHost);
  process.stdout.write(
    formatReadyLine({
      http: server.httpUrl,
      smtp: { host: smtpHost, port: server.smtpPort },
      ...(server.smtpsPort !== undefined ? { smtps: { host: smtpHost, port: server.smtpsPort } } : {}),
      ...(server.reachable !== undefined ? { reachable: server.reachable } : {}),
      ...(server.compatCaFile !== undefined ? { ca: server.compatCaFile } : {}),
    }) + '\n',
  );
  // The two variables a Mailosaur suite sets, for its test process only (docs/compat.md).
  if (server.compatCaFile !== undefined) {
    process.stderr.write(`compat: for a Mailosaur suite, set in the test process only (and MAILOSAUR_API_KEY to the API token: --api-token, or "apiToken" in ${tokensFile}):\n  https_proxy=http://127.0.0.1:${server.httpPort}\n  NODE_EXTRA_CA_CERTS=${server.compatCaFile}\n`);
  }
}

if (isMimeWorker()) {
  // A MIME worker thread of this bundle's server, started through dist/mimeWorker.js (esbuild.mjs).
  serveMimeJobs();
} else if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => fail(`unexpected error: ${(e as Error).stack ?? String(e)}`, EXIT_FAILURE));
}
