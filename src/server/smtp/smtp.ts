// SMTP ingest: every RCPT `name@domain` delivers into inbox `name` of `domain`, and a message
// is answered 250 only once every recipient's copy is durable in the store. Storage is passed
// in (maildev style). TLS and AUTH (by default: no TLS, any AUTH or none) are smtpSecurity.ts's.

import { promises as fs } from 'node:fs';
import type { Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SMTPServer, type SMTPServerAddress, type SMTPServerAuthentication, type SMTPServerAuthenticationResponse, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { ChaosContext, ChaosFault, ChaosRules, SmtpStage } from '../chaos/rules';
import type { DelayedDeliveries } from '../chaos/delayed';
import { recipientTarget } from '../recipient';
import { BudgetError, ByteBudget } from '../budget';
import { drainInto, SpoolingSink } from '../spool';
import { securityOptions, type SmtpSecurity } from './smtpSecurity';
import { StoreError } from '../store/errors';
import { CODE_SCAN_MAX_BYTES } from '../store/code';
import type { MessageBody, Store } from '../store/types';

/** 25 MB: the message size limit of the large mail providers, so anything real senders produce fits. */

export const DEFAULT_MAX_MESSAGE_BYTES = 25 * 1024 * 1024;
/** On stop, connections still open after this long are told 421 and closed: a local test server should stop promptly. */
const SMTP_CLOSE_GRACE_MS = 1000;
/** Recipients of one message: RFC 5321 §4.5.3.1.8 asks servers to take at least 100; more is refused with 452 4.5.3. */
export const DEFAULT_MAX_RECIPIENTS = 100;
/** Default cap on open SMTP connections when the composition gives none (server.ts sizes it from the file-descriptor limit). */
const DEFAULT_MAX_SMTP_CONNECTIONS = 256;
/** A connection refused past the cap is closed this long after its 421, if the client does not close it first. */
const REFUSED_LINGER_MS = 1000;
/** Answer text after a successful delivery; the stored ids follow it. */
export const STORED_REPLY_PREFIX = 'OK: stored as';

type LogLevel = 'info' | 'warn' | 'error';

interface SmtpServerOptions {
  store: Store;
  /** Interface to bind, e.g. 127.0.0.1. */
  host: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  /** Largest message accepted (advertised with SIZE, 552 beyond it). Default DEFAULT_MAX_MESSAGE_BYTES. */
  maxMessageBytes?: number;
  /** Recipients of one message; past it RCPT is answered 452 4.5.3. Default DEFAULT_MAX_RECIPIENTS. */
  maxRecipients?: number;
  /** Open connections at once; past it a new one is answered 421 4.3.2 and closed. Default DEFAULT_MAX_SMTP_CONNECTIONS. */
  maxConnections?: number;
  /** Sessions counted against maxConnections; pass one set to listeners (SMTP and SMTPS) that share a cap. */
  admitted?: Set<string>;
  /** Where bodies too large to keep in memory are written while they arrive (spool.ts); default a private folder made under the OS temp folder at start. */
  spoolDir?: string;
  /** Message bytes held in memory at once, shared with the HTTP API (budget.ts). */
  budget?: ByteBudget;
  /** TLS (STARTTLS or implicit) and required credentials; absent: plain SMTP, any AUTH. */
  security?: SmtpSecurity;
  /** The fault rules (docs/chaos.md) of the `smtp` surface, shared with the HTTP API that sets them; absent: none. */
  chaos?: ChaosRules;
  /** Where a `delivery` fault rule holds a message until its delay ends; absent: none is held. */
  delayed?: DelayedDeliveries;
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

/** The envelope's sender, once MAIL FROM was accepted. */
function senderOf(session: SMTPServerSession): string | undefined {
  const from = session.envelope.mailFrom;
  return from === false ? undefined : from.address;
}

/** What an SMTPConnection of smtp-server has that this file uses: its greeting handlers, its reply and its session. */
/** smtp-server's connection, as the hooks below use it (its own fields: the SMTP and chaos suites cover them). */
interface ServerConnection {
  /** The session's id (`session.id`). */
  id: string;
  /** The client's socket as smtp-server took it (TCP, or TLS for implicit TLS). */
  _socket: Socket;
  session: SMTPServerSession;
  send(code: number, text: string): void;
  handler_EHLO?: (command: Buffer, callback: () => void) => void;
  handler_HELO?: (command: Buffer, callback: () => void) => void;
}

/** Calls `each` with every connection smtp-server accepts, before its onConnect runs. */
function onEachConnection(server: SMTPServer, each: (conn: ServerConnection) => void): void {
  const connections = server.connections as unknown as Set<ServerConnection>;
  const add = connections.add.bind(connections);
  connections.add = (conn: ServerConnection) => {
    each(conn);
    return add(conn);
  };
}

/**
 * EHLO-stage faults. smtp-server has no hook for EHLO or HELO, so while any fault rule is set,
 * each new connection's own EHLO and HELO handlers are wrapped (the connection's own properties,
 * in front of its class's: smtp-server looks a command's handler up as `handler_<COMMAND>` on the
 * connection). A connection opened with no rule set is not touched. Each greeting command (EHLO,
 * or the HELO a client falls back to) is one evaluation at the `ehlo` stage.
 */
function watchGreetings(conn: ServerConnection, chaos: ChaosRules, faultAt: (session: SMTPServerSession, refuse: (err: SmtpReplyError) => void, proceed: () => void) => boolean): void {
  if (chaos.empty) return;
  for (const name of ['handler_EHLO', 'handler_HELO'] as const) {
    const handler = conn[name];
    if (typeof handler !== 'function') continue;
    conn[name] = (command, callback) => {
      const go = (): void => handler.call(conn, command, callback);
      const refuse = (err: SmtpReplyError): void => {
        conn.send(err.responseCode, err.message);
        callback();
      };
      if (!faultAt(conn.session, refuse, go)) go();
    };
  }
}

/** The limits of one server, checked once: a bad value is a RangeError at creation. */
interface SmtpLimits {
  maxBytes: number;
  maxRecipients: number;
  maxConnections: number;
}

function smtpLimits(options: SmtpServerOptions): SmtpLimits {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes <= 0) throw new RangeError(`maxMessageBytes must be a positive whole number, got ${String(maxBytes)}`);
  const maxRecipients = options.maxRecipients ?? DEFAULT_MAX_RECIPIENTS;
  if (!Number.isSafeInteger(maxRecipients) || maxRecipients < 1) throw new RangeError(`maxRecipients must be a whole number >= 1, got ${String(maxRecipients)}`);
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_SMTP_CONNECTIONS;
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) throw new RangeError(`maxConnections must be a whole number >= 1, got ${String(maxConnections)}`);
  return { maxBytes, maxRecipients, maxConnections };
}

