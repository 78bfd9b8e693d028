// Composes the local inbox server: the Maildir store, the HTTP API on one port and SMTP on
// another, all sharing the store. Used by the CLI (`test-inbox serve`), tests and benches.
// startInboxServer reads its options as sections (serverOptions.ts) and runs one named step per part.

import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { codedError, type CodedError } from '../core/errors';
import { encodeFileName } from '../core/fileNames';
import { redact } from '../core/redact';
import { isLoopbackHost, isWildcardHost } from '../core/urls';
import { generateToken, type LogLevel, logsAt, SERVER_FILE, type ServerFile, tokenDigest } from '../shared/contract';
import { allowedHostProblem } from './http/auth';
import { createHttpApi } from './http/httpApi';
import { keepReserve, writeServerFile } from './serverFiles';
import { isNoSpace } from './store/errors';
import { ByteBudget } from './budget';
import { createSmtpServer, type InboxSmtpServer } from './smtp/smtp';
import { APPLIED_SURFACES, ChaosRules, serverRuleId } from './chaos/rules';
import { DelayedDeliveries } from './chaos/delayed';
import { activeRulesLine } from './http/api/chaos';
import type { SmtpSecurity } from './smtp/smtpSecurity';
import { loadOrCreateSelfSigned, loadOwnTlsFiles, type SmtpTlsMaterial } from './tls/material';
import { createStore, type ServerStore } from './serverStore';
import { type InboxServerOptions, type Log, type ServerSections, serverSections } from './serverOptions';
import type { FileWrite } from './store/maildir/fileWrites';
import { WorkerPool } from './workers/pool';
import type { MessageMeta, Store } from './store/types';
import { VERSION } from './version';
import { PROXIED_HOSTS } from './http/compat/hosts';
import { LocalCa } from './tls/localCa';

/** On close, HTTP requests still running after this long are cut: a local test server should stop promptly. */
const HTTP_CLOSE_GRACE_MS = 1000;

export type { LogLevel };
export type { InboxServerOptions };

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

export const ServerStartError = codedError<ServerStartErrorCode>('ServerStartError');
export type ServerStartError = CodedError<ServerStartErrorCode>;

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

/** The stops of a started server, run last first; the byte budgets close before any (a stop always stops: nothing waits for memory). */
class Shutdown {
  private readonly steps: Array<() => Promise<void>> = [];
  constructor(private readonly budgets: ByteBudget[]) {}

