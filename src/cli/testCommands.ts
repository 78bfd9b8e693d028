// The CLI's commands for tests (`test-inbox code|link|totp|send-sms|send-mail|clear|provider-settings`): each
// reads its flags, calls the library (src/testing/) and prints only the answer on stdout, so that
// `CODE=$(test-inbox code joe --since now)` works; messages go to stderr. src/cli/cli.ts
// dispatches here.
import { type FlagSpec, parseFlags, UsageError } from '../shared/args';
import { API_TOKEN_ENV, DATA_DIR_ENV, DEFAULT_DOMAIN, EXIT_USAGE, LOCAL_TWILIO_ACCOUNT_SID, PROVIDER_KEY_ENV, TWILIO_AUTH_TOKEN_ENV } from '../shared/contract';
import { PROVIDERS, providerEnv, type ProviderId, providerSettingsText } from '../shared/providerSettings';
import { inboxLabel, PRIVATE_DOMAIN } from '../core/ids';
import { DOMAIN_ENV, SERVER_ENV, SMTP_ENV, splitInbox } from '../api/connection';
import { connect, connectionDomain } from '../api/node/connect';
import { timeoutMs, toTestInboxError } from '../testing/connection';
import { clearInbox, sendMail, sendSms, totp, waitForCode, waitForLink } from '../testing/index';
import { chaosCommand, CHAOS_FLAGS, CHAOS_USAGE } from './chaosCommand';
import { type ConnectionOptions, type LinkKindOption, TestInboxError, type TestInboxErrorCode } from '../testing/types';

/** Nothing arrived before the wait ended. */
export const EXIT_TIMEOUT = 1;
/** The server cannot be reached, failed, or lacks what the command needs (sysexits EX_UNAVAILABLE). */
export const EXIT_UNAVAILABLE = 69;
/** No API token, or one the server refuses (sysexits EX_NOPERM). */
export const EXIT_NO_PERMISSION = 77;

const EXIT_BY_CODE: Record<TestInboxErrorCode, number> = {
  timeout: EXIT_TIMEOUT,
  bad_input: EXIT_USAGE,
  unauthorized: EXIT_NO_PERMISSION,
  unreachable: EXIT_UNAVAILABLE,
  unsupported: EXIT_UNAVAILABLE,
  server: EXIT_UNAVAILABLE,
  cancelled: EXIT_UNAVAILABLE,
};

