// Composes the local inbox server: the Maildir store, the HTTP API on one port and SMTP on
// another, all sharing the store. Used by the CLI (`test-inbox serve`), tests and benches.

import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeFileName } from '../core/fileNames';
import { redact } from '../core/redact';
import { isLoopbackHost, isWildcardHost } from '../core/urls';
import { DEFAULT_DURABILITY, DEFAULT_LOG_LEVEL, type Durability, generateToken, type LogLevel, logsAt, SERVER_FILE, type ServerFile, tokenDigest } from '../shared/contract';
import { allowedHostProblem } from './http/auth';
import { createHttpApi } from './http/httpApi';
import { keepReserve, writeServerFile } from './serverFiles';
import { isNoSpace } from './store/errors';
import { ByteBudget } from './budget';
import { defaultConnectionCaps, readSoftFdLimit } from './limits';
import { createSmtpServer, type InboxSmtpServer } from './smtp/smtp';
import { APPLIED_SURFACES, ChaosRules, serverRuleId } from './chaos/rules';
import { DelayedDeliveries } from './chaos/delayed';
import { activeRulesLine } from './http/api/chaos';
import type { SmtpCredentials, SmtpSecurity } from './smtp/smtpSecurity';
import { loadOrCreateSelfSigned, loadOwnTlsFiles, type SmtpTlsMaterial } from './tls/material';
import { createStore } from './serverStore';
import type { FileWrite } from './store/maildir/fileWrites';
import { WorkerPool } from './workers/pool';
import type { MessageMeta, RetentionOptions, Store } from './store/types';
import { VERSION } from './version';
import type { Clock } from './clock';
import type { CompatOptions } from './http/compat/options';
import { PROXIED_HOSTS } from './http/compat/hosts';
import { LocalCa } from './tls/localCa';

/** On close, HTTP requests still running after this long are cut: a local test server should stop promptly. */
const HTTP_CLOSE_GRACE_MS = 1000;

export type { LogLevel };
type Log = (level: LogLevel, msg: string) => void;

export interface InboxServerOptions {
  host: string;
  /** 0 picks a free port. */
  httpPort: number;
  /** 0 picks a free port. */
  smtpPort: number;
  dataDir: string;
  /** A PostgreSQL URL: keep messages there (the team server) instead of the Maildir under dataDir. */
  databaseUrl?: string;
  /** The origin users reach this server at behind a TLS proxy: the web UI's Origin check and Secure cookie use it, and its host is allowed. */
  publicUrl?: string;
  apiToken: string;
  webhookToken: string;
  /** Password of the Twilio-compatible API and key of inbound webhook signatures; absent: that API refuses every request. */
  twilioAuthToken?: string;
  /** Key of the email provider APIs (docs/providers.md); absent: those routes refuse every request. */
  providerKey?: string;
  /** The server's one clock (clock.ts); tests pass one they can advance. */
  clock?: Clock;
  defaultDomain: string;
  retention?: Partial<RetentionOptions>;
  /** How often the PostgreSQL store's retention sweep runs (once across its processes); absent: RETENTION_SWEEP_INTERVAL_MS. */
  sweepIntervalMs?: number;
  /** Largest SMTP message; the SMTP default when absent. */
  maxMessageBytes?: number;
  /** Recipients of one SMTP message; the SMTP default when absent. */
  maxRecipients?: number;
  /** Open SMTP / HTTP connections at once; absent: sized from the file-descriptor limit (limits.ts). */
  maxSmtpConnections?: number;
  maxHttpConnections?: number;
  /**
   * Extra Host header values the HTTP API accepts, each one host exactly (http/auth.ts
   * allowedHostProblem): added to the loopback names, and, for a host that is not loopback, to
   * the bound address, the machine's host name and (for a wildcard bind) its interface addresses.
   */
  allowedHosts?: string[];
  /** SMTP TLS; absent: plain SMTP only (the default). */
  smtpTls?: SmtpTlsOptions;
  /** Credentials SMTP clients must log in with; absent: any AUTH, or none, is accepted. */
  smtpAuth?: SmtpCredentials;
  /** Fault rules in force from the start (`serve --chaos <file>`, docs/chaos.md); checked whole before anything listens. */
  chaosRules?: unknown[];
  log?: Log;
  /** Lines past this level are not written; `debug` adds a line per message. Default DEFAULT_LOG_LEVEL (`info`). */
  logLevel?: LogLevel;
  /** What the Maildir store's acknowledgement waits for (contract.ts). Default DEFAULT_DURABILITY (`process`); the PostgreSQL store keeps PostgreSQL's own. */
  durability?: Durability;
  /** The drop-in APIs, CONNECT proxy and CA (`--compat`, docs/compat.md); absent: off. */
  compat?: CompatOptions;
}

