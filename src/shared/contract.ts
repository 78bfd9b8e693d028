// The process contract of `test-inbox serve`: everything that whoever starts the server
// (the extension, `npm start`, the tests, the benches) shares with the CLI about running it —
// the flags, the environment, the defaults, the ready line, the tokens file, the server file
// (proof of identity), the exit codes.
// Imports nothing but the proof primitives of src/core and Node's fs, path and os, on purpose: the server, the CLI,
// the test library and the extension all import it, and bundling it into the extension pulls nothing of the server in.
import { promises as fsp, readdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HEALTH_CHALLENGE_PARAM, hmacHex, sameProof } from '../core/proof';
import { modesApply } from './portableFs';
import { writePrivateFile } from './privateFile';
import { codedError, type CodedError } from '../core/errors';


// ---- Defaults ---------------------------------------------------------------------------

/** Interface bound by default, and the only one the extension uses: the server is for this machine only. */
export const DEFAULT_HOST = '127.0.0.1';
/** Default HTTP port: fixed, so that a second VS Code window finds a server already running. */
export const DEFAULT_HTTP_PORT = 2580;
/** Default SMTP port: the usual unprivileged test SMTP port. */
export const DEFAULT_SMTP_PORT = 2525;
/** The environment the data folder's default reads (`XDG_DATA_HOME`, `LOCALAPPDATA`). */
export type DataDirEnv = Record<string, string | undefined>;

/** The folder name under the platform's per-user data folder. */
const DATA_DIR_NAME = 'test-inbox';

/** Windows paths for `win32`, POSIX paths for the rest: the rule runs for any platform on any machine (the unit tests). */
const pathsOf = (platform: NodeJS.Platform): path.PlatformPath => (platform === 'win32' ? path.win32 : path.posix);

/** `$XDG_DATA_HOME/test-inbox` when XDG_DATA_HOME is set and absolute (on every platform), else undefined. */
function xdgDataDir(env: DataDirEnv, platform: NodeJS.Platform): string | undefined {
  const p = pathsOf(platform);
  const xdg = env.XDG_DATA_HOME;
  return xdg && p.isAbsolute(xdg) ? p.join(xdg, DATA_DIR_NAME) : undefined;
}

/**
 * The data folder's default by the platform's convention (pure: no file-system access):
 * `$XDG_DATA_HOME/test-inbox` when XDG_DATA_HOME is set and absolute, on every platform; else
 * `%LOCALAPPDATA%\test-inbox` on Windows (`<home>\AppData\Local\test-inbox` when LOCALAPPDATA
 * is unset or relative), `~/Library/Application Support/test-inbox` on macOS, and
 * `~/.local/share/test-inbox` elsewhere (XDG). Where no folder is given, use
 * resolveDefaultDataDir, which also keeps an earlier version's folder in use.
 */
export function defaultDataDir(env: DataDirEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = os.homedir()): string {
  const xdg = xdgDataDir(env, platform);
  if (xdg !== undefined) return xdg;
  const p = pathsOf(platform);
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA;
    return p.join(local && p.isAbsolute(local) ? local : p.join(home, 'AppData', 'Local'), DATA_DIR_NAME);
  }
  if (platform === 'darwin') return p.join(home, 'Library', 'Application Support', DATA_DIR_NAME);
  return p.join(home, '.local', 'share', DATA_DIR_NAME);
}

/**
 * The default of earlier versions where it differs from defaultDataDir (pure): up to this
 * change, every platform defaulted to the XDG path, `~/.local/share/test-inbox`. Undefined on
 * Linux and wherever XDG_DATA_HOME is set (the default did not move there).
 */
export function legacyDataDir(env: DataDirEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = os.homedir()): string | undefined {
  if (xdgDataDir(env, platform) !== undefined) return undefined;
  const p = pathsOf(platform);
  const legacy = p.join(home, '.local', 'share', DATA_DIR_NAME);
  return legacy === defaultDataDir(env, platform, home) ? undefined : legacy;
}