/** What the parts of one SMTP server share: its options, limits and the state of its connections and deliveries. */
interface SmtpState {
  options: SmtpServerOptions;
  limits: SmtpLimits;
  budget: ByteBudget;
  log: (level: LogLevel, msg: string) => void;
  /** Where bodies are spooled; set at start when the options give none (ownSpoolDir, removed at stop). */
  spoolDir: string | undefined;
  ownSpoolDir?: string;
  /** Deliveries in progress: stop waits for them. */
  deliveries: Set<Promise<unknown>>;
  /** Sessions let in (under the cap), until they close; shared by the listeners that share the cap. */
  admitted: Set<string>;
  /**
   * Open sockets by session id, so a refused session's socket can be cut if its client lingers,
   * and a fault's drop or delay finds its connection. Not by address: smtp-server rewrites the
   * session's (an IPv4 client of a dual-stack `::` bind loses its `::ffff:`).
   */
  sockets: Map<string, Socket>;
  /** Timers of faults' delays, cleared when their connection closes or the server stops. */
  delays: Set<NodeJS.Timeout>;
}

/** The fault rules as they apply to sessions: the one evaluation at a stage, a delay that ends with its connection, a drop. */
interface SmtpFaults {
  faultAt(stage: SmtpStage, session: SMTPServerSession, ctx: () => Omit<ChaosContext, 'stage' | 'client'>, refuse: (err: SmtpReplyError) => void, proceed: () => void): boolean;
  later(session: SMTPServerSession, ms: number, then: () => void): void;
  drop(session: SMTPServerSession): void;
}

