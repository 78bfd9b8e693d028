// `test-inbox serve`'s options: ServeConfig is the server's own options (src/server/serverOptions.ts)
// as the command line can give them, and SERVE_OPTIONS is the one table of its flags and their
// environment twins, each with the option field it sets. A new server option is a field of its
// section there and a row here; parseServeArgs (cli.ts) and the call of startInboxServer do not change.

import * as path from 'node:path';
import { parseDuration } from '../core/duration';
import { domainProblem, PRIVATE_DOMAIN } from '../core/ids';
import {
  ALLOWED_HOSTS_ENV,
  API_TOKEN_ENV,
  CHAOS_FILE_ENV,
  COMPAT_ENV,
  COMPAT_OPEN_ENV,
  DATABASE_URL_ENV,
  DEFAULT_DOMAIN,
  DEFAULT_DURABILITY,
  DEFAULT_HOST,
  DEFAULT_HTTP_PORT,
  DEFAULT_LOG_LEVEL,
  DEFAULT_SMTP_PORT,
  DURABILITIES,
  DURABILITY_ENV,
  HTTP_PORT_ENV,
  LOG_LEVEL_ENV,
  LOG_LEVELS,
  PROVIDER_KEY_ENV,
  PUBLIC_URL_ENV,
  resolveDefaultDataDir,
  SMTP_AUTH_ENV,
  SMTP_PORT_ENV,
  SMTP_TLS_CERT_ENV,
  SMTP_TLS_ENV,
  SMTP_TLS_KEY_ENV,
  SMTPS_PORT_ENV,
  TWILIO_AUTH_TOKEN_ENV,
  WEBHOOK_TOKEN_ENV,
} from '../shared/contract';
import { type FlagSpec, UsageError } from '../shared/args';
import { allowedHostProblem } from '../server/http/auth';
import type { FeatureOptions, LimitOptions, NetworkOptions, RuntimeOptions, SmtpSecurityOptions, SmtpTlsOptions, StoreOptions, TokenOptions } from '../server/serverOptions';
import { parseSmtpCredentials } from '../server/smtp/smtpSecurity';
import { DEFAULT_MAX_AGE_MS, DEFAULT_MAX_MESSAGES_PER_INBOX, type RetentionOptions } from '../server/store/types';

/** The shortest --sweep-every: a sweep is a query of the whole table, not something to run in a loop. */
export const MIN_SWEEP_EVERY_MS = 100;

/**
 * What `serve` reads from its command line and environment: the server's options
 * (InboxServerOptions' sections) with every default the CLI applies filled in, the tokens
 * optional (absent ones come from, or are generated into, the tokens file), and instead of the
 * fault rules themselves the file they are read from.
 */
export type ServeConfig = NetworkOptions &
  Omit<StoreOptions, 'retention' | 'durability'> &
  Required<Pick<StoreOptions, 'durability'>> & { retention: RetentionOptions } & Omit<LimitOptions, 'maxMessageBytes'> &
  SmtpSecurityOptions &
  Partial<TokenOptions> &
  Pick<FeatureOptions, 'compat'> &
  Required<Pick<RuntimeOptions, 'logLevel'>> & {
    /** `--chaos <file>`: fault rules in force from the start, read and checked before the server starts. */
    chaosFile?: string;
  };

/** A field of ServeConfig, or of one of its sections, that a row of SERVE_OPTIONS sets. */
type ServeField = keyof ServeConfig | `retention.${keyof RetentionOptions}` | `smtpTls.${keyof SmtpTlsOptions}` | 'compat.open';

/** What a row is given: the flag's value (a string, or true for a boolean flag), else its environment twin's (empty = absent). */
interface Given {
  text: string | undefined;
  /** The flag's name (`--host`), or the environment variable's when the value came from there. */
  name: string;
  env: NodeJS.ProcessEnv;
}

/** A row's reader that needs only its own value. */
type Read = (given: Given) => unknown;

interface ServeOption {
  type: 'string' | 'boolean';
  /** The environment twin, for CI. */
  env?: string;
  /** The field it sets; a row whose value is undefined leaves the field out. */
  to: ServeField;
  /** The field's value, given what the rows above it read; a bad value is a UsageError naming the flag (or the variable). */
  read(given: Given, above: Partial<ServeConfig>): unknown;
}