/** Whether `dir` exists and holds anything (a folder made empty, by `mkdir` or by hand, holds no data). */
export function holdsData(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/**
 * The data folder when none is given (`--data-dir`, TEST_INBOX_DATA_DIR, the editor's
 * setting): defaultDataDir, unless it holds no data and the earlier versions' default
 * (legacyDataDir) does; then that one, so an upgrade never leaves mail, tokens or a running
 * server behind. One per user on a machine: `test-inbox serve`, the test commands, the library,
 * MCP and the extension all call this, so a server started in a terminal and the editor's
 * serve the same mail (whichever starts first, the other attaches by its proof). Reads two
 * folders' listings at most; the paths come from the pure functions above.
 */
export function resolveDefaultDataDir(env: DataDirEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = os.homedir()): string {
  const dir = defaultDataDir(env, platform, home);
  const legacy = legacyDataDir(env, platform, home);
  return legacy !== undefined && !holdsData(dir) && holdsData(legacy) ? legacy : dir;
}

/**
 * Where a running local server's server.json is looked for when no data folder is given, in
 * order: resolveDefaultDataDir, then legacyDataDir when that is another folder. So a client of
 * this version finds a server of an earlier version still running on the old default, though
 * the new default already holds data. (resolveDefaultDataDir picks the old folder whenever the
 * new one holds nothing, so no server.json can be in the new one then.)
 */
export function discoveryDataDirs(env: DataDirEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = os.homedir()): string[] {
  const first = resolveDefaultDataDir(env, platform, home);
  const legacy = legacyDataDir(env, platform, home);
  return legacy === undefined || legacy === first ? [first] : [first, legacy];
}
/** The data dir flag's environment twin, for the test commands, the MCP server and the library. */
export const DATA_DIR_ENV = 'TEST_INBOX_DATA_DIR';
/** Default domain of `private` writes. `.test` is reserved (RFC 2606), so it never clashes with real mail. */
export const DEFAULT_DOMAIN = 'inbox.test';

// ---- Environment ------------------------------------------------------------------------

/** The API token, when not given by flag. Tokens travel in the environment, never on argv, where other users can read them. */
export const API_TOKEN_ENV = 'TEST_INBOX_API_TOKEN';
/** The webhook token, when not given by flag. */
export const WEBHOOK_TOKEN_ENV = 'TEST_INBOX_WEBHOOK_TOKEN';
/**
 * The Twilio auth token (password of the Twilio-compatible Messages API, key of the inbound
 * webhook signatures), when not given by flag. Its own token: an app's `.env` holds it, never
 * the API token that reads all mail.
 */
export const TWILIO_AUTH_TOKEN_ENV = 'TEST_INBOX_TWILIO_AUTH_TOKEN';
/**
 * The provider key (the API key the Resend, SendGrid, Postmark, Mailgun and SES routes take,
 * docs/providers.md), when not given by flag. Its own secret: it goes into apps' settings.
 */
export const PROVIDER_KEY_ENV = 'TEST_INBOX_PROVIDER_KEY';
/** The tokens' TEST_INBOX_* variables (the SMTP variables below are not tokens). */
export const SERVER_ENV_NAMES = [API_TOKEN_ENV, WEBHOOK_TOKEN_ENV, TWILIO_AUTH_TOKEN_ENV, PROVIDER_KEY_ENV] as const;

/** `--smtp-tls` when set to `1` or `true`: offer STARTTLS. */
export const SMTP_TLS_ENV = 'TEST_INBOX_SMTP_TLS';
/** `--smtp-tls-cert`: PEM certificate (chain) file. */
export const SMTP_TLS_CERT_ENV = 'TEST_INBOX_SMTP_TLS_CERT';
/** `--smtp-tls-key`: PEM private key file. */
export const SMTP_TLS_KEY_ENV = 'TEST_INBOX_SMTP_TLS_KEY';
/** `serve --http-port`'s environment twin (a container's compose file, a CI job). */
export const HTTP_PORT_ENV = 'TEST_INBOX_HTTP_PORT';
/** `serve --smtp-port`'s environment twin. */
export const SMTP_PORT_ENV = 'TEST_INBOX_SMTP_PORT';
/** `--smtps-port`: the implicit-TLS port. */
export const SMTPS_PORT_ENV = 'TEST_INBOX_SMTPS_PORT';
/** `--smtp-auth user:password`. A password belongs here rather than on argv, where other users can read it. */
export const SMTP_AUTH_ENV = 'TEST_INBOX_SMTP_AUTH';
/** Environment twin of `serve --chaos <file>`: fault rules in force from the start (docs/chaos.md). */
export const CHAOS_FILE_ENV = 'TEST_INBOX_CHAOS';
/** Environment twin of `--store`: a PostgreSQL URL keeps the messages there (the team server, docs/team-server.md). */
export const DATABASE_URL_ENV = 'TEST_INBOX_DATABASE_URL';
/** The public URL of a team server behind a TLS proxy (the web UI's Origin check and cookie). */
export const PUBLIC_URL_ENV = 'TEST_INBOX_PUBLIC_URL';
/** Environment twin of `--log-level`. */
export const LOG_LEVEL_ENV = 'TEST_INBOX_LOG_LEVEL';

// ---- Durability ---------------------------------------------------------------------------

/**
 * What an acknowledgement (SMTP 250, HTTP `status: ok`) of the Maildir store promises.
 * `process`: the message survives the server process's death (its file is in the OS before the
 * answer); a background flush makes it survive a power loss within a second. `strict`: it
 * survives a power loss at once (the answer waits for an fdatasync). The PostgreSQL store keeps
 * PostgreSQL's own durability whatever is set. docs/architecture.md, "Storage and recovery".
 */
export const DURABILITIES = ['process', 'strict'] as const;
export type Durability = (typeof DURABILITIES)[number];
/** A test inbox's mail is test data: what the peers (Mailpit) promise, and no fsync on each acknowledgement. */
export const DEFAULT_DURABILITY: Durability = 'process';
/** `--durability`. */
export const DURABILITY_ENV = 'TEST_INBOX_DURABILITY';

export function isDurability(v: unknown): v is Durability {
  return typeof v === 'string' && (DURABILITIES as readonly string[]).includes(v);
}

// ---- Drop-in APIs ---------------------------------------------------------------------------

/** `--compat`: serve Mailpit's, MailHog's, Inbucket's and Mailosaur's APIs, the CONNECT proxy and the local CA (docs/compat.md). */
export const COMPAT_ENV = 'TEST_INBOX_COMPAT';
/** `--compat-open`: the token-free drop-in APIs answer without a token on any address. */
export const COMPAT_OPEN_ENV = 'TEST_INBOX_COMPAT_OPEN';

// ---- Log levels ---------------------------------------------------------------------------

/** The server's log levels, most severe first: a level logs its own lines and those before it. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** `info`: start, stop and trouble, nothing per message. `debug` adds a line per message (its addresses, never its body). */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** True when a server logging at `threshold` writes a line of `level`. */
export function logsAt(threshold: LogLevel, level: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) <= LOG_LEVELS.indexOf(threshold);
}
/** `--allowed-hosts`: more Host names the server answers to (comma-separated), such as a LAN address or a compose service name. */
export const ALLOWED_HOSTS_ENV = 'TEST_INBOX_ALLOWED_HOSTS';