function smtpFaults(state: SmtpState): SmtpFaults {
  const { sockets, delays } = state;
  const chaos = state.options.chaos;

  /** Cuts a session's connection with no reply (a fault's drop). */
  function drop(session: SMTPServerSession): void {
    sockets.get(session.id)?.destroy();
  }

  /** Runs `then` after `ms` unless the session's connection closes first. */
  function later(session: SMTPServerSession, ms: number, then: () => void): void {
    if (ms <= 0) return then();
    const socket = sockets.get(session.id);
    const timer = setTimeout(() => {
      delays.delete(timer);
      socket?.off('close', cancel);
      then();
    }, ms);
    delays.add(timer);
    const cancel = (): void => {
      clearTimeout(timer);
      delays.delete(timer);
    };
    socket?.once('close', cancel);
  }

  /**
   * The fault rules at one stage of a session: the one evaluation (chaos/rules.ts), asked only
   * when a rule set was given; with no rule it answers at once. Returns false when no rule fires
   * (the caller goes on). When one fires it takes over: after its delay, if any, the connection
   * is dropped, `refuse` gets its reply, or (a delay alone) `proceed` runs.
   */
  function faultAt(stage: SmtpStage, session: SMTPServerSession, ctx: () => Omit<ChaosContext, 'stage' | 'client'>, refuse: (err: SmtpReplyError) => void, proceed: () => void): boolean {
    if (!chaos || chaos.empty) return false;
    const answer = chaos.evaluate('smtp', { stage, client: session.remoteAddress, ...ctx() });
    if (!answer) return false;
    const apply = (fault: ChaosFault | undefined): void => {
      if (!fault) return proceed();
      // A client that leaves during the delay is not answered.
      later(session, fault.delayMs ?? 0, () => {
        if (fault.drop) drop(session);
        else if (fault.reply) refuse(reply(fault.reply.code, fault.reply.text));
        else proceed();
      });
    };
    // A `times` rule on a team server: the stage waits for the database's claim of its firing.
    if (answer instanceof Promise) void answer.then(apply, () => proceed());
    else apply(answer);
    return true;
  }

  return { faultAt, later, drop };
}

/**
 * The one mapping of a failure to take a message to its SMTP reply, wherever it happened
 * (receiving, spooling, storing): a full disk is 452 4.3.1 (RFC 3463 "mail system full", the
 * sender retries once there is room), a refused recipient 550, anything else 451 4.3.0.
 */
function replyOf(e: unknown, what: string, log: SmtpState['log']): SmtpReplyError {
  if (typeof (e as Partial<SmtpReplyError>).responseCode === 'number') return e as SmtpReplyError;
  if (StoreError.is(e, 'bad_target')) return reply(550, `5.1.3 ${e.message}`);
  if (StoreError.is(e, 'full')) {
    log('warn', `smtp: ${what}: ${e.message}`);
    return reply(452, `4.3.1 ${e.message}`);
  }
  // A folder of the inbox is a symlink: refused, with the reason, until the data dir is mended.
  if (StoreError.is(e, 'unsafe')) {
    log('error', `smtp: ${what}: ${e.message}`);
    return reply(451, `4.3.0 ${e.message}`);
  }
  if (BudgetError.is(e, 'CLOSED')) return reply(451, '4.3.2 the server is stopping, try again later');
  log(StoreError.is(e) ? 'error' : 'warn', `smtp: ${what}: ${(e as Error).message}`);
  return reply(451, '4.3.0 could not store the message, try again later');
}

