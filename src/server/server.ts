// Composes the local inbox server: the Maildir store, the HTTP API on one port and SMTP on
// another, all sharing the store. Used by the CLI (`test-inbox serve`), tests and benches.

import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { encodeFileName } from '../core/fileNames';
import { redact } from '../core/redact';
import { generateToken, SERVER_FILE, type ServerFile, tokenDigest } from './contract';
import { createHttpApi } from './http/index';
import { writePrivateFile } from './privateFile';
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

/**
 * The forms in which a token can reach a log line: as given, and as a file name (an inbox named
 * like the token is stored lower-case and encoded, and the store logs paths). Case is ignored
 * when redacting.
 */
export function secretForms(secrets: ReadonlyArray<string | undefined>): string[] {
  return secrets.flatMap((s) => (s ? [s, encodeFileName(s.toLowerCase())] : []));
}

/** `log` with the given secrets (and anything shaped like a token) redacted from every line: the one gate of every log path of the server. */
export function redactingLog(log: Log, secrets: ReadonlyArray<string | undefined>): Log {
  const forms = secretForms(secrets);
  return (level, msg) => log(level, redact(msg, forms));
}

export async function startInboxServer(options: InboxServerOptions): Promise<InboxServer> {
  // Every component (store, HTTP, SMTP) logs through this: a name or path a sender chose may hold a token.
  const log: Log = redactingLog(options.log ?? (() => undefined), [options.apiToken, options.webhookToken, options.twilioAuthToken]);
  const store = new MaildirStore({ dir: options.dataDir, retention: options.retention, log });
  await store.open();
  const cleanups: Array<() => Promise<void>> = [() => store.close()];
  const cleanup = async (): Promise<void> => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  // Per start: the key of the health proof, written only into the data folder (SERVER_FILE).
  const proofKey = generateToken();
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

    const smtp = createSmtpServer({ store, host: options.host, port: options.smtpPort, maxMessageBytes: options.maxMessageBytes, log });
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