interface SmtpTlsOptions {
  /** Offer STARTTLS on the SMTP port. */
  starttls: boolean;
  /** A port for TLS from the first byte (port-465 style); 0 picks a free one; absent: none. */
  implicitPort?: number;
  /** The user's PEM certificate and key; both or neither. Neither: the data folder's self-signed pair. */
  certFile?: string;
  keyFile?: string;
}

export interface InboxServer {
  /** `http://host:port`; for a wildcard bind (0.0.0.0, ::) a loopback address, which opens. */
  httpUrl: string;
  /** The bound host; for a wildcard bind a loopback address, which connects. */
  smtpHost: string;
  /** For a wildcard bind: `http://ADDRESS:PORT` of each of the machine's non-internal interfaces (other machines open these). */
  reachable?: string[];
  smtpPort: number;
  /** The implicit-TLS SMTP port, when one was asked for. */
  smtpsPort?: number;
  /** The certificate SMTP TLS presents, when TLS is on (clients are told to trust this file). */
  smtpTlsCertFile?: string;
  /** With `compat` on a Maildir store: the absolute path of the CONNECT proxy's CA certificate (PEM; never the key). The ready line's `ca`. */
  compatCaFile?: string;
  httpPort: number;
  store: Store;
  /** The fault rules SMTP, the provider APIs and Twilio apply, and /api/v2/chaos sets. */
  chaos: ChaosRules;
  close(): Promise<void>;
}

type ServerStartErrorCode = 'port_in_use' | 'listen_failed';

export class ServerStartError extends Error {
  readonly code: ServerStartErrorCode;
  constructor(code: ServerStartErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'ServerStartError';
  }

  static is(e: unknown, code?: ServerStartErrorCode): e is ServerStartError {
    return e instanceof ServerStartError && (code === undefined || e.code === code);
  }
}

/** `host` as it goes into a URL or `host:port` (IPv6 literals in brackets). */
export function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The address this machine opens a server bound to `host` at: for a wildcard, the loopback address of its family. */
function openableHost(host: string): string {
  if (!isWildcardHost(host)) return host;
  return host.includes(':') ? '::1' : '127.0.0.1';
}

/**
 * For a wildcard bind, the addresses other machines reach it at (brackets around IPv6): every
 * non-internal interface address of the bind's family (`::` takes both on a dual-stack system),
 * IPv6 link-local ones left out (a URL cannot carry their zone). Empty for any other bind.
 */
export function reachableHosts(host: string, interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces()): string[] {
  if (!isWildcardHost(host)) return [];
  const v6 = host.includes(':');
  const out: string[] = [];
  for (const infos of Object.values(interfaces)) {
    for (const i of infos ?? []) {
      if (i.internal) continue;
      if (i.family === 'IPv4') out.push(i.address);
      else if (v6 && !/^fe[89ab]/i.test(i.address)) out.push(`[${i.address}]`);
    }
  }
  return [...new Set(out)];
}