/** `1`/`true`/`yes`/`on` (any case) is true, `0`/`false`/`no`/`off`/empty false; anything else a usage error. */
function envFlag(name: string, value: string | undefined): boolean {
  if (value === undefined || /^(|0|false|no|off)$/i.test(value.trim())) return false;
  if (/^(1|true|yes|on)$/i.test(value.trim())) return true;
  throw new UsageError(`${name} must be 1 or 0 (true or false), got ${JSON.stringify(value)}`);
}

/** A boolean flag, or its environment twin read by envFlag. */
function flagOrEnv(envName: string): Read {
  return ({ text, env }) => text === 'true' || envFlag(envName, env[envName]);
}

/** A port number (0 picks a free one), or `fallback` when absent; a refusal names where the value came from. */
function port(fallback: number | undefined): Read {
  return ({ text, name }) => {
    if (text === undefined) return fallback;
    if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new UsageError(`${name} must be a port number 0-65535 (0 picks a free one), got ${JSON.stringify(text)}`);
    return Number(text);
  };
}

/** A limit of at least 1, or undefined (the default) when absent. */
function count(flag: string): Read {
  return ({ text }) => {
    if (text === undefined) return undefined;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < 1) throw new UsageError(`--${flag} must be a whole number of at least 1, got ${JSON.stringify(text)}`);
    return Number(text);
  };
}

function notEmpty(flag: string, trim: boolean): Read {
  return ({ text }) => {
    if (text !== undefined && (trim ? text.trim() : text) === '') throw new UsageError(`--${flag} must not be empty`);
    return text;
  };
}

/** One of `values`, case ignored; `fallback` when not given. */
function oneOf<T extends string>(values: readonly T[], fallback: T): Read {
  return ({ text, name }) => {
    if (text === undefined) return fallback;
    const found = values.find((v) => v === text.trim().toLowerCase());
    if (found === undefined) throw new UsageError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(text.slice(0, 40))}`);
    return found;
  };
}

function readDomain({ text }: Given): string {
  const domain = (text ?? DEFAULT_DOMAIN).toLowerCase();
  const dp = domain === PRIVATE_DOMAIN ? 'it must be a real domain, not "private"' : domainProblem(domain);
  if (dp) throw new UsageError(`--domain ${JSON.stringify(text)}: ${dp}`);
  return domain;
}

function readMaxMessages({ text }: Given): number {
  if (text === undefined) return DEFAULT_MAX_MESSAGES_PER_INBOX;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--max-messages must be a whole number (0 = no limit), got ${JSON.stringify(text)}`);
  return Number(text);
}

function readMaxAge({ text }: Given): number {
  if (text === undefined) return DEFAULT_MAX_AGE_MS;
  const d = parseDuration(text);
  if (d === undefined) throw new UsageError(`--max-age must be a duration such as 30m, 12h or 7d (0 = no limit), got ${JSON.stringify(text)}`);
  return d;
}

function readSweepEvery({ text }: Given): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms < MIN_SWEEP_EVERY_MS) throw new UsageError(`--sweep-every must be a duration of at least ${MIN_SWEEP_EVERY_MS}ms such as 30s or 5m, got ${JSON.stringify(text)}`);
  return ms;
}

/** `--store` (or its environment twin): `maildir`, or a `postgres://` / `postgresql://` URL; undefined = Maildir. */
function readStore({ text, name }: Given): string | undefined {
  if (text === undefined || text.trim().toLowerCase() === 'maildir') return undefined;
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    // The value may hold a password: never echoed.
    throw new UsageError(`${name} must be "maildir" or a postgres:// URL (postgres://user:password@host:5432/db)`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new UsageError(`${name} must be "maildir" or a postgres:// URL, got a ${url.protocol} URL`);
  return text.trim();
}

/** `--public-url`: an http(s) origin (no path, query or credentials), or undefined. */
function readPublicUrl({ text }: Given): string | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--public-url (or ${PUBLIC_URL_ENV}) must be a URL such as https://mail.example.com, got ${JSON.stringify(text.slice(0, 200))}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new UsageError(`--public-url (or ${PUBLIC_URL_ENV}) must be an http(s) origin without path, query or credentials, such as https://mail.example.com, got ${JSON.stringify(text.slice(0, 200))}`);
  }
  return url.origin;
}