  add(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  async run(): Promise<void> {
    for (const b of this.budgets) b.close();
    for (const step of this.steps.splice(0).reverse()) await step().catch(() => undefined);
  }
}

/** What every listener shares once the store is open: the store, the workers, the fault rules, the memory budgets. */
interface Core {
  o: ServerSections;
  log: Log;
  store: Store;
  /** Where SMTP and HTTP spool large bodies: the Maildir store's own folder; absent for PostgreSQL. */
  spoolDir?: string;
  uiRevocations?: ServerStore['uiRevocations'];
  /** Where the messages are, for the listening line. */
  where: string;
  mime: WorkerPool;
  chaos: ChaosRules;
  delayed: DelayedDeliveries;
  /** The message bytes every SMTP and HTTP connection holds in memory at once. */
  budget: ByteBudget;
  /** Reads of stored messages have a budget of their own: however many clients read, intake goes on. */
  readBudget: ByteBudget;
  /** Per start: the key of the health proof, written only into the data folder (SERVER_FILE). */
  proofKey: string;
  /** For a wildcard bind, the machine's addresses other machines reach it at. */
  reachable: string[];
  shutdown: Shutdown;
}

/** Opens the store (Maildir or PostgreSQL) with its worker threads; a store that fails to open leaves nothing running. */
async function openCore(o: ServerSections, log: Log): Promise<Core> {
  const { dataDir, databaseUrl } = o.store;
  // The MIME worker threads: the read views' parsing, and the Maildir store's codes after each acknowledgement.
  const mime = new WorkerPool();
  // The Maildir store's file writes (before the acknowledgement under the process rule, by the
  // materialiser after it under the strict rule): a thread of their own, so a slow disk never
  // delays a read's parse and the event loop never waits in a file create.
  const writer = databaseUrl === undefined ? new WorkerPool(1) : undefined;
  // The team server's store (the messages, and what every process shares: its fault rules, the web
  // UI's spent ids) given a database URL, else the Maildir store in the data folder.
  const { store, spoolDir, uiRevocations, sharedChaos, where } = createStore({
    databaseUrl: o.store.databaseUrl,
    dataDir: o.store.dataDir,
    retention: o.store.retention,
    log,
    sweepIntervalMs: o.store.sweepIntervalMs,
    durability: o.store.durability,
    detectCode: (head, sms) => mime.detectCode({ raw: head, sms }),
    ...(writer ? { writeFile: (op: FileWrite) => writer.writeFile(op) } : {}),
  });
  // One rule set behind every surface: in this process's memory, or on a team server in its database, mirrored here (docs/chaos.md).
  const chaos = new ChaosRules(o.runtime.now, APPLIED_SURFACES, serverRuleId, sharedChaos);
  try {
    await store.open();
  } catch (e) {
    await Promise.all([mime.close(), writer?.close()]);
    throw e;
  }
  // The PostgreSQL store holds no lock of the data folder (its tokens, TLS pair and server file): make sure it exists.
  if (databaseUrl !== undefined) await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  // Messages a delivery fault rule holds (docs/chaos.md): a previous run's go on waiting. Closed before the store.
  const clock = o.runtime.clock;
  const delayed = new DelayedDeliveries({ dataDir, store, rules: chaos, ...(clock ? { now: () => clock.now() } : {}), log });
  // A line per message at debug only: at any other level nothing listens, so a message costs the log nothing.
  if (logsAt(o.runtime.logLevel, 'debug')) store.on('message', (meta) => log('debug', messageLine(meta)));
  const budget = new ByteBudget();
  const readBudget = new ByteBudget();
  const shutdown = new Shutdown([budget, readBudget]);
  // Run last first: the store closes (reading the codes still pending) before the workers stop.
  for (const step of [() => mime.close(), async () => writer?.close(), () => store.close(), () => chaos.close(), () => delayed.close()]) shutdown.add(step);
  const reachable = reachableHosts(o.network.host);
  return { o, log, store, ...(spoolDir !== undefined ? { spoolDir } : {}), ...(uiRevocations ? { uiRevocations } : {}), where, mime, chaos, delayed, budget, readBudget, proofKey: generateToken(), reachable, shutdown };
}

/** Opens the fault rules (`serve --chaos` replaces the set), the held deliveries, and with `compat` on a Maildir store the CONNECT proxy's CA. */
async function openFeatures(core: Core): Promise<LocalCa | undefined> {
  const { o, chaos, log } = core;
  await chaos.open();
  // `serve --chaos`: on a team server it replaces the set every process applies.
  if (o.chaos.rules !== undefined) await chaos.replace(o.chaos.rules);
  await core.delayed.open();
  if (o.compat === undefined) return undefined;
  if (o.store.databaseUrl !== undefined) {
    log('info', 'compat: the CONNECT proxy is off on a team server (PostgreSQL): the drop-in APIs answer on the HTTP port by their own addresses (docs/compat.md)');
    return undefined;
  }
  // The CONNECT proxy's CA, kept in the data folder (its lock held: the store is open). A team
  // server's processes would each make their own: CONNECT is off there (docs/compat.md).
  return LocalCa.open(o.store.dataDir, [...PROXIED_HOSTS.keys()], (m) => log('info', m));
}

/**
 * The Host values that name this server: the bound address, the host name and the interface
 * addresses of a non-loopback bind (a page of another site cannot send these: its own name
 * would be the Host), the configured ones, the public URL's host.
 */
function allowedHostsOf(network: ServerSections['network'], reachable: string[]): string[] {
  const own = isLoopbackHost(network.host) ? [] : [hostForUrl(network.host), os.hostname(), ...reachable].filter((h) => allowedHostProblem(h) === undefined);
  return [...own, ...network.allowedHosts, ...(network.publicUrl !== undefined ? [new URL(network.publicUrl).host] : [])];
}

/** Builds the HTTP API and listens on its port; resolves the bound port. */
async function listenHttp(core: Core, compatCa: LocalCa | undefined): Promise<number> {
  const { o, log } = core;
  const { host, httpPort } = o.network;
  const api = createHttpApi({
    proofKey: core.proofKey,
    store: core.store,
    mime: core.mime,
    ...o.tokens,
    ...(o.runtime.clock ? { clock: o.runtime.clock } : {}),
    defaultDomain: o.store.defaultDomain,
    ...(core.spoolDir !== undefined ? { spoolDir: core.spoolDir } : {}),
    ...(core.uiRevocations ? { uiRevocations: core.uiRevocations } : {}),
    ...(o.limits.maxMessageBytes !== undefined ? { maxMessageBytes: o.limits.maxMessageBytes } : {}),
    allowedHosts: allowedHostsOf(o.network, core.reachable),
    ...(o.network.publicUrl !== undefined ? { publicUrl: o.network.publicUrl } : {}),
    version: VERSION,
    maxConnections: o.limits.maxHttpConnections,
    budget: core.budget,
    readBudget: core.readBudget,
    chaos: core.chaos,
    delayed: core.delayed,
    ...(o.compat !== undefined ? { compat: o.compat } : {}),
    ...(compatCa ? { compatCa } : {}),
    log,
  });
  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    api.server.listen(httpPort, host, () => {
      api.server.off('error', reject);
      resolve();
    });
  }).catch((e: unknown) => {
    throw listenError('HTTP', host, httpPort, e);
  });
  api.server.on('error', (e) => log('warn', `http: ${e.message}`));
  core.shutdown.add(async () => {
    const cut = setTimeout(() => api.server.closeAllConnections(), HTTP_CLOSE_GRACE_MS);
    try {
      await api.close();
    } finally {
      clearTimeout(cut);
    }
  });
  return (api.server.address() as AddressInfo).port;
}

