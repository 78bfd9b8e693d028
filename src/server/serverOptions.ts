// The local inbox server's options: the flat input of startInboxServer (what the CLI, the
// extension's child process, tests and benches pass), declared as one interface per concern, and
// serverSections, the one step that normalises that input into typed sections. The facade and its
// steps (server.ts) read only the sections, so an option added later goes into its section here and
// into the step that uses it, not into startInboxServer.

import * as path from 'node:path';
import { DEFAULT_DURABILITY, DEFAULT_LOG_LEVEL, type Durability, type LogLevel } from '../shared/contract';
import type { Clock } from './clock';
import type { CompatOptions } from './http/compat/options';
import { type ConnectionCaps, defaultConnectionCaps, readSoftFdLimit } from './limits';
import type { SmtpCredentials } from './smtp/smtpSecurity';
import type { RetentionOptions } from './store/types';

export type Log = (level: LogLevel, msg: string) => void;

/** Where the server listens and which names and origin its HTTP side answers to. */
export interface NetworkOptions {
  host: string;
  /** 0 picks a free port. */
  httpPort: number;
  /** 0 picks a free port. */
  smtpPort: number;
  /** The origin users reach this server at behind a TLS proxy: the web UI's Origin check and Secure cookie use it, and its host is allowed. */
  publicUrl?: string;
  /**
   * Extra Host header values the HTTP API accepts, each one host exactly (http/auth.ts
   * allowedHostProblem): added to the loopback names, and, for a host that is not loopback, to
   * the bound address, the machine's host name and (for a wildcard bind) its interface addresses.
   */
  allowedHosts?: string[];
}

/** The server's secrets; every log line has them redacted. */
export interface TokenOptions {
  apiToken: string;
  webhookToken: string;
  /** Password of the Twilio-compatible API and key of inbound webhook signatures; absent: that API refuses every request. */
  twilioAuthToken?: string;
  /** Key of the email provider APIs (docs/providers.md); absent: those routes refuse every request. */
  providerKey?: string;
}

/** Where and how messages are kept. */
export interface StoreOptions {
  dataDir: string;
  /** A PostgreSQL URL: keep messages there (the team server) instead of the Maildir under dataDir. */
  databaseUrl?: string;
  /** The domain that writes to "private" go to. */
  defaultDomain: string;
  retention?: Partial<RetentionOptions>;
  /** How often the PostgreSQL store's retention sweep runs (once across its processes); absent: RETENTION_SWEEP_INTERVAL_MS. */
  sweepIntervalMs?: number;
  /** What the Maildir store's acknowledgement waits for (contract.ts). Default DEFAULT_DURABILITY (`process`); the PostgreSQL store keeps PostgreSQL's own. */
  durability?: Durability;
}

/** Sizes and counts the server refuses past. */
export interface LimitOptions {
  /** Largest SMTP message; the SMTP default when absent. */
  maxMessageBytes?: number;
  /** Recipients of one SMTP message; the SMTP default when absent. */
  maxRecipients?: number;
  /** Open SMTP / HTTP connections at once; absent: sized from the file-descriptor limit (limits.ts). */
  maxSmtpConnections?: number;
  maxHttpConnections?: number;
}

export interface SmtpTlsOptions {
  /** Offer STARTTLS on the SMTP port. */
  starttls: boolean;
  /** A port for TLS from the first byte (port-465 style); 0 picks a free one; absent: none. */
  implicitPort?: number;
  /** The user's PEM certificate and key; both or neither. Neither: the data folder's self-signed pair. */
  certFile?: string;
  keyFile?: string;
}

/** SMTP's TLS and login. */
export interface SmtpSecurityOptions {
  /** SMTP TLS; absent: plain SMTP only (the default). */
  smtpTls?: SmtpTlsOptions;
  /** Credentials SMTP clients must log in with; absent: any AUTH, or none, is accepted. */
  smtpAuth?: SmtpCredentials;
}