/** Streams the body into a spool sink (spool.ts), then stores it; resolves the reply text or rejects with an SMTP reply. */
async function receive(state: SmtpState, stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
  const { maxBytes } = state.limits;
  const { store, delayed } = state.options;
  const log = state.log;
  const sink = new SpoolingSink({ budget: state.budget, dir: state.spoolDir!, maxBytes });
  try {
    await drainInto(stream, sink);
  } catch (e) {
    throw replyOf(e, 'reading a message failed', log);
  }
  const body = sink.received();
  try {
    if (stream.sizeExceeded) throw reply(552, `5.3.4 message exceeds the fixed maximum message size of ${maxBytes} bytes`);
    const targets: Array<{ domain: string; inbox: string }> = [];
    for (const rcpt of session.envelope.rcptTo) {
      const t = recipientTarget(rcpt.address);
      if (!('problem' in t)) targets.push(t);
    }
    let raw: MessageBody;
    try {
      // A spooled body stays in its file: the store links it into place (store/types.ts FileBody).
      raw = await body.body(CODE_SCAN_MAX_BYTES);
    } catch (e) {
      throw replyOf(e, 'reading a spooled message failed', log);
    }
    try {
      const due = await delayed?.hold(targets, raw, 'smtp', { sender: senderOf(session) });
      // Durable now, visible when its delay ends (a delivery fault rule): acknowledged like any message.
      if (due !== undefined) return `OK: accepted, visible from ${new Date(due).toISOString()} (a delivery fault rule, docs/chaos.md)`;
      const metas = await store.add(targets, raw, 'smtp');
      return `${STORED_REPLY_PREFIX} ${metas.map((m) => m.id).join(' ')}`;
    } catch (e) {
      throw replyOf(e, 'could not store a message', log);
    }
  } finally {
    await body.dispose();
  }
}

/** DATA: the body is received and stored (receive), unless a fault at the `data` stage drops, refuses or delays it. */
function onData(state: SmtpState, faults: SmtpFaults, stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void): void {
  const { deliveries } = state;
  const chaos = state.options.chaos;
  const deliver = (delayMs = 0): void => {
    const delivery = receive(state, stream, session).then(
      (message) => faults.later(session, delayMs, () => callback(null, message)),
      (e: unknown) => callback(e as Error),
    );
    deliveries.add(delivery);
    void delivery.finally(() => deliveries.delete(delivery));
  };
  // A fault at DATA: a drop cuts the connection while the body arrives; a reply comes after
  // the body, which is read and thrown away (a refused message is not stored); a delay alone
  // holds back the 250 of a message already stored, as a slow server does.
  const apply = (fault: ChaosFault | undefined): void => {
    if (!fault) return deliver();
    if (fault.drop) {
      stream.resume();
      return faults.drop(session);
    }
    if (!fault.reply) return deliver(fault.delayMs);
    const refusal = reply(fault.reply.code, fault.reply.text);
    stream.on('end', () => faults.later(session, fault.delayMs ?? 0, () => callback(refusal)));
    stream.resume();
  };
  const answer = !chaos || chaos.empty ? undefined : chaos.evaluate('smtp', { stage: 'data', client: session.remoteAddress, sender: senderOf(session), recipients: session.envelope.rcptTo.map((r) => r.address) });
  // A `times` rule on a team server: the body waits in the socket for the database's claim of its firing.
  if (answer instanceof Promise) void answer.then(apply, () => deliver());
  else apply(answer);
}