/** The bound SMTP listeners, and the TLS material they present. */
interface SmtpListeners {
  smtpPort: number;
  smtpsPort?: number;
  material?: SmtpTlsMaterial;
}

/** SMTP (with STARTTLS when asked) and, when asked, implicit-TLS SMTPS: their TLS material, then their listeners. */
async function listenSmtp(core: Core): Promise<SmtpListeners> {
  const { o, log } = core;
  const tls = o.smtp.tls;
  // TLS material once the store holds the data folder's lock: no two servers generate at once.
  const note = (msg: string): void => log('info', msg);
  const material = !tls ? undefined : tls.certFile !== undefined && tls.keyFile !== undefined ? await loadOwnTlsFiles(tls.certFile, tls.keyFile, note) : await loadOrCreateSelfSigned(o.store.dataDir, o.network.host, note);
  const security = (mode: 'starttls' | 'implicit' | undefined): SmtpSecurity => ({
    ...(material && mode ? { tls: { mode, key: material.key, cert: material.cert } } : {}),
    ...(o.smtp.auth ? { credentials: o.smtp.auth } : {}),
  });
  // SMTP and SMTPS share one connection cap: both draw on the same file descriptors.
  const admitted = new Set<string>();
  const listen = async (service: 'SMTP' | 'SMTPS', port: number, mode: 'starttls' | 'implicit' | undefined): Promise<number> => {
    const server: InboxSmtpServer = createSmtpServer({
      store: core.store,
      host: o.network.host,
      port,
      maxMessageBytes: o.limits.maxMessageBytes,
      maxRecipients: o.limits.maxRecipients,
      maxConnections: o.limits.maxSmtpConnections,
      admitted,
      // The Maildir store links a spool file into place, so it lies on the data folder's file system; the
      // PostgreSQL store copies it into the database piece by piece, so SMTP's own private temp folder serves.
      ...(core.spoolDir !== undefined ? { spoolDir: core.spoolDir } : {}),
      budget: core.budget,
      security: security(mode),
      chaos: core.chaos,
      delayed: core.delayed,
      log,
    });
    const bound = await server.start().catch((e: unknown) => {
      throw listenError(service, o.network.host, port, e);
    });
    core.shutdown.add(() => server.stop());
    return bound.port;
  };
  const smtpPort = await listen('SMTP', o.network.smtpPort, tls?.starttls ? 'starttls' : undefined);
  const smtpsPort = tls?.implicitPort !== undefined ? await listen('SMTPS', tls.implicitPort, 'implicit') : undefined;
  return { smtpPort, ...(smtpsPort !== undefined ? { smtpsPort } : {}), ...(material ? { material } : {}) };
}

/** Where the started server is opened: from this machine, and for a wildcard bind from others. */
interface Addresses {
  httpUrl: string;
  httpPort: number;
  smtpHost: string;
  reachableUrls: string[];
}

function addressesOf(core: Core, httpPort: number): Addresses {
  const smtpHost = openableHost(core.o.network.host);
  return { httpUrl: `http://${hostForUrl(smtpHost)}:${httpPort}`, httpPort, smtpHost, reachableUrls: core.reachable.map((h) => `http://${h}:${httpPort}`) };
}