function listenError(service: string, host: string, port: number, e: unknown): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${hostForUrl(host)}:${port}`;
  if (code === 'EADDRINUSE') return new ServerStartError('port_in_use', `${service} port ${where} is already in use (choose another with --${service.toLowerCase()}-port, or 0 for a free one)`, { cause: e });
  return new ServerStartError('listen_failed', `cannot listen for ${service} on ${where}: ${(e as Error).message}`, { cause: e });
}

/**
 * The forms in which a token can reach a log line: as given, and as a file name (an inbox named
 * like the token is stored lower-case and encoded, and the store logs paths). Case is ignored
 * when redacting.
 */
export function secretForms(secrets: ReadonlyArray<string | undefined>): string[] {
  return secrets.flatMap((s) => (s ? [s, encodeFileName(s.toLowerCase())] : []));
}

/**
 * `log` with the given secrets (and anything shaped like a token) redacted from every line, and
 * the lines past `threshold` dropped: the one gate of every log path of the server.
 */
function redactingLog(log: Log, secrets: ReadonlyArray<string | undefined>, threshold: LogLevel): Log {
  const forms = secretForms(secrets);
  return (level, msg) => {
    if (logsAt(threshold, level)) log(level, redact(msg, forms));
  };
}

/** The debug line of a stored message: its id, route, addresses and size; never its subject (an SMS's is its text) or body. */
function messageLine(meta: MessageMeta): string {
  return `message ${meta.id} stored: ${meta.source} from ${JSON.stringify(meta.from)} to ${meta.inbox}@${meta.domain}, ${meta.size} bytes`;
}

export async function startInboxServer(options: InboxServerOptions): Promise<InboxServer> {
  // Every component (store, HTTP, SMTP) logs through this: a name or path a sender chose may hold a token.
  const logLevel = options.logLevel ?? DEFAULT_LOG_LEVEL;
  const log: Log = redactingLog(options.log ?? (() => undefined), [options.apiToken, options.webhookToken, options.twilioAuthToken, options.providerKey], logLevel);
  const now = options.clock ? () => options.clock!.now() : Date.now;
  // A bad --chaos file stops the start before anything is opened.
  if (options.chaosRules !== undefined) await new ChaosRules(now, APPLIED_SURFACES).replace(options.chaosRules);
  const dataDir = path.resolve(options.dataDir);
  // The MIME worker threads: the read views' parsing, and the Maildir store's codes after each acknowledgement.
  const mime = new WorkerPool();
  const durability = options.durability ?? DEFAULT_DURABILITY;
  // The Maildir store's file writes (before the acknowledgement under the process rule, by the
  // materialiser after it under the strict rule): a thread of their own, so a slow disk never
  // delays a read's parse and the event loop never waits in a file create.
  const writer = options.databaseUrl === undefined ? new WorkerPool(1) : undefined;
  // The team server's store (the messages, and what every process shares: its fault rules, the web
  // UI's spent ids) given a database URL, else the Maildir store in the data folder.
  const { store, spoolDir, uiRevocations, sharedChaos, where } = createStore({
    databaseUrl: options.databaseUrl,
    dataDir,
    retention: options.retention,
    log,
    sweepIntervalMs: options.sweepIntervalMs,
    durability,
    detectCode: (head, sms) => mime.detectCode({ raw: head, sms }),
    ...(writer ? { writeFile: (op: FileWrite) => writer.writeFile(op) } : {}),
  });
  // One rule set behind every surface: in this process's memory, or on a team server in its database, mirrored here (docs/chaos.md).
  const chaos = new ChaosRules(now, APPLIED_SURFACES, serverRuleId, sharedChaos);
  try {
    await store.open();
  } catch (e) {
    await Promise.all([mime.close(), writer?.close()]);
    throw e;
  }
  // The PostgreSQL store holds no lock of the data folder (its tokens, TLS pair and server file): make sure it exists.
  if (options.databaseUrl !== undefined) await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Messages a delivery fault rule holds (docs/chaos.md): a previous run's go on waiting. Closed before the store.
  const delayed = new DelayedDeliveries({ dataDir, store, rules: chaos, ...(options.clock ? { now: () => options.clock!.now() } : {}), log });
  // A line per message at debug only: at any other level nothing listens, so a message costs the log nothing.
  if (logsAt(logLevel, 'debug')) store.on('message', (meta) => log('debug', messageLine(meta)));
  // Run last first: the store closes (reading the codes still pending) before the workers stop.
  const cleanups: Array<() => Promise<void>> = [() => mime.close(), async () => writer?.close(), () => store.close(), () => chaos.close(), () => delayed.close()];
  // One budget for the message bytes every SMTP and HTTP connection holds in memory at once.
  const budget = new ByteBudget();
  // Reads of stored messages have a budget of their own: however many clients read, intake goes on.
  const readBudget = new ByteBudget();
  const cleanup = async (): Promise<void> => {
    // First: nothing waits for memory while the server stops (a stop always stops).
    budget.close();
    readBudget.close();
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  // Per start: the key of the health proof, written only into the data folder (SERVER_FILE).
  const proofKey = generateToken();
  const caps = defaultConnectionCaps(readSoftFdLimit());
  const maxSmtpConnections = options.maxSmtpConnections ?? caps.smtp;
  const maxHttpConnections = options.maxHttpConnections ?? caps.http;
  const reachable = reachableHosts(options.host);
  // A Host that names this server: the bound address, the host name and the interface
  // addresses of a non-loopback bind (a page of another site cannot send these: its own name
  // would be the Host), the configured ones, the public URL's host.
  const ownHosts = isLoopbackHost(options.host) ? [] : [hostForUrl(options.host), os.hostname(), ...reachable].filter((h) => allowedHostProblem(h) === undefined);
  const allowedHosts = [...ownHosts, ...(options.allowedHosts ?? []), ...(options.publicUrl !== undefined ? [new URL(options.publicUrl).host] : [])];
  let compatCa: LocalCa | undefined;
  try {
    await chaos.open();
    // `serve --chaos`: on a team server it replaces the set every process applies.
    if (options.chaosRules !== undefined) await chaos.replace(options.chaosRules);
    await delayed.open();
    // The CONNECT proxy's CA, kept in the data folder (its lock held: the store is open). A team
    // server's processes would each make their own: CONNECT is off there (docs/compat.md).
    if (options.compat !== undefined && options.databaseUrl === undefined) compatCa = await LocalCa.open(dataDir, [...PROXIED_HOSTS.keys()], (m) => log('info', m));
    if (options.compat !== undefined && options.databaseUrl !== undefined) log('info', 'compat: the CONNECT proxy is off on a team server (PostgreSQL): the drop-in APIs answer on the HTTP port by their own addresses (docs/compat.md)');
    const api = createHttpApi({
      proofKey,
      store,
      mime,
      apiToken: options.apiToken,
      webhookToken: options.webhookToken,
      twilioAuthToken: options.twilioAuthToken,
      providerKey: options.providerKey,
      ...(options.clock ? { clock: options.clock } : {}),
      defaultDomain: options.defaultDomain,
      ...(spoolDir !== undefined ? { spoolDir } : {}),
      ...(uiRevocations ? { uiRevocations } : {}),
      ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
      allowedHosts,
      ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {}),
      version: VERSION,
      maxConnections: maxHttpConnections,
      budget,
      readBudget,
      chaos,
      delayed,
      ...(options.compat !== undefined ? { compat: options.compat } : {}),
      ...(compatCa ? { compatCa } : {}),
      log,
    });
    await new Promise<void>((resolve, reject) => {
      api.server.once('error', reject);
      api.server.listen(options.httpPort, options.host, () => {
        api.server.off('error', reject);
        resolve();
      });
    }).catch((e: unknown) => {
      throw listenError('HTTP', options.host, options.httpPort, e);
    });
    api.server.on('error', (e) => log('warn', `http: ${e.message}`));
    cleanups.push(async () => {
      const cut = setTimeout(() => api.server.closeAllConnections(), HTTP_CLOSE_GRACE_MS);
      try {
        await api.close();
      } finally {
        clearTimeout(cut);
      }
    });
    const httpPort = (api.server.address() as AddressInfo).port;

    // TLS material once the store holds the data folder's lock: no two servers generate at once.
    const tls = options.smtpTls;
    let material: SmtpTlsMaterial | undefined;
    if (tls && (tls.starttls || tls.implicitPort !== undefined)) {
      const note = (msg: string): void => log('info', msg);
      material = tls.certFile !== undefined && tls.keyFile !== undefined ? await loadOwnTlsFiles(tls.certFile, tls.keyFile, note) : await loadOrCreateSelfSigned(dataDir, options.host, note);
    }
    const security = (mode: 'starttls' | 'implicit' | undefined): SmtpSecurity => ({
      ...(material && mode ? { tls: { mode, key: material.key, cert: material.cert } } : {}),
      ...(options.smtpAuth ? { credentials: options.smtpAuth } : {}),
    });
    // SMTP and SMTPS share one connection cap: both draw on the same file descriptors.
    const smtpSessions = new Set<string>();
    const listen = async (service: 'SMTP' | 'SMTPS', port: number, mode: 'starttls' | 'implicit' | undefined): Promise<number> => {
      const server: InboxSmtpServer = createSmtpServer({
        store,
        host: options.host,
        port,
        maxMessageBytes: options.maxMessageBytes,
        maxRecipients: options.maxRecipients,
        maxConnections: maxSmtpConnections,
        admitted: smtpSessions,
        // The Maildir store links a spool file into place, so it lies on the data folder's file system; the
        // PostgreSQL store copies it into the database piece by piece, so SMTP's own private temp folder serves.
        ...(spoolDir !== undefined ? { spoolDir } : {}),
        budget,
        security: security(mode),
        chaos,
        delayed,
        log,
      });
      const bound = await server.start().catch((e: unknown) => {
        throw listenError(service, options.host, port, e);
      });
      cleanups.push(() => server.stop());
      return bound.port;
    };
    const smtpPort = await listen('SMTP', options.smtpPort, tls?.starttls ? 'starttls' : undefined);
    const smtpsPort = tls?.implicitPort !== undefined ? await listen('SMTPS', tls.implicitPort, 'implicit') : undefined;

    const smtpHost = openableHost(options.host);
    const httpUrl = `http://${hostForUrl(smtpHost)}:${httpPort}`;
    const serverFile = path.join(dataDir, SERVER_FILE);
    const proof: ServerFile = {
      pid: process.pid,
      http: httpUrl,
      smtp: `${hostForUrl(smtpHost)}:${smtpPort}`,
      key: proofKey,
      apiTokenSha256: await tokenDigest(options.apiToken),
      webhookTokenSha256: await tokenDigest(options.webhookToken),
    };
    // A disk that mail filled still takes the server file: the data folder keeps room for it.
    // Without even that room the server serves anyway (reads and deletes work, writes are refused
    // 452 4.3.1 / 507): only other processes cannot find it through the server file meanwhile.
    const wrote = await writeServerFile(dataDir, serverFile, JSON.stringify(proof) + '\n').catch((e: unknown) => {
      if (!isNoSpace(e)) throw e;
      return 'no room' as const;
    });
    if (wrote !== 'written') {
      log('warn', `the disk of ${dataDir} is full: ${wrote === 'no room' ? `${SERVER_FILE} could not be written, so other processes do not find this server until a restart with room` : 'the server file took the room kept for it'}; mail is refused (452 4.3.1, 507) until there is room`);
    }
    if (!(await keepReserve(dataDir))) log('warn', `the disk of ${dataDir} is full: mail is refused (452 4.3.1, 507) until there is room; reads and deletes work`);
    // Removed before the store releases the data folder's lock: the next server writes its own.
    cleanups.push(() => fs.rm(serverFile, { force: true }));
    const smtpNotes = [
      tls?.starttls ? 'STARTTLS' : undefined,
      smtpsPort !== undefined ? `implicit TLS on ${hostForUrl(smtpHost)}:${smtpsPort}` : undefined,
      material ? `certificate ${material.certFile}${material.selfSigned ? ' (self-signed)' : ''}` : undefined,
      options.smtpAuth ? 'login required' : undefined,
    ].filter(Boolean);
    const reachableUrls = reachable.map((h) => `http://${h}:${httpPort}`);
    log('info', `listening: HTTP ${httpUrl}, SMTP ${hostForUrl(smtpHost)}:${smtpPort}${smtpNotes.length ? ` (${smtpNotes.join(', ')})` : ''}, data in ${where}`);
    if (isWildcardHost(options.host)) log('info', `bound to every interface (${options.host}): other machines open ${reachableUrls.join(', ') || 'this machine\'s address'} (SMTP on port ${smtpPort}); its addresses and host name are allowed as they are, any other name (a compose service, a DNS alias) must be in --allowed-hosts${options.allowedHosts?.length ? ` (given: ${options.allowedHosts.join(', ')})` : ''}`);
    log('info', `connection caps: SMTP ${maxSmtpConnections}, HTTP ${maxHttpConnections} (${caps.fdLimitSource === 'proc' ? `file-descriptor limit ${caps.fdLimit}` : `no file-descriptor limit to read here: sized for ${caps.fdLimit}, macOS's default`})`);
    if (chaos.size > 0) log('info', activeRulesLine(chaos.size));
    let closing: Promise<void> | undefined;
    return {
      httpUrl,
      httpPort,
      smtpHost,
      ...(isWildcardHost(options.host) ? { reachable: reachableUrls } : {}),
      smtpPort,
      ...(smtpsPort !== undefined ? { smtpsPort } : {}),
      ...(material ? { smtpTlsCertFile: material.certFile } : {}),
      ...(compatCa ? { compatCaFile: compatCa.certFile } : {}),
      store,
      chaos,
      close: () => (closing ??= cleanup()),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