/** `--allowed-hosts` (or its environment twin): comma-separated hosts, each one exactly (http/auth.ts allowedHostProblem); undefined when not given. */
function readAllowedHosts({ text }: Given): string[] | undefined {
  if (text === undefined) return undefined;
  const hosts = text.split(',').map((h) => h.trim()).filter((h) => h !== '');
  if (hosts.length === 0) throw new UsageError(`--allowed-hosts (or ${ALLOWED_HOSTS_ENV}) must name at least one host, such as testinbox,192.168.1.20`);
  for (const h of hosts) {
    const problem = allowedHostProblem(h);
    if (problem !== undefined) throw new UsageError(`--allowed-hosts (or ${ALLOWED_HOSTS_ENV}): ${problem}`);
  }
  return hosts;
}

function readSmtpAuth({ text }: Given): unknown {
  if (text === undefined) return undefined;
  const parsed = parseSmtpCredentials(text);
  // The value is a password: never echoed.
  if (typeof parsed === 'string') throw new UsageError(`--smtp-auth (or ${SMTP_AUTH_ENV}): ${parsed}`);
  return parsed;
}

/** `--smtp-tls-key`: comes with `--smtp-tls-cert` (either from the environment too), neither empty. */
function readTlsKey({ text: keyFile }: Given, above: Partial<ServeConfig>): string | undefined {
  const certFile = above.smtpTls?.certFile;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new UsageError(certFile === undefined ? '--smtp-tls-key needs --smtp-tls-cert (the certificate of that key)' : '--smtp-tls-cert needs --smtp-tls-key (the private key of that certificate)');
  }
  for (const [flag, file] of [['smtp-tls-cert', certFile], ['smtp-tls-key', keyFile]] as const) {
    if (file !== undefined && file.trim() === '') throw new UsageError(`--${flag} must not be empty`);
  }
  return keyFile;
}

/** `--smtp-port`: a port, not the one `--smtps-port` (above it) names. */
function readSmtpPort(given: Given, above: Partial<ServeConfig>): unknown {
  const smtpPort = port(DEFAULT_SMTP_PORT)(given);
  const implicitPort = above.smtpTls?.implicitPort;
  if (implicitPort !== undefined && implicitPort !== 0 && implicitPort === smtpPort) throw new UsageError(`${given.name} must differ from the implicit-TLS port (--smtps-port or ${SMTPS_PORT_ENV}; both ${String(smtpPort)})`);
  return smtpPort;
}

/**
 * Every flag of `serve` (but --help and --version), its environment twin and the option field it
 * sets, in the order they are checked. `serve --help` (cli.ts USAGE) documents each.
 */