/** What the server does beyond its own API: fault rules and the drop-in APIs. */
export interface FeatureOptions {
  /** Fault rules in force from the start (`serve --chaos <file>`, docs/chaos.md); checked whole before anything listens. */
  chaosRules?: unknown[];
  /** The drop-in APIs, CONNECT proxy and CA (`--compat`, docs/compat.md); absent: off. */
  compat?: CompatOptions;
}

/** Where log lines go, and the server's clock. */
export interface RuntimeOptions {
  log?: Log;
  /** Lines past this level are not written; `debug` adds a line per message. Default DEFAULT_LOG_LEVEL (`info`). */
  logLevel?: LogLevel;
  /** The server's one clock (clock.ts); tests pass one they can advance. */
  clock?: Clock;
}

/** startInboxServer's input: every concern's options, flat. */
export interface InboxServerOptions extends NetworkOptions, TokenOptions, StoreOptions, LimitOptions, SmtpSecurityOptions, FeatureOptions, RuntimeOptions {}

/** The options in typed sections, defaults applied: what the server's steps read. */
export interface ServerSections {
  network: { host: string; httpPort: number; smtpPort: number; publicUrl?: string; allowedHosts: string[] };
  tokens: TokenOptions;
  /** `dataDir` absolute. */
  store: Required<Pick<StoreOptions, 'dataDir' | 'defaultDomain' | 'durability'>> & Pick<StoreOptions, 'databaseUrl' | 'retention' | 'sweepIntervalMs'>;
  /** The connection caps resolved (given, or sized from the file-descriptor limit). */
  limits: Pick<LimitOptions, 'maxMessageBytes' | 'maxRecipients'> & { maxSmtpConnections: number; maxHttpConnections: number; caps: ConnectionCaps };
  /** `tls` only when a TLS listener is asked for (STARTTLS or an implicit port). */
  smtp: { tls?: SmtpTlsOptions; auth?: SmtpCredentials };
  chaos: { rules?: unknown[] };
  compat?: CompatOptions;
  runtime: { log: Log; logLevel: LogLevel; clock?: Clock; now: () => number };
}

/** The one normalising step: the flat options into sections, with every default applied once. */
export function serverSections(o: InboxServerOptions): ServerSections {
  const caps = defaultConnectionCaps(readSoftFdLimit());
  const clock = o.clock;
  const tlsAsked = o.smtpTls !== undefined && (o.smtpTls.starttls || o.smtpTls.implicitPort !== undefined);
  return {
    network: { host: o.host, httpPort: o.httpPort, smtpPort: o.smtpPort, ...(o.publicUrl !== undefined ? { publicUrl: o.publicUrl } : {}), allowedHosts: o.allowedHosts ?? [] },
    tokens: { apiToken: o.apiToken, webhookToken: o.webhookToken, twilioAuthToken: o.twilioAuthToken, providerKey: o.providerKey },
    store: {
      dataDir: path.resolve(o.dataDir),
      databaseUrl: o.databaseUrl,
      defaultDomain: o.defaultDomain,
      retention: o.retention,
      sweepIntervalMs: o.sweepIntervalMs,
      durability: o.durability ?? DEFAULT_DURABILITY,
    },
    limits: {
      maxMessageBytes: o.maxMessageBytes,
      maxRecipients: o.maxRecipients,
      maxSmtpConnections: o.maxSmtpConnections ?? caps.smtp,
      maxHttpConnections: o.maxHttpConnections ?? caps.http,
      caps,
    },
    smtp: { ...(tlsAsked ? { tls: o.smtpTls } : {}), ...(o.smtpAuth ? { auth: o.smtpAuth } : {}) },
    chaos: { ...(o.chaosRules !== undefined ? { rules: o.chaosRules } : {}) },
    ...(o.compat !== undefined ? { compat: o.compat } : {}),
    runtime: { log: o.log ?? (() => undefined), logLevel: o.logLevel ?? DEFAULT_LOG_LEVEL, ...(clock ? { clock } : {}), now: clock ? () => clock.now() : Date.now },
  };
}