/** smtp-server with this server's hooks: the connection cap, AUTH, the recipient rules, DATA, and the fault rules at every stage. */
function smtpServer(state: SmtpState, faults: SmtpFaults): SMTPServer {
  const { admitted, sockets } = state;
  const { maxBytes, maxRecipients, maxConnections } = state.limits;
  const { faultAt } = faults;
  const security = securityOptions(state.options.security ?? {});
  const server = new SMTPServer({
    banner: 'Test Inbox',
    size: maxBytes,
    ...security,
    onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, callback: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void) {
      const go = (): void => security.onAuth!(auth, session, callback);
      if (!faultAt('auth', session, () => ({}), callback, go)) go();
    },
    disableReverseLookup: true,
    logger: false,
    closeTimeout: SMTP_CLOSE_GRACE_MS,
    onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (admitted.size < maxConnections) {
        admitted.add(session.id);
        if (faultAt('connect', session, () => ({}), callback, () => callback())) return;
        return callback();
      }
      // Closed by smtp-server after the reply; a client that keeps its end open is cut soon after.
      const socket = sockets.get(session.id);
      if (socket) setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      callback(reply(421, `4.3.2 too many connections (${maxConnections} open), try again in a moment`));
    },
    onClose(session: SMTPServerSession) {
      admitted.delete(session.id);
    },
    onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (!faultAt('mail', session, () => ({ sender: address.address }), callback, () => callback())) callback();
    },
    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      if (session.envelope.rcptTo.length >= maxRecipients) return callback(reply(452, `4.5.3 too many recipients: at most ${maxRecipients} per message, send the rest in another`));
      const target = recipientTarget(address.address);
      if ('problem' in target) return callback(reply(550, `5.1.3 ${target.problem}`));
      if (!faultAt('rcpt', session, () => ({ sender: senderOf(session), recipients: [address.address] }), callback, () => callback())) callback();
    },
    onData: (stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) => onData(state, faults, stream, session, callback),
  });
  const chaos = state.options.chaos;
  onEachConnection(server, (conn) => {
    const { id, _socket: socket } = conn;
    sockets.set(id, socket);
    socket.once('close', () => sockets.delete(id));
    if (chaos) watchGreetings(conn, chaos, (session, refuse, proceed) => faultAt('ehlo', session, () => ({}), refuse, proceed));
  });
  return server;
}

/** Listens (making a private spool folder when none was given); resolves the bound address. */
async function startListening(state: SmtpState, server: SMTPServer): Promise<{ host: string; port: number }> {
  const { options, log } = state;
  if (state.spoolDir === undefined) state.spoolDir = state.ownSpoolDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-spool-'));
  return new Promise((resolve, reject) => {
    const onError = (e: Error): void => reject(e);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      server.on('error', (e: Error) => log('warn', `smtp: ${e.message}`));
      const addr = server.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : options.port;
      resolve({ host: options.host, port });
    });
  });
}

/** Clears the faults' delays, stops listening, waits for the deliveries in progress, removes its own spool folder. */
async function stopListening(state: SmtpState, server: SMTPServer): Promise<void> {
  for (const timer of state.delays) clearTimeout(timer);
  state.delays.clear();
  if (server.server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  while (state.deliveries.size > 0) await Promise.allSettled([...state.deliveries]);
  if (state.ownSpoolDir) await fs.rm(state.ownSpoolDir, { recursive: true, force: true });
}

export function createSmtpServer(options: SmtpServerOptions): InboxSmtpServer {
  const state: SmtpState = {
    options,
    limits: smtpLimits(options),
    budget: options.budget ?? new ByteBudget(),
    log: options.log ?? (() => undefined),
    spoolDir: options.spoolDir,
    deliveries: new Set(),
    admitted: options.admitted ?? new Set<string>(),
    sockets: new Map(),
    delays: new Set(),
  };
  const server = smtpServer(state, smtpFaults(state));
  let boundPort: number | undefined;
  return {
    get port() {
      return boundPort;
    },
    async start() {
      const bound = await startListening(state, server);
      boundPort = bound.port;
      return bound;
    },
    stop: () => stopListening(state, server),
  };
}