// ---- SMTP TLS files -----------------------------------------------------------------------

/**
 * Folder in the data dir holding the generated self-signed SMTP certificate. Its leading dot
 * keeps it apart from the domain folders (a domain name never starts with a dot).
 */
export const SMTP_TLS_DIR = '.tls';
/** The generated certificate (PEM, readable: clients are given it to trust). */
export const SMTP_TLS_CERT_FILE = 'smtp-cert.pem';
/** The generated private key (PEM, mode 0600). */
export const SMTP_TLS_KEY_FILE = 'smtp-key.pem';

interface ServeTokens {
  apiToken: string;
  webhookToken: string;
  /** Absent: `serve` takes it from (or generates it into) its tokens file. */
  twilioAuthToken?: string;
  /** Absent: `serve` takes it from (or generates it into) its tokens file. */
  providerKey?: string;
}

/** The environment entries that hand `serve` its tokens. */
export function tokensEnv(tokens: ServeTokens): Record<string, string> {
  const env: Record<string, string> = { [API_TOKEN_ENV]: tokens.apiToken, [WEBHOOK_TOKEN_ENV]: tokens.webhookToken };
  if (tokens.twilioAuthToken !== undefined) env[TWILIO_AUTH_TOKEN_ENV] = tokens.twilioAuthToken;
  if (tokens.providerKey !== undefined) env[PROVIDER_KEY_ENV] = tokens.providerKey;
  return env;
}

// ---- Twilio-compatible API ----------------------------------------------------------------

/** Path prefix of the Twilio-compatible REST API (Twilio's own API version segment). */
export const TWILIO_API_PREFIX = '/2010-04-01';
/**
 * The Account SID that Copy SMS Settings hands out. The server takes any `AC` + 32 hex; this
 * one is all zeros so that it can never be mistaken for a real account.
 */
export const LOCAL_TWILIO_ACCOUNT_SID = `AC${'0'.repeat(32)}`;

/** A copy of `env` without the token variables, so that `serve` uses (or generates) its tokens file. */
export function withoutTokensEnv<T extends Record<string, string | undefined>>(env: T): T {
  const out = { ...env };
  for (const k of SERVER_ENV_NAMES) delete out[k];
  return out;
}

// ---- Flags ------------------------------------------------------------------------------

/** The command that runs the server. */
export const SERVE_COMMAND = 'serve';