export const SERVE_OPTIONS = {
  domain: { type: 'string', to: 'defaultDomain', read: readDomain },
  'max-messages': { type: 'string', to: 'retention.maxMessages', read: readMaxMessages },
  'max-age': { type: 'string', to: 'retention.maxAgeMs', read: readMaxAge },
  'sweep-every': { type: 'string', to: 'sweepIntervalMs', read: readSweepEvery },
  host: { type: 'string', to: 'host', read: (g) => notEmpty('host', true)(g) ?? DEFAULT_HOST },
  'data-dir': { type: 'string', to: 'dataDir', read: (g) => path.resolve((notEmpty('data-dir', true)(g) as string | undefined) ?? resolveDefaultDataDir(g.env)) },
  store: { type: 'string', env: DATABASE_URL_ENV, to: 'databaseUrl', read: readStore },
  'public-url': { type: 'string', env: PUBLIC_URL_ENV, to: 'publicUrl', read: readPublicUrl },
  'allowed-hosts': { type: 'string', env: ALLOWED_HOSTS_ENV, to: 'allowedHosts', read: readAllowedHosts },
  'api-token': { type: 'string', env: API_TOKEN_ENV, to: 'apiToken', read: notEmpty('api-token', false) },
  'webhook-token': { type: 'string', env: WEBHOOK_TOKEN_ENV, to: 'webhookToken', read: notEmpty('webhook-token', false) },
  'twilio-auth-token': { type: 'string', env: TWILIO_AUTH_TOKEN_ENV, to: 'twilioAuthToken', read: notEmpty('twilio-auth-token', false) },
  'provider-key': { type: 'string', env: PROVIDER_KEY_ENV, to: 'providerKey', read: notEmpty('provider-key', false) },
  'smtp-tls-cert': { type: 'string', env: SMTP_TLS_CERT_ENV, to: 'smtpTls.certFile', read: ({ text }) => text },
  'smtp-tls-key': { type: 'string', env: SMTP_TLS_KEY_ENV, to: 'smtpTls.keyFile', read: readTlsKey },
  'smtps-port': { type: 'string', env: SMTPS_PORT_ENV, to: 'smtpTls.implicitPort', read: port(undefined) },
  'smtp-port': { type: 'string', env: SMTP_PORT_ENV, to: 'smtpPort', read: readSmtpPort },
  'smtp-auth': { type: 'string', env: SMTP_AUTH_ENV, to: 'smtpAuth', read: readSmtpAuth },
  'http-port': { type: 'string', env: HTTP_PORT_ENV, to: 'httpPort', read: port(DEFAULT_HTTP_PORT) },
  'smtp-tls': { type: 'boolean', env: SMTP_TLS_ENV, to: 'smtpTls.starttls', read: flagOrEnv(SMTP_TLS_ENV) },
  'max-recipients': { type: 'string', to: 'maxRecipients', read: count('max-recipients') },
  'max-smtp-connections': { type: 'string', to: 'maxSmtpConnections', read: count('max-smtp-connections') },
  'max-http-connections': { type: 'string', to: 'maxHttpConnections', read: count('max-http-connections') },
  'log-level': { type: 'string', env: LOG_LEVEL_ENV, to: 'logLevel', read: oneOf(LOG_LEVELS, DEFAULT_LOG_LEVEL) },
  chaos: { type: 'string', env: CHAOS_FILE_ENV, to: 'chaosFile', read: ({ text }) => (text === undefined ? undefined : path.resolve(text)) },
  durability: { type: 'string', env: DURABILITY_ENV, to: 'durability', read: oneOf(DURABILITIES, DEFAULT_DURABILITY) },
  compat: { type: 'boolean', env: COMPAT_ENV, to: 'compat', read: (g) => (flagOrEnv(COMPAT_ENV)(g) ? { open: false } : undefined) },
  // Implies --compat: sets `open` in the field --compat leaves absent when off.
  'compat-open': { type: 'boolean', env: COMPAT_OPEN_ENV, to: 'compat.open', read: (g) => flagOrEnv(COMPAT_OPEN_ENV)(g) || undefined },
} as const satisfies Record<string, ServeOption>;

/** The flags parseFlags reads: the table's, --help and --version. */
export const SERVE_FLAGS: FlagSpec = {
  ...Object.fromEntries(Object.entries(SERVE_OPTIONS).map(([flag, o]) => [flag, { type: o.type }])),
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
};

function setField(out: Record<string, unknown>, to: ServeField, value: unknown): void {
  const [section, key] = to.split('.') as [string, string | undefined];
  if (key === undefined) out[section] = value;
  else out[section] = { ...(out[section] as object | undefined), [key]: value };
}

/** SMTP TLS from its rows: a certificate turns STARTTLS on; paths absolute. Undefined: plain SMTP only. */
function smtpTlsOf(rows: SmtpTlsOptions): SmtpTlsOptions | undefined {
  const { certFile, keyFile, implicitPort } = rows;
  const starttls = rows.starttls || certFile !== undefined;
  if (!starttls && implicitPort === undefined) return undefined;
  return {
    starttls,
    ...(implicitPort !== undefined ? { implicitPort } : {}),
    ...(certFile !== undefined && keyFile !== undefined ? { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) } : {}),
  };
}

/** ServeConfig from the parsed flags and the environment: each row of SERVE_OPTIONS in order (a row may check the rows above it), then SMTP TLS put together. */
export function serveConfigOf(values: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): ServeConfig {
  const out: Record<string, unknown> = {};
  for (const [flag, o] of Object.entries(SERVE_OPTIONS) as Array<[string, ServeOption]>) {
    const own = values[flag];
    const fromEnv = own === undefined && o.env !== undefined ? env[o.env] || undefined : undefined;
    const text = own === undefined ? fromEnv : String(own);
    const value = o.read({ text, name: own === undefined && fromEnv !== undefined ? o.env! : `--${flag}`, env }, out as Partial<ServeConfig>);
    if (value !== undefined) setField(out, o.to, value);
  }
  const { smtpTls, ...config } = out as unknown as ServeConfig;
  const tls = smtpTlsOf(smtpTls!);
  return { ...config, ...(tls ? { smtpTls: tls } : {}) };
}
