// Composes the local inbox server: the Maildir store, the HTTP API on one port and SMTP on
// another, all sharing the store. Used by the CLI (`test-inbox serve`), tests and benches.

import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateToken, SERVER_FILE, type ServerFile, tokenDigest } from './contract';
import { createHttpApi } from './http/index';
import { writePrivateFile } from './privateFile';
import { ByteBudget } from './budget';
import { defaultConnectionCaps, readSoftFdLimit } from './limits';
import { createSmtpServer } from './smtp';
import { MaildirStore } from './store/maildir';
import type { RetentionOptions } from './store/types';
import { VERSION } from './version';

/** On close, HTTP requests still running after this long are cut: a local test server should stop promptly. */
const HTTP_CLOSE_GRACE_MS = 1000;

export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, msg: string) => void;

export interface InboxServerOptions {
  host: string;
  /** 0 picks a free port. */
  httpPort: number;
  /** 0 picks a free port. */
  smtpPort: number;
  dataDir: string;
  apiToken: string;
  webhookToken: string;
  /** Password of the Twilio-compatible API and key of inbound webhook signatures; absent: that API refuses every request. */
  twilioAuthToken?: string;
  defaultDomain: string;
  retention?: Partial<RetentionOptions>;
  /** Largest SMTP message; the SMTP default when absent. */
  maxMessageBytes?: number;
  /** Recipients of one SMTP message; the SMTP default when absent. */
  maxRecipients?: number;
  /** Open SMTP / HTTP connections at once; absent: sized from the file-descriptor limit (limits.ts). */
  maxSmtpConnections?: number;
  maxHttpConnections?: number;
  /** Extra Host header values the HTTP API accepts (besides the loopback names). */
  allowedHosts?: string[];
  log?: Log;
}

export interface InboxServer {
  /** `http://host:port` */
  httpUrl: string;
  smtpHost: string;
  smtpPort: number;
  httpPort: number;
  store: MaildirStore;
  close(): Promise<void>;
}

export type ServerStartErrorCode = 'PORT_IN_USE' | 'LISTEN_FAILED';

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

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function listenError(service: string, host: string, port: number, e: unknown): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `${hostForUrl(host)}:${port}`;
  if (code === 'EADDRINUSE') return new ServerStartError('PORT_IN_USE', `${service} port ${where} is already in use (choose another with --${service.toLowerCase()}-port, or 0 for a free one)`, { cause: e });
  return new ServerStartError('LISTEN_FAILED', `cannot listen for ${service} on ${where}: ${(e as Error).message}`, { cause: e });
}

export async function startInboxServer(options: InboxServerOptions): Promise<InboxServer> {
  const log: Log = options.log ?? (() => undefined);
  const store = new MaildirStore({ dir: options.dataDir, retention: options.retention, log });
  await store.open();
  const cleanups: Array<() => Promise<void>> = [() => store.close()];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  // Per start: the key of the health proof, written only into the data folder (SERVER_FILE).
  const proofKey = generateToken();
  const caps = defaultConnectionCaps(readSoftFdLimit());
  const maxSmtpConnections = options.maxSmtpConnections ?? caps.smtp;
  const maxHttpConnections = options.maxHttpConnections ?? caps.http;
  // One budget for the message bytes every SMTP and HTTP connection holds in memory at once.
  const budget = new ByteBudget();
  try {
    const api = createHttpApi({
      proofKey,
      store,
      apiToken: options.apiToken,
      webhookToken: options.webhookToken,
      twilioAuthToken: options.twilioAuthToken,
      defaultDomain: options.defaultDomain,
      allowedHosts: options.allowedHosts ?? (isLoopback(options.host) ? [] : [options.host, os.hostname()]),
      version: VERSION,
      maxConnections: maxHttpConnections,
      budget,
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

    const smtp = createSmtpServer({
      store,
      host: options.host,
      port: options.smtpPort,
      maxMessageBytes: options.maxMessageBytes,
      maxRecipients: options.maxRecipients,
      maxConnections: maxSmtpConnections,
      spoolDir: store.spoolDir,
      budget,
      log,
    });
    const { port: smtpPort } = await smtp.start().catch((e: unknown) => {
      throw listenError('SMTP', options.host, options.smtpPort, e);
    });
    cleanups.push(() => smtp.stop());

    const httpUrl = `http://${hostForUrl(options.host)}:${httpPort}`;
    const serverFile = path.join(store.dir, SERVER_FILE);
    const proof: ServerFile = {
      pid: process.pid,
      http: httpUrl,
      smtp: `${hostForUrl(options.host)}:${smtpPort}`,
      key: proofKey,
      apiTokenSha256: await tokenDigest(options.apiToken),
      webhookTokenSha256: await tokenDigest(options.webhookToken),
    };
    await writePrivateFile(serverFile, JSON.stringify(proof) + '\n');
    // Removed before the store releases the data folder's lock: the next server writes its own.
    cleanups.push(() => fs.rm(serverFile, { force: true }));
    log('info', `listening: HTTP ${httpUrl}, SMTP ${hostForUrl(options.host)}:${smtpPort}, data in ${store.dir}`);
    log('info', `connection caps: SMTP ${maxSmtpConnections}, HTTP ${maxHttpConnections} (file-descriptor limit ${caps.fdLimit}${caps.fdLimitSource === 'fallback' ? ', assumed' : ''})`);
    let closing: Promise<void> | undefined;
    return {
      httpUrl,
      httpPort,
      smtpHost: options.host,
      smtpPort,
      store,
      close: () => (closing ??= cleanup()),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