/** What `serve` can be told on its command line; an absent field leaves the CLI's default. */
interface ServeFlags {
  host?: string;
  /** 0 picks a free port. */
  httpPort?: number;
  /** 0 picks a free port. */
  smtpPort?: number;
  dataDir?: string;
  domain?: string;
  /** Per inbox; 0 = no limit. */
  maxMessages?: number;
  /** Retention by age in seconds; 0 = no limit. */
  maxAgeSeconds?: number;
  /** Offer STARTTLS with the data folder's self-signed certificate. */
  smtpTls?: boolean;
  logLevel?: LogLevel;
  /** More Host names the HTTP server answers to (`--allowed-hosts`). */
  allowedHosts?: string[];
  durability?: Durability;
  /** Serve the drop-in APIs (`--compat`, docs/compat.md). */
  compat?: boolean;
}

/** argv for the CLI (the command and its flags) from the options; the CLI's parseServeArgs reads it back. */
export function serveArgs(o: ServeFlags): string[] {
  const args = [SERVE_COMMAND];
  const add = (flag: string, v: string | number | undefined): void => {
    if (v !== undefined) args.push(`--${flag}`, String(v));
  };
  add('host', o.host);
  add('http-port', o.httpPort);
  add('smtp-port', o.smtpPort);
  add('data-dir', o.dataDir);
  add('domain', o.domain);
  add('max-messages', o.maxMessages);
  // A bare number is seconds to --max-age.
  add('max-age', o.maxAgeSeconds);
  if (o.smtpTls) args.push('--smtp-tls');
  add('log-level', o.logLevel);
  add('durability', o.durability);
  if (o.compat) args.push('--compat');
  if (o.allowedHosts !== undefined && o.allowedHosts.length > 0) add('allowed-hosts', o.allowedHosts.join(','));
  return args;
}

// ---- Ready line -------------------------------------------------------------------------

/**
 * Where a started server listens. On stdout it is one JSON line,
 * `{"http":"http://HOST:PORT","smtp":"HOST:PORT"}`, printed once both ports listen; every
 * other output of the server goes to stderr. An IPv6 host is in brackets in both. `http` and
 * `smtp` are always its first keys, each a string, and open from this machine: for a wildcard
 * bind (`--host 0.0.0.0`, `::`) they name a loopback address. With an implicit-TLS port it
 * also has `"smtps":"HOST:PORT"`; for a wildcard bind it ends with `"reachable":[URL, …]`, the
 * HTTP URL at each of the machine's network addresses (what other machines open). Readers
 * ignore keys they do not know.
 */
export interface ReadyLine {
  /** Base URL of the HTTP API, no trailing slash. */
  http: string;
  smtp: { host: string; port: number };
  /** The implicit-TLS SMTP listener (`--smtps-port`), when there is one. */
  smtps?: { host: string; port: number };
  /** For a wildcard bind: the HTTP API's URL at each network address of the machine. */
  reachable?: string[];
  /** With `--compat` (not on a team server): the absolute path of the CONNECT proxy's CA certificate (PEM; never the key). */
  ca?: string;
}

/** The ready line, without its newline. */
export function formatReadyLine(r: ReadyLine): string {
  return JSON.stringify({
    http: r.http,
    smtp: `${r.smtp.host}:${r.smtp.port}`,
    ...(r.smtps ? { smtps: `${r.smtps.host}:${r.smtps.port}` } : {}),
    ...(r.reachable !== undefined ? { reachable: r.reachable } : {}),
    ...(r.ca !== undefined ? { ca: r.ca } : {}),
  });
}

/** The ready line's addresses, or undefined when `line` is not a ready line. */
export function parseReadyLine(line: string): ReadyLine | undefined {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object') return undefined;
  const { http, smtp, smtps, reachable, ca } = v as { http?: unknown; smtp?: unknown; smtps?: unknown; reachable?: unknown; ca?: unknown };
  if (typeof http !== 'string' || typeof smtp !== 'string') return undefined;
  const m = /^(.+):(\d{1,5})$/.exec(smtp);
  if (!m || !/^https?:\/\/[^/]/.test(http)) return undefined;
  const ready: ReadyLine = { http: http.replace(/\/+$/, ''), smtp: { host: m[1], port: Number(m[2]) } };
  const t = typeof smtps === 'string' ? /^(.+):(\d{1,5})$/.exec(smtps) : null;
  if (t) ready.smtps = { host: t[1], port: Number(t[2]) };
  if (Array.isArray(reachable)) ready.reachable = reachable.filter((u): u is string => typeof u === 'string' && /^https?:\/\/[^/]/.test(u));
  if (typeof ca === 'string' && ca !== '') ready.ca = ca;
  return ready;
}

// ---- Tokens -----------------------------------------------------------------------------