const CONNECTION_FLAGS = {
  server: { type: 'string' },
  token: { type: 'string' },
  domain: { type: 'string' },
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies FlagSpec;

const CONNECTION_HELP = `Server options (each with an environment twin):
  --server <url>        Test Inbox server or hosted service (${SERVER_ENV}; default: the
                        running local server of the data dir, else http://127.0.0.1:2580)
  --token <token>       API token (${API_TOKEN_ENV}; default: the data dir's tokens.json, for a
                        server on this machine). Prefer the variable: argv is visible to others.
  --domain <name>       domain of the inbox (${DOMAIN_ENV}; default private)
  --data-dir <path>     the local server's data dir (${DATA_DIR_ENV})
  --json                print the whole answer as JSON`;

/** What a command answers: `text` on stdout (the answer alone), or with --json `json`; `message` (what it did) on stderr. */
interface Outcome {
  text?: string;
  json: unknown;
  message?: string;
}

interface Command {
  usage: string;
  flags: FlagSpec;
  /** Positional arguments: their names, in order; required unless named in `optional`. */
  args: string[];
  optional?: string[];
  run(args: string[], v: Record<string, string | boolean | undefined>, conn: ConnectionOptions, io: Io): Promise<Outcome>;
}

/** The TOTP secret's environment twin: argv is visible to other users of the machine, the environment and stdin are not. */
const TOTP_SECRET_ENV = 'TEST_INBOX_TOTP_SECRET';

const WAIT_FLAGS = { since: { type: 'string' }, wait: { type: 'string' }, delete: { type: 'boolean' } } as const satisfies FlagSpec;
const WAIT_HELP = `  --since now|<ms>|<id> only messages after this: now, a time in ms, or a message id
                        (default: every message counts)
  --wait <duration>     how long to wait, e.g. 30s or 2m (default 60s)
  --delete              delete the message once read`;

const COMMANDS: Record<string, Command> = {
  code: {
    usage: `Usage: test-inbox code <inbox>[@domain] [--since now|<id>] [--wait 60s] [options]

Prints the one-time code of the newest message of the inbox after --since, waiting for it.
An SMS inbox is its phone number: +15555550100 (or 15555550100).
${WAIT_HELP}`,
    flags: WAIT_FLAGS,
    args: ['inbox'],
    run: async ([inbox], v, conn) => {
      const r = await waitForCode(inbox, { ...conn, since: v.since as string | undefined, timeout: waitOf(v), delete: v.delete === true });
      return { text: r.code, json: r };
    },
  },
  link: {
    usage: `Usage: test-inbox link <inbox>[@domain] [--kind verify|reset|login|any] [--since now|<id>] [--wait 60s] [options]

Prints the verification (or reset, or sign-in) link of the newest such message after --since.
  --kind <kind>         verify, reset, login or any (default any)
${WAIT_HELP}`,
    flags: { ...WAIT_FLAGS, kind: { type: 'string' } },
    args: ['inbox'],
    run: async ([inbox], v, conn) => {
      const r = await waitForLink(inbox, { ...conn, since: v.since as string | undefined, timeout: waitOf(v), delete: v.delete === true, kind: v.kind as LinkKindOption | undefined });
      return { text: r.url, json: r };
    },
  },
  totp: {
    usage: `Usage: test-inbox totp [<secret> | -] [--digits 6] [--algorithm SHA1] [--period 30] [--json]

Prints the TOTP code an authenticator app shows now for a base32 secret or an otpauth:// URI.
Computed here; no server is asked. The secret comes from:
  <secret>              the argument, where other users of this machine can read it (ps);
                        quote a URI: it holds & and ?
  -                     standard input, its first line: printf '%s\\n' "$SECRET" | test-inbox totp -
  (no argument)         env ${TOTP_SECRET_ENV} (CI secrets land there), else standard input
                        when it is not a terminal
--json prints the library's answer: {"code":"123456","secondsLeft":17}.`,
    flags: { digits: { type: 'string' }, algorithm: { type: 'string' }, period: { type: 'string' } },
    args: ['secret'],
    optional: ['secret'],
    run: async ([given], v, _conn, io) => {
      const secret = await totpSecret(given, io);
      const whole = (name: string): number | undefined => {
        const s = v[name] as string | undefined;
        if (s === undefined) return undefined;
        if (!/^[0-9]{1,6}$/.test(s)) throw new UsageError(`--${name} must be a whole number (got ${JSON.stringify(s)})`);
        return Number(s);
      };
      const algorithm = (v.algorithm as string | undefined)?.toUpperCase().replace('-', '') as 'SHA1' | undefined;
      const r = totp(secret, { digits: whole('digits'), period: whole('period'), algorithm });
      return { text: r.code, json: r };
    },
  },
  'send-sms': {
    usage: `Usage: test-inbox send-sms --to <number> --body <text> [--from <number>] [options]

Sends an SMS through the server's Twilio-compatible API (auth: ${TWILIO_AUTH_TOKEN_ENV}, else
the data dir's tokens.json). It lands in the inbox of the digits of --to. Prints its SID.`,
    flags: { to: { type: 'string' }, body: { type: 'string' }, from: { type: 'string' } },
    args: [],
    run: async (_a, v, conn) => {
      const r = await sendSms({ ...conn, to: required(v, 'to'), body: required(v, 'body'), from: v.from as string | undefined });
      return { text: r.sid, json: r };
    },
  },
  'send-mail': {
    usage: `Usage: test-inbox send-mail --to <address> [--from <address>] [--subject <s>] [--text <t>] [--html <h>] [--smtp host:port] [options]

Sends an email over SMTP to a Test Inbox server (--smtp or ${SMTP_ENV}; default: the running
local server's SMTP port, else 127.0.0.1:2525); to a hosted service, injects it through the API.
With --smtp (or ${SMTP_ENV}) and a full address (name@domain) it needs no HTTP server or token.
Prints the Message-ID (SMTP) or the message id (inject).`,
    flags: { to: { type: 'string' }, from: { type: 'string' }, subject: { type: 'string' }, text: { type: 'string' }, html: { type: 'string' }, smtp: { type: 'string' } },
    args: [],
    run: async (_a, v, conn) => {
      const r = await sendMail({
        ...conn,
        to: required(v, 'to'),
        from: v.from as string | undefined,
        subject: v.subject as string | undefined,
        text: v.text as string | undefined,
        html: v.html as string | undefined,
        smtp: v.smtp as string | undefined,
      });
      return { text: r.id, json: r };
    },
  },
  clear: {
    usage: `Usage: test-inbox clear <inbox>[@domain] [options]

Deletes every message of the inbox and says how many on stderr; --json prints {"count": n}
on stdout.`,
    flags: {},
    args: ['inbox'],
    run: async ([inbox], _v, conn, io) => {
      const count = await clearInbox(inbox, conn);
      const where = splitInbox(inbox, connectionDomain(conn, io.env ?? process.env));
      return { json: { count }, message: `deleted ${count} message${count === 1 ? '' : 's'} of ${inboxLabel(where.inbox, where.domain)}` };
    },
  },
  chaos: {
    usage: CHAOS_USAGE,
    flags: CHAOS_FLAGS,
    args: ['action', 'rule'],
    optional: ['action', 'rule'],
    run: ([action, rule], v, conn, io) => chaosCommand(action, rule, v, conn, io.env ?? process.env),
  },
  'provider-settings': {
    usage: `Usage: test-inbox provider-settings [<provider>] [options]

Prints what an app sets to send through a provider's SDK into the local server: for each
provider (or the one named: ${PROVIDERS.map((p) => p.id).join(', ')}) its .env lines (the base
URL and the key) and, as a comment, the one line of Node SDK configuration that reads them. The
same lines as the editor's Test Inbox: Copy Provider Settings… and Copy SMS Settings. The keys
come from the data dir's tokens.json, else ${PROVIDER_KEY_ENV} and ${TWILIO_AUTH_TOKEN_ENV}.
--json prints {"<provider>": {"NAME": "value", …}, …}.`,
    flags: {},
    args: ['provider'],
    optional: ['provider'],
    run: ([provider], _v, conn, io) => providerSettings(provider, conn, io.env ?? process.env),
  },
};

/** The provider `name` (its id, any case), or a usage error naming them. */
function providerId(name: string): ProviderId {
  const p = PROVIDERS.find((x) => x.id === name.toLowerCase());
  if (!p) throw new UsageError(`unknown provider ${JSON.stringify(name)} (the providers are ${PROVIDERS.map((x) => x.id).join(', ')})`);
  return p.id;
}

/** `provider-settings`: the lines of src/shared/providerSettings.ts for the Test Inbox server the connection finds. */
async function providerSettings(provider: string | undefined, conn: ConnectionOptions, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const ids = provider === undefined ? PROVIDERS.map((p) => p.id) : [providerId(provider)];
  const c = await connect(conn, env).catch((e: unknown) => {
    throw toTestInboxError(e);
  });
  try {
    const id = await c.api.identify().catch((e: unknown) => {
      throw toTestInboxError(e);
    });
    if (id.kind !== 'test-inbox') throw new TestInboxError('unsupported', `${c.baseUrl} is not a Test Inbox server: a hosted service has no provider APIs`);
    const named = conn.domain || env[DOMAIN_ENV];
    const domain = named && named.toLowerCase() !== PRIVATE_DOMAIN ? named.toLowerCase() : (id.health.defaultDomain ?? DEFAULT_DOMAIN);
    const providerKey = c.savedTokens.providerKey ?? (env[PROVIDER_KEY_ENV] || undefined);
    const twilioAuthToken = c.savedTokens.twilioAuthToken ?? (env[TWILIO_AUTH_TOKEN_ENV] || undefined);
    const known = (p: ProviderId): boolean => (p === 'twilio' ? twilioAuthToken : providerKey) !== undefined;
    const unknownKey = (p: ProviderId): string =>
      p === 'twilio'
        ? `the Twilio auth token of ${c.baseUrl} is not known (its data dir's tokens.json has none): set ${TWILIO_AUTH_TOKEN_ENV}`
        : `the provider key of ${c.baseUrl} is not known (its data dir's tokens.json has none): set ${PROVIDER_KEY_ENV}`;
    const shown = ids.filter(known);
    if (shown.length === 0) throw new TestInboxError('unsupported', unknownKey(ids[0]));
    const input = { baseUrl: c.baseUrl, domain, providerKey, twilioAccountSid: LOCAL_TWILIO_ACCOUNT_SID, twilioAuthToken };
    const skipped = ids.filter((p) => !known(p));
    return {
      text: shown.map((p) => providerSettingsText(p, input)).join('\n').replace(/\n$/, ''),
      json: Object.fromEntries(shown.map((p) => [p, Object.fromEntries(providerEnv(p, input))])),
      ...(skipped.length > 0 ? { message: `left out ${skipped.join(', ')}: ${skipped.map(unknownKey).join('; ')}` } : {}),
    };
  } finally {
    await c.close();
  }
}

export const TEST_COMMANDS = Object.keys(COMMANDS);

/** The test commands, one line each, for the command lists of `test-inbox --help` and of each command's help. */
export const TEST_COMMANDS_LIST = `  code <inbox>          print the newest one-time code, waiting for it
  link <inbox>          print the newest verification, reset or sign-in link
  totp [<secret>|-]     print the current TOTP code of a secret or otpauth:// URI
                        (from ${TOTP_SECRET_ENV} or stdin, kept off the command line)
  send-sms              send an SMS through the Twilio-compatible API
  send-mail             send an email over SMTP
  clear <inbox>         delete every message of an inbox
  chaos add|list|remove|clear
                        failures on demand: fault rules for SMTP, the provider APIs and
                        Twilio (docs/chaos.md)
  provider-settings [<provider>]
                        print the .env lines an app sets to send through Resend, SendGrid,
                        Postmark, Mailgun, SES or Twilio into the local server
`;

/** The exit codes of the test commands. */
export const TEST_COMMANDS_EXIT_CODES = `Exit codes of the other commands: 0 ok, ${EXIT_TIMEOUT} nothing arrived in time, ${EXIT_USAGE} bad command
line or input, ${EXIT_UNAVAILABLE} the server cannot be reached or failed, ${EXIT_NO_PERMISSION} no API token or a refused one.
`;

/** The commands' overview at the end of each command's --help. */
const TEST_COMMANDS_USAGE = `Commands for tests (test-inbox <command> --help for each):
${TEST_COMMANDS_LIST}${TEST_COMMANDS_EXIT_CODES}`;

export function isTestCommand(name: string | undefined): boolean {
  return name !== undefined && Object.prototype.hasOwnProperty.call(COMMANDS, name);
}

/** `--wait`, read by the library's one timeout rule, a refusal naming the flag. */
function waitOf(v: Record<string, string | boolean | undefined>): number | undefined {
  return v.wait === undefined ? undefined : timeoutMs(v.wait as string, '--wait');
}

function required(v: Record<string, string | boolean | undefined>, name: string): string {
  const s = v[name];
  if (typeof s !== 'string' || s === '') throw new UsageError(`--${name} is required`);
  return s;
}

/** Where a command writes (and totp reads). The library reads the process's environment (the flags' twins). */
interface Io {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Standard input; absent: none (a secret must come from elsewhere). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** The environment; absent: process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The most read from standard input for a secret: an otpauth URI fits many times over. */
const MAX_STDIN_BYTES = 64 * 1024;

/** The TOTP secret: the environment, then stdin (for `-`, or no argument and stdin not a terminal), then the argument. */
async function totpSecret(given: string | undefined, io: Io): Promise<string> {
  const fromEnv = (io.env ?? process.env)[TOTP_SECRET_ENV];
  if (given !== undefined && given !== '-') return given;
  if (given === undefined && fromEnv) return fromEnv;
  if (io.stdin && (given === '-' || !io.stdin.isTTY)) {
    const text = await readFirstLine(io.stdin);
    if (text.trim() !== '') return text;
    throw new UsageError('standard input held no secret');
  }
  throw new UsageError(`missing <secret>: set ${TOTP_SECRET_ENV}, pipe it to standard input, or give it as the argument`);
}

/** The first line of a stream (up to MAX_STDIN_BYTES), without its line break. */
async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    const nl = text.search(/\r?\n/);
    if (nl >= 0) return text.slice(0, nl);
    if (text.length > MAX_STDIN_BYTES) throw new UsageError(`standard input holds more than ${MAX_STDIN_BYTES} bytes before its first line break; give the secret alone`);
  }
  return text;
}

