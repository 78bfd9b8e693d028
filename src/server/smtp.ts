// SMTP ingest: every RCPT `name@domain` delivers into inbox `name` of `domain`, and a message
// is answered 250 only once every recipient's copy is durable in the store. Storage is passed
// in (maildev style). TLS and AUTH (by default: no TLS, any AUTH or none) are smtpSecurity.ts's.

import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { domainProblem, inboxNameProblem, normalizeInbox } from '../core/ids';
import { securityOptions, type SmtpSecurity } from './smtpSecurity';
import { StoreError } from './store/errors';
import type { Store } from './store/types';

/** 25 MB: the message size limit of the large mail providers, so anything real senders produce fits. */
export const DEFAULT_MAX_MESSAGE_BYTES = 25 * 1024 * 1024;
/** On stop, connections still open after this long are told 421 and closed: a local test server should stop promptly. */
export const SMTP_CLOSE_GRACE_MS = 1000;
/** Answer text after a successful delivery; the stored ids follow it. */
export const STORED_REPLY_PREFIX = 'OK: stored as';

type LogLevel = 'info' | 'warn' | 'error';

export interface SmtpServerOptions {
  store: Store;
  /** Interface to bind, e.g. 127.0.0.1. */
  host: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  /** Largest message accepted (advertised with SIZE, 552 beyond it). Default DEFAULT_MAX_MESSAGE_BYTES. */
  maxMessageBytes?: number;
  /** TLS (STARTTLS or implicit) and required credentials; absent: plain SMTP, any AUTH. */
  security?: SmtpSecurity;
  log?: (level: LogLevel, msg: string) => void;
}

export interface InboxSmtpServer {
  /** Starts listening; resolves the bound address. Rejects with the listen error (e.g. EADDRINUSE). */
  start(): Promise<{ host: string; port: number }>;
  /** Stops accepting, closes connections, waits for deliveries in progress. */
  stop(): Promise<void>;
  /** The bound port once started. */
  readonly port: number | undefined;
}

interface SmtpReplyError extends Error {
  responseCode: number;
}

function reply(code: number, text: string): SmtpReplyError {
  return Object.assign(new Error(text), { responseCode: code });
}

/** Splits a recipient address into (domain, inbox), or says why it cannot be delivered. */
export function recipientTarget(address: string): { domain: string; inbox: string } | { problem: string } {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return { problem: `<${address}> is not an address of the form name@domain` };
  const inbox = normalizeInbox(address.slice(0, at));
  const domain = address.slice(at + 1).toLowerCase();
  const problem = domainProblem(domain) ?? (inbox === '*' ? 'inbox * cannot receive messages' : inboxNameProblem(inbox));
  return problem ? { problem: `<${address}>: ${problem}` } : { domain, inbox };
}

export function createSmtpServer(options: SmtpServerOptions): InboxSmtpServer {
  const { store } = options;
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes <= 0) throw new RangeError(`maxMessageBytes must be a positive whole number, got ${String(maxBytes)}`);
  const log = options.log ?? (() => undefined);
  const deliveries = new Set<Promise<unknown>>();
  let boundPort: number | undefined;

  const server = new SMTPServer({
    banner: 'Test Inbox',
    size: maxBytes,
    ...securityOptions(options.security ?? {}),
    disableReverseLookup: true,
    logger: false,
    closeTimeout: SMTP_CLOSE_GRACE_MS,
    onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const target = recipientTarget(address.address);
      if ('problem' in target) return callback(reply(550, `5.1.3 ${target.problem}`));
      callback();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) {
      const chunks: Buffer[] = [];
      let failed = false;
      stream.on('data', (chunk: Buffer) => {
        if (!stream.sizeExceeded) chunks.push(chunk);
      });
      stream.on('error', (e: Error) => {
        failed = true;
        log('warn', `smtp: reading a message failed: ${e.message}`);
        callback(reply(451, '4.3.0 could not read the message, try again'));
      });
      stream.on('end', () => {
        if (failed) return;
        if (stream.sizeExceeded) return callback(reply(552, `5.3.4 message exceeds the fixed maximum message size of ${maxBytes} bytes`));
        const targets: Array<{ domain: string; inbox: string }> = [];
        for (const rcpt of session.envelope.rcptTo) {
          const t = recipientTarget(rcpt.address);
          if (!('problem' in t)) targets.push(t);
        }
        const delivery = store.add(targets, Buffer.concat(chunks), 'smtp').then(
          (metas) => callback(null, `${STORED_REPLY_PREFIX} ${metas.map((m) => m.id).join(' ')}`),
          (e: unknown) => {
            if (StoreError.is(e, 'BAD_TARGET')) return callback(reply(550, `5.1.3 ${e.message}`));
            // RFC 3463 4.3.1 "mail system full": a transient failure, the sender retries once there is room.
            if (StoreError.is(e, 'FULL')) return callback(reply(452, `4.3.1 ${e.message}`));
            log('error', `smtp: could not store a message: ${(e as Error).message}`);
            callback(reply(451, '4.3.0 could not store the message, try again later'));
          },
        );
        deliveries.add(delivery);
        void delivery.finally(() => deliveries.delete(delivery));
      });
    },
  });

  return {
    get port() {
      return boundPort;
    },
    start() {
      return new Promise((resolve, reject) => {
        const onError = (e: Error): void => reject(e);
        server.once('error', onError);
        server.listen(options.port, options.host, () => {
          server.off('error', onError);
          server.on('error', (e: Error) => log('warn', `smtp: ${e.message}`));
          const addr = server.server.address();
          boundPort = typeof addr === 'object' && addr ? addr.port : options.port;
          resolve({ host: options.host, port: boundPort });
        });
      });
    },
    async stop() {
      if (server.server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      while (deliveries.size > 0) await Promise.allSettled([...deliveries]);
    },
  };
}