/** File in the data dir holding the tokens `serve` generated (mode 0600). */
export const TOKENS_FILE = 'tokens.json';
/** 24 random bytes (192 bits, 32 base64url characters): unguessable, and short enough to paste. */
const TOKEN_BYTES = 24;

/** A new random token. Web Crypto is a global in Node 20 (and in the extension host), so no import is needed. */
export function generateToken(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(TOKEN_BYTES));
  return Buffer.from(bytes).toString('base64url');
}

/**
 * A new provider key, shaped like a SendGrid API key (`SG.` + 22 + `.` + 43 base64url
 * characters): @sendgrid/mail warns about a key that does not start with `SG.`, and no other
 * provider's SDK checks the shape of its key (docs/providers.md).
 */
export function generateProviderKey(): string {
  const part = (n: number): string => Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(n))).toString('base64url');
  return `SG.${part(16).slice(0, 22)}.${part(32).slice(0, 43)}`;
}

/** The tokens a tokens file holds; any may be absent (then `serve` generates it). */
export interface SavedTokens {
  apiToken?: string;
  webhookToken?: string;
  /** The Twilio auth token (see TWILIO_AUTH_TOKEN_ENV). */
  twilioAuthToken?: string;
  /** The provider key (see PROVIDER_KEY_ENV). */
  providerKey?: string;
}

type TokensFileProblemCode = 'tokens_file_missing' | 'tokens_file_unreadable' | 'tokens_file_invalid';

/** Why a tokens file gave no tokens. Returned, not thrown: each caller decides what it means. */
export const TokensFileProblem = codedError<TokensFileProblemCode>('TokensFileProblem');
export type TokensFileProblem = CodedError<TokensFileProblemCode>;

/**
 * The tokens in a tokens file's text. One leniency for every reader: a JSON object whose
 * `apiToken`, `webhookToken`, `twilioAuthToken` and `providerKey` are each absent or a non-empty string; other keys are ignored;
 * anything else is tokens_file_invalid (and `serve` refuses to overwrite it).
 */
export function parseTokensFile(text: string, file = TOKENS_FILE): SavedTokens | TokensFileProblem {
  const obj = jsonObject(text);
  const fieldOk = (x: unknown): boolean => x === undefined || (typeof x === 'string' && x.length > 0);
  if (!obj || !fieldOk(obj.apiToken) || !fieldOk(obj.webhookToken) || !fieldOk(obj.twilioAuthToken) || !fieldOk(obj.providerKey)) {
    return new TokensFileProblem('tokens_file_invalid', `${file} is not a JSON object {"apiToken": "…", "webhookToken": "…"}; fix or remove it`);
  }
  const out: SavedTokens = { apiToken: obj.apiToken as string | undefined, webhookToken: obj.webhookToken as string | undefined };
  if (obj.twilioAuthToken !== undefined) out.twilioAuthToken = obj.twilioAuthToken as string;
  if (obj.providerKey !== undefined) out.providerKey = obj.providerKey as string;
  return out;
}

/**
 * The one token-separation rule: each credential opens only its own routes, so none may be
 * equal to another that opens more. Undefined when the given tokens keep apart, else why not.
 */
export function tokenSeparationProblem(t: SavedTokens): string | undefined {
  if (t.apiToken !== undefined && t.apiToken === t.webhookToken) return 'the API token and the webhook token must differ: the webhook token is shared with third parties, the API token is not';
  if (t.twilioAuthToken !== undefined && t.twilioAuthToken === t.apiToken) return "the Twilio auth token must differ from the API token: it goes into apps' settings, the API token reads all mail";
  if (t.providerKey !== undefined && [t.apiToken, t.webhookToken, t.twilioAuthToken].includes(t.providerKey)) {
    return "the provider key must differ from the API, webhook and Twilio tokens: it goes into apps' settings and opens only the email provider routes";
  }
  return undefined;
}

/**
 * The one writer of a tokens file (the server's generated tokens, the extension's before it
 * starts the server): its four fields as JSON, owner-only. `exclusive`: only when no tokens file
 * is there (EEXIST otherwise), never over one that appeared meanwhile.
 */
export async function writeTokensFile(file: string, tokens: SavedTokens, options: { exclusive?: boolean } = {}): Promise<void> {
  const problem = tokenSeparationProblem(tokens);
  if (problem !== undefined) throw new Error(`refusing to write ${file}: ${problem}`);
  await writePrivateFile(file, JSON.stringify({ apiToken: tokens.apiToken, webhookToken: tokens.webhookToken, twilioAuthToken: tokens.twilioAuthToken, providerKey: tokens.providerKey }, null, 2) + '\n', options);
}