/** Writes the server file (where this server listens, with its health proof's key) into the data folder; removed on close. */
async function writeProof(core: Core, at: Addresses, smtpPort: number): Promise<void> {
  const { dataDir } = core.o.store;
  const { log } = core;
  const serverFile = path.join(dataDir, SERVER_FILE);
  const proof: ServerFile = {
    pid: process.pid,
    http: at.httpUrl,
    smtp: `${hostForUrl(at.smtpHost)}:${smtpPort}`,
    key: core.proofKey,
    apiTokenSha256: await tokenDigest(core.o.tokens.apiToken),
    webhookTokenSha256: await tokenDigest(core.o.tokens.webhookToken),
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
  core.shutdown.add(() => fs.rm(serverFile, { force: true }));
}

/** The info lines of a started server: where it listens, who else reaches it, its connection caps, its fault rules. */
function logListening(core: Core, at: Addresses, smtp: SmtpListeners): void {
  const { o, log } = core;
  const { host } = o.network;
  const { caps } = o.limits;
  const smtpAt = `${hostForUrl(at.smtpHost)}:${smtp.smtpPort}`;
  const smtpNotes = [
    o.smtp.tls?.starttls ? 'STARTTLS' : undefined,
    smtp.smtpsPort !== undefined ? `implicit TLS on ${hostForUrl(at.smtpHost)}:${smtp.smtpsPort}` : undefined,
    smtp.material ? `certificate ${smtp.material.certFile}${smtp.material.selfSigned ? ' (self-signed)' : ''}` : undefined,
    o.smtp.auth ? 'login required' : undefined,
  ].filter(Boolean);
  log('info', `listening: HTTP ${at.httpUrl}, SMTP ${smtpAt}${smtpNotes.length ? ` (${smtpNotes.join(', ')})` : ''}, data in ${core.where}`);
  if (isWildcardHost(host)) log('info', `bound to every interface (${host}): other machines open ${at.reachableUrls.join(', ') || 'this machine\'s address'} (SMTP on port ${smtp.smtpPort}); its addresses and host name are allowed as they are, any other name (a compose service, a DNS alias) must be in --allowed-hosts${o.network.allowedHosts.length ? ` (given: ${o.network.allowedHosts.join(', ')})` : ''}`);
  log('info', `connection caps: SMTP ${o.limits.maxSmtpConnections}, HTTP ${o.limits.maxHttpConnections} (${caps.fdLimitSource === 'proc' ? `file-descriptor limit ${caps.fdLimit}` : `no file-descriptor limit to read here: sized for ${caps.fdLimit}, macOS's default`})`);
  if (core.chaos.size > 0) log('info', activeRulesLine(core.chaos.size));
}

export async function startInboxServer(options: InboxServerOptions): Promise<InboxServer> {
  const o = serverSections(options);
  const { tokens } = o;
  // Every component (store, HTTP, SMTP) logs through this: a name or path a sender chose may hold a token.
  const log = redactingLog(o.runtime.log, [tokens.apiToken, tokens.webhookToken, tokens.twilioAuthToken, tokens.providerKey], o.runtime.logLevel);
  // A bad --chaos file stops the start before anything is opened.
  if (o.chaos.rules !== undefined) await new ChaosRules(o.runtime.now, APPLIED_SURFACES).replace(o.chaos.rules);
  const core = await openCore(o, log);
  try {
    const compatCa = await openFeatures(core);
    const at = addressesOf(core, await listenHttp(core, compatCa));
    const smtp = await listenSmtp(core);
    await writeProof(core, at, smtp.smtpPort);
    logListening(core, at, smtp);
    let closing: Promise<void> | undefined;
    return {
      httpUrl: at.httpUrl,
      httpPort: at.httpPort,
      smtpHost: at.smtpHost,
      ...(isWildcardHost(o.network.host) ? { reachable: at.reachableUrls } : {}),
      smtpPort: smtp.smtpPort,
      ...(smtp.smtpsPort !== undefined ? { smtpsPort: smtp.smtpsPort } : {}),
      ...(smtp.material ? { smtpTlsCertFile: smtp.material.certFile } : {}),
      ...(compatCa ? { compatCaFile: compatCa.certFile } : {}),
      store: core.store,
      chaos: core.chaos,
      close: () => (closing ??= core.shutdown.run()),
    };
  } catch (e) {
    await core.shutdown.run();
    throw e;
  }
}