/** Runs `argv` (the command first); resolves the exit code. */
export async function runTestCommand(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  const cmd = COMMANDS[name];
  const usageFail = (message: string): number => {
    io.stderr.write(`test-inbox ${name}: ${message}\n${cmd.usage.slice(0, cmd.usage.indexOf('\n'))}\nRun test-inbox ${name} --help for the options.\n`);
    return EXIT_USAGE;
  };
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseFlags(rest, { ...CONNECTION_FLAGS, ...cmd.flags }));
    if (values.help) {
      io.stdout.write(`${cmd.usage}\n\n${name === 'totp' ? '' : `${CONNECTION_HELP}\n\n`}${TEST_COMMANDS_USAGE}`);
      return 0;
    }
    if (positionals.length < cmd.args.length - (cmd.optional?.length ?? 0)) throw new UsageError(`missing ${cmd.args.slice(positionals.length).map((a) => `<${a}>`).join(' ')}`);
    if (positionals.length > cmd.args.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[cmd.args.length])}`);
    for (const flag of ['server', 'token', 'domain', 'data-dir'] as const) {
      if (values[flag] === '') throw new UsageError(`--${flag} must not be empty`);
    }
  } catch (e) {
    if (UsageError.is(e)) return usageFail(e.message);
    throw e;
  }
  const conn: ConnectionOptions = {
    server: values.server as string | undefined,
    token: values.token as string | undefined,
    domain: values.domain as string | undefined,
    dataDir: values['data-dir'] as string | undefined,
  };
  try {
    const r = await cmd.run(positionals, values, conn, io);
    if (values.json) io.stdout.write(`${JSON.stringify(r.json)}\n`);
    else {
      if (r.text !== undefined) io.stdout.write(`${r.text}\n`);
      if (r.message !== undefined) io.stderr.write(`test-inbox ${name}: ${r.message}\n`);
    }
    return 0;
  } catch (e) {
    if (UsageError.is(e)) return usageFail(e.message);
    if (TestInboxError.is(e)) {
      if (e.code === 'bad_input') return usageFail(e.message);
      io.stderr.write(`test-inbox ${name}: ${e.message}\n`);
      return EXIT_BY_CODE[e.code];
    }
    throw e;
  }
}