/**
 * Reads and parses the tokens file at `file` (`<data-dir>/TOKENS_FILE`) through the caller's
 * `readFile`; a file that does not exist is tokens_file_missing, another read error
 * tokens_file_unreadable.
 */
export async function readTokensFile(file: string, readFile: (file: string) => Promise<string>): Promise<SavedTokens | TokensFileProblem> {
  return readContractFile(file, readFile, parseTokensFile, (missing, message, cause) =>
    new TokensFileProblem(missing ? 'tokens_file_missing' : 'tokens_file_unreadable', message, { cause }),
  );
}

/** The JSON object in `text`, or undefined for anything else (bad JSON, an array, a scalar). */
function jsonObject(text: string): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * Reads a file of the data dir through the caller's `readFile` and parses it; a read error
 * becomes the file's own problem type (`missing` when the file does not exist).
 */
async function readContractFile<T, P>(
  file: string,
  readFile: (file: string) => Promise<string>,
  parse: (text: string, file: string) => T | P,
  problem: (missing: boolean, message: string, cause: unknown) => P,
): Promise<T | P> {
  let text: string;
  try {
    text = await readFile(file);
  } catch (e) {
    if ((e as { code?: unknown }).code === 'ENOENT') return problem(true, `${file} does not exist`, e);
    return problem(false, `cannot read ${file}: ${(e as Error).message}`, e);
  }
  return parse(text, file);
}

// ---- Lock ------------------------------------------------------------------------------

/**
 * Lock file inside the data dir, holding the pid of the server using it (`<pid>\n`, the format
 * every release reads); the leading dot keeps it apart from domain directories. Its modification
 * time is the holder's heartbeat (LOCK_HEARTBEAT_MS).
 */
export const LOCK_FILE = '.lock';
/** How often a running server sets its lock file's time to now: the proof, beside its pid, that it still holds the lock. */
export const LOCK_HEARTBEAT_MS = 5_000;
/**
 * A lock whose time is older than this was not kept by a live server, even if a process of its
 * pid runs: Windows reuses a pid within seconds, so after a crash the pid alone may name an
 * editor or a shell. Six heartbeats: a server whose event loop is busy for a while still keeps it.
 */
export const LOCK_STALE_MS = 30_000;
/** How long the lock check waits for the holder's health proof. */
const LOCK_PROOF_TIMEOUT_MS = 1_500;

/** What a data dir's lock file says: its holder's pid and the time of its last heartbeat. */
interface LockHolder {
  pid: number;
  /** The lock file's modification time (ms since the epoch). */
  beatMs: number;
}

/** The lock file's holder, or undefined (no lock, or not a pid in it). */
export async function readLockHolder(dir: string): Promise<LockHolder | undefined> {
  const file = path.join(dir, LOCK_FILE);
  try {
    const [text, st] = await Promise.all([fsp.readFile(file, 'utf8'), fsp.stat(file)]);
    const pid = Number(text.trim());
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, beatMs: st.mtimeMs } : undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * The one rule for whether a data dir's lock is held by a live server (the store's lock, the
 * extension's folder move): its pid must run, and then either
 *   - the server file names the same pid and its server answers the health proof: live; the
 *     port refuses the connection, or something answers with a wrong proof: that server is gone
 *     (a server answers from the moment it writes the file until it removes it), whatever runs
 *     under its pid now;
 *   - otherwise (no server file yet: a server still starting; or a check that failed another
 *     way, which proves nothing) the lock's heartbeat decides: refreshed within LOCK_STALE_MS is
 *     live.
 * `now` and `alive` are parameters for tests.
 */
export async function lockHolderLive(
  dir: string,
  holder: LockHolder,
  now: number = Date.now(),
  alive: (pid: number) => boolean = processAlive,
): Promise<boolean> {
  if (!alive(holder.pid)) return false;
  const server = await readServerFile(path.join(dir, SERVER_FILE), (f) => fsp.readFile(f, 'utf8'));
  if (!ServerFileProblem.is(server) && server.pid === holder.pid) {
    const check = await checkHealthProof(server.http, server.key, AbortSignal.timeout(LOCK_PROOF_TIMEOUT_MS));
    if (check.proven) return true;
    // Gone for sure only when something else answered (a wrong proof) or nothing listens (the
    // port refuses). Any other failure (a time-out, a network layer that fails the request: a
    // firewall, a proxy, Wine's sockets) proves nothing, and the heartbeat decides.
    if (check.unanswered === undefined || check.refused) return false;
  }
  return now - holder.beatMs < LOCK_STALE_MS;
}

/** Whether a process with this id runs (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---- Ownership --------------------------------------------------------------------------

/** What ownershipProblem needs of a stat (node:fs Stats has it). */
interface OwnedEntry {
  uid: number;
  mode: number;
  isSymbolicLink(): boolean;
}

/**
 * Why the data folder or its tokens file must not be used, or undefined when it may: ssh's
 * rule for a key file. Another user owns it, or group or others can write it (then another user
 * could have put tokens there, or can swap files in), or it is a symbolic link (stat it with
 * lstat). The message names the path, its owner and its mode. `st` is the caller's stat of `p`;
 * `uid` this process's user; `nameOf` a user's name where known. Not on Windows (no modes).
 */
export function ownershipProblem(p: string, st: OwnedEntry, uid: number, nameOf: (uid: number) => string | undefined = () => undefined): string | undefined {
  const who = (id: number): string => {
    const name = nameOf(id);
    return name === undefined ? `uid ${id}` : `${name} (uid ${id})`;
  };
  const mode = `0${(st.mode & 0o777).toString(8).padStart(3, '0')}`;
  if (st.isSymbolicLink()) return `${p} is a symbolic link (owner ${who(st.uid)}); Test Inbox never follows one for its data: replace it by the folder or file itself`;
  if (st.uid !== uid) return `${p} belongs to ${who(st.uid)}, not to you (${who(uid)}), mode ${mode}; Test Inbox uses only a data folder and tokens file of your own (like ssh with a key file): chown it to yourself or choose another data folder`;
  if ((st.mode & 0o022) !== 0) {
    const writers = (st.mode & 0o020) !== 0 && (st.mode & 0o002) !== 0 ? 'group and others' : (st.mode & 0o020) !== 0 ? 'its group' : 'other users';
    return `${p} can be written by ${writers} (owner ${who(st.uid)}, mode ${mode}); Test Inbox refuses it, as ssh refuses such a key file: run chmod go-w ${p}`;
  }
  return undefined;
}

/**
 * Why a secret file of the data folder (server.json, whose key proves the server) cannot be
 * trusted, or undefined when it can: another user owns it, or others can read or write it. The
 * one rule for the extension and the library. Not where modes are ACLs (Windows: portableFs.ts
 * modesApply), where the profile folder's inherited ACL keeps it its user's alone.
 */
export async function secretFileProblem(file: string, platform: NodeJS.Platform = process.platform): Promise<string | undefined> {
  if (!modesApply(platform)) return undefined;
  const st = await fsp.stat(file);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return 'belongs to another user';
  if ((st.mode & 0o077) !== 0) return 'is readable or writable by other users';
  return undefined;
}

// ---- Proof of identity ------------------------------------------------------------------

/**
 * File in the data dir (mode 0600, written once both ports listen, removed on a clean stop)
 * that lets whoever can read the data folder tell this server from an impostor on its port:
 * `{"pid", "http", "smtp", "key", "apiTokenSha256", "webhookTokenSha256"}`. The `key` never
 * travels: `GET /healthz?challenge=C` answers `proof` = HMAC-SHA256(key, C), which only the
 * server that wrote the file can compute. The token digests tell a client which token the
 * server takes before it sends one.
 */
export const SERVER_FILE = 'server.json';
export interface ServerFile {
  pid: number;
  /** Base URL of the HTTP API, as in the ready line. */
  http: string;
  /** `host:port`, as in the ready line. */
  smtp: string;
  /** Random, per start: the HMAC key of the health proof. */
  key: string;
  apiTokenSha256: string;
  webhookTokenSha256: string;
}

type ServerFileProblemCode = 'server_file_missing' | 'server_file_unreadable' | 'server_file_invalid';

/** Why a server file gave no proof. Returned, not thrown. */
export const ServerFileProblem = codedError<ServerFileProblemCode>('ServerFileProblem');
export type ServerFileProblem = CodedError<ServerFileProblemCode>;

/** The server file's fields, or server_file_invalid. */
export function parseServerFile(text: string, file = SERVER_FILE): ServerFile | ServerFileProblem {
  const o = jsonObject(text);
  const str = (x: unknown): x is string => typeof x === 'string' && x.length > 0;
  if (!o || !Number.isInteger(o.pid) || !str(o.http) || !str(o.smtp) || !str(o.key) || !str(o.apiTokenSha256) || !str(o.webhookTokenSha256)) {
    return new ServerFileProblem('server_file_invalid', `${file} is not a server file of Test Inbox`);
  }
  return { pid: o.pid as number, http: o.http, smtp: o.smtp, key: o.key, apiTokenSha256: o.apiTokenSha256, webhookTokenSha256: o.webhookTokenSha256 };
}

/** Reads and parses the server file at `file` (`<data-dir>/SERVER_FILE`) through the caller's `readFile`. */
export async function readServerFile(file: string, readFile: (file: string) => Promise<string>): Promise<ServerFile | ServerFileProblem> {
  return readContractFile(file, readFile, parseServerFile, (missing, message, cause) =>
    new ServerFileProblem(missing ? 'server_file_missing' : 'server_file_unreadable', message, { cause }),
  );
}

const hex = (buf: ArrayBuffer): string => Buffer.from(buf).toString('hex');

/** SHA-256 of a token, hex: names a token in the server file without revealing it. */
export async function tokenDigest(token: string): Promise<string> {
  return hex(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
}

/** The health proof for `challenge`: HMAC-SHA256 keyed by the server file's `key`, hex. */
export function healthProof(key: string, challenge: string): Promise<string> {
  return hmacHex(key, challenge);
}

/** What the identity check found: proven, a wrong or missing proof, or no answer (and why). */
interface HealthProofCheck {
  proven: boolean;
  /** Why nothing answered the check (then `proven` is false). */
  unanswered?: string;
  /** Nothing answered within the caller's time: a server may be there, busy (then `unanswered` is set too). */
  timedOut?: boolean;
  /** The connection was refused: nothing listens at the address (then `unanswered` is set too). */
  refused?: boolean;
}

/**
 * The identity check of a server file's server: asks `url` to answer a fresh challenge
 * (`/healthz?challenge=`, no redirect followed: the proof must come from this address) and
 * compares its `proof` with the HMAC of the file's `key`. No token is sent.
 */
export async function checkHealthProof(url: string, key: string, signal: AbortSignal): Promise<HealthProofCheck> {
  const challenge = generateToken();
  let answer: unknown;
  try {
    const res = await fetch(`${url}/healthz?${HEALTH_CHALLENGE_PARAM}=${challenge}`, { redirect: 'error', signal });
    answer = ((await res.json()) as { proof?: unknown }).proof;
  } catch (e) {
    const cause = (e as { cause?: { code?: unknown } }).cause;
    return { proven: false, unanswered: (e as Error).message, ...(signal.aborted ? { timedOut: true } : {}), ...(cause?.code === 'ECONNREFUSED' ? { refused: true } : {}) };
  }
  return { proven: typeof answer === 'string' && sameProof(answer, await healthProof(key, challenge)) };
}

// ---- Stopping ---------------------------------------------------------------------------

/** How long a stop waits for the server to close its store and exit before it kills it. */
export const STOP_GRACE_MS = 10_000;

/** What stopServerProcess needs of a child process (node:child_process ChildProcess has it). */
interface StoppableChild {
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly connected: boolean;
  disconnect(): void;
  kill(signal?: NodeJS.Signals): boolean;
  once(event: 'exit', listener: () => void): unknown;
}

/**
 * The one clean stop of a `serve` child, for everyone who starts one (the extension, `npm start`,
 * the bench, the tests): SIGTERM where it is a signal (POSIX: `serve` closes its store and exits);
 * on Windows, where SIGTERM is TerminateProcess, through its IPC channel (`serve` stops the same
 * way when the channel closes), and a child started there without a channel is only killed
 * (recovery on the next start makes that safe, but slower). Waits for the exit, and
 * kills only after `graceMs`. Resolves `clean`, or `killed` when the grace ran out.
 */
export function stopServerProcess(child: StoppableChild, graceMs: number = STOP_GRACE_MS, platform: NodeJS.Platform = process.platform): Promise<'clean' | 'killed'> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve('clean');
  // Windows has no stop but the channel: without one, the only stop is a kill.
  const clean = platform !== 'win32' || child.connected;
  return new Promise((resolve) => {
    let killed = !clean;
    const timer = clean
      ? setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, graceMs)
      : undefined;
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(killed ? 'killed' : 'clean');
    });
    if (!clean) child.kill('SIGKILL');
    else if (platform !== 'win32') child.kill('SIGTERM');
    else child.disconnect();
  });
}

// ---- Exit codes -------------------------------------------------------------------------

/** Any other failure to start. */
export const EXIT_FAILURE = 1;
/** A port is taken (the extension then attaches to a Test Inbox server on it). */
export const EXIT_PORT_IN_USE = 2;
/** Another server uses the data dir (the extension then waits for it to answer and attaches). */
export const EXIT_DATA_DIR_IN_USE = 3;
/** The PostgreSQL store's database is unreachable or refused the login at start. */
export const EXIT_DATABASE_UNAVAILABLE = 4;
/** A bad command line (sysexits EX_USAGE). */
export const EXIT_USAGE = 64;
