// The HTTP API of the local inbox server: every endpoint of docs/api.md §4 plus the
// Mailinator-compatible extras (route table in docs/api.md). Codes against the
// Store interface only; returns a node:http server that is not listening yet. This file is the
// composition: host check, routing, API-token check and error mapping; the resources live in
// api/ (domains, inboxes, messages, stream, webhooks), sharing one ApiContext.
import { promises as fs } from 'node:fs';
import http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Socket } from 'node:net';
import { ALL_INBOXES, PRIVATE_DOMAIN, domainProblem } from '../../core/ids';
import type { HealthResponse } from '../../core/wire';
import { hmacHex, tokenProofKey } from '../../core/proof';
import { HEALTH_CHALLENGE_PARAM, MAX_CHALLENGE_LENGTH } from '../../core/proof';
import { ALLOWED_HOSTS_ENV, healthProof } from '../../shared/contract';
import { BudgetError, ByteBudget } from '../budget';
import { StoreError } from '../store/errors';
import type { Store } from '../store/types';
import type { ApiContext } from './api/context';
import { listDomains } from './api/domains';
import { clearInbox, injectMessage, listInbox } from './api/inboxes';
import { latestResource } from './api/latest';
import { messageResource } from './api/messages';
import { openStream } from './api/stream';
import { totpResource } from './api/totp';
import { chaosResource, isChaosRoute } from './api/chaos';
import { APPLIED_SURFACES, ChaosRules, serverRuleId } from '../chaos/rules';
import type { DelayedDeliveries } from '../chaos/delayed';
import { searchResource } from './api/search';
import { SearchBodyCache } from './api/searchBodyCache';
import { receiveWebhook } from './api/webhooks';
import { handleUi, SessionStreams, type UiDeps } from './ui/index';
import { MemoryRevocations, type Revocations, SessionKeys } from './ui/session';
import { AuthConfigError, HostCheck, TokenCheck, apiTokenOf, checkToken } from './auth';
import { DEFAULT_MAX_BODY_BYTES } from './body';
import { ComposeError } from './compose';
import { HttpError, badRequest, notFound } from './errors';
import { answerOAuthProbe, handleMcp } from './mcp';
import { WorkerPool } from '../workers/pool';
import { sendError, sendJson } from './respond';
import { injectFetch } from './inject';
import { allowedMethods, isTwilioRoute, matchRoute, parseUrl, type ParsedUrl, type Route } from './routes';
import { classify, ROUTES, type ServerLimits, UNPROVEN_POOL_BYTES } from './table';
import { beginExchange, prove } from './exchange';
import { StreamHub } from './stream';
import { tokenSeparationProblem, TWILIO_API_PREFIX } from '../../shared/contract';
import { type TwilioContext, handleTwilio } from './twilio/api';
import { TwilioApiError, fromHttpError, fromInjected, sendTwilioError } from './twilio/errors';
import { InjectedFailure } from './fault';
import { TwilioSidIndex } from './twilio/sidIndex';
import { type Clock, systemClock } from '../clock';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../smtp/smtp';
import type { ProviderContext } from './providers/context';
import { handleProvider } from './providers/index';
import type { CompatOptions } from './compat/options';
import { openTunnel } from './compat/connect';
import { PROXIED_HOSTS, type ProxiedApi } from './compat/hosts';
import { handleMailosaur } from './compat/mailosaur';
import type { LocalCa } from '../tls/localCa';
import type { TLSSocket } from 'node:tls';
import { type CompatDeps, handleCompat, ReadMarks } from './compat/index';


/** While closing, idle keep-alive connections are closed this often (instead of waiting out the keep-alive timeout). */
const CLOSE_SWEEP_MS = 20;
/** Default cap on open connections when the composition gives none (server.ts sizes it from the file-descriptor limit). */
const DEFAULT_MAX_HTTP_CONNECTIONS = 256;
/** A request's headers must arrive within this: a client that trickles them holds a descriptor for nothing. */
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** A whole request (headers and body, at most maxBodyBytes) must arrive within this: 1 MiB in 30 s is ~35 KB/s, far below any local client. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let a trickle run a minute). */
const TIMEOUT_CHECK_MS = 1_000;
/** A connection past the cap is answered 503 on its first request; one that sends none is closed after this. */
const OVER_CAP_LINGER_MS = 1_000;
/** After an answer to malformed HTTP or a timeout (408) ends the server's side, the socket is destroyed this much later, whatever the client does. */
const CLIENT_ERROR_LINGER_MS = 1_000;
/** `Retry-After` of a 503 while the message database does not answer (its bound passed, its pool busy, it is away). */
const DB_RETRY_AFTER_SECONDS = 2;

type LogLevel = 'info' | 'warn' | 'error';

export interface HttpApiOptions {
  store: Store;
  apiToken: string;
  webhookToken: string;
  /**
   * Password of the Twilio-compatible Messages API and key of inbound Twilio webhook
   * signatures. Absent: that API refuses every request and form webhooks go unverified.
   */
  twilioAuthToken?: string;
  /** Key of the email provider APIs (providers/, docs/providers.md). Absent: those routes refuse every request. */
  providerKey?: string;
  /** Where the web UI records signed-out sessions and used tickets: the team server's database; else this process's memory. */
  uiRevocations?: Revocations;
  /** How often a web UI push stream checks that its session holds (ui/index.ts SessionStreams); tests shorten it. */
  uiSessionCheckMs?: number;
  /** The server's one clock (clock.ts); default the system clock. */
  clock?: Clock;
  /** Where a provider API's composed message past 256 KB is written (the Maildir's spool folder); default a private temp folder. */
  spoolDir?: string;
  /** Largest message a provider API stores: the SMTP message size (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Domain that writes to `private` go to. */
  defaultDomain: string;
  /** The origin users reach this server at behind a TLS proxy: the web UI's Origin check accepts it, and an https one makes its cookie Secure. */
  publicUrl?: string;
  /** Host header values allowed besides localhost, 127.0.0.1 and [::1] (any port). */
  allowedHosts?: string[];
  version: string;
  log?: (level: LogLevel, msg: string) => void;
  maxBodyBytes?: number;
  /** The server file's key: `/healthz?challenge=` answers its HMAC proof (contract.ts, SERVER_FILE). */
  proofKey?: string;
  /** Message bytes held in memory at once, shared with SMTP (budget.ts): a request body waits for its share before it is read. */
  budget?: ByteBudget;
  /** Bytes of stored messages read at once (api/read.ts): its own budget, so reads never hold back intake. */
  readBudget?: ByteBudget;
  /** Open connections served at once; past it a request is answered 503. Default DEFAULT_MAX_HTTP_CONNECTIONS. */
  maxConnections?: number;
  /** Default DEFAULT_HEADERS_TIMEOUT_MS. */
  headersTimeoutMs?: number;
  /** Default DEFAULT_REQUEST_TIMEOUT_MS. */
  requestTimeoutMs?: number;
  /** The fault rules (docs/chaos.md) the provider and Twilio routes apply and /api/v2/chaos sets; the server shares them with SMTP. Default: a set of its own. */
  chaos?: ChaosRules;
  /** Where `delivery` rules hold messages until their delay ends (docs/chaos.md); absent: such rules are refused. */
  delayed?: DelayedDeliveries;
  /** The server's MIME worker threads, shared with its store (codes after the acknowledgement); its owner stops them. Default: a pool of its own. */
  mime?: WorkerPool;
  /** The drop-in APIs (`--compat`, docs/compat.md); absent: off, and their routes are not answered. */
  compat?: CompatOptions;
  /** The CONNECT proxy's CA (tls/localCa.ts), with `compat` only; absent: CONNECT is answered 405 (the team server, docs/compat.md). */
  compatCa?: LocalCa;
}

export interface HttpApi {
  server: http.Server;
  /** The server-wide limits every route's caps derive from (table.ts routeCaps). */
  readonly limits: ServerLimits;
  /** The pool that bodies of requests with no proven credential are held in (table.ts), apart from the shared budget. */
  readonly unprovenPool: ByteBudget;
  /** Long-polls (`?wait=`) waiting now, in-process ones (/mcp's tool calls) included. */
  readonly pendingWaits: number;
  /** The in-process transport /mcp's tools call through (inject.ts): it reaches only what the API token opens, never /api/v2/chaos. */
  inProcessFetch(): typeof fetch;
  /** Ends open streams and long-polls, then closes the server (when listening). */
  close(): Promise<void>;
}

export function createHttpApi(options: HttpApiOptions): HttpApi {
  const api = new Api(options);
  return {
    server: api.server,
    limits: api.limits,
    unprovenPool: api.unprovenPool,
    get pendingWaits() {
      return api.pendingWaits;
    },
    inProcessFetch: () => api.inProcessFetch(),
    close: () => api.close(),
  };
}

class Api {
  readonly server: http.Server;
  readonly limits: ServerLimits;
  /** Bodies read before their request proved a credential (a sign-in): never the shared budget. */
  readonly unprovenPool = new ByteBudget(UNPROVEN_POOL_BYTES);

  get pendingWaits(): number {
    return this.#polls.size;
  }
  readonly #apiToken: TokenCheck;
  readonly #hosts: HostCheck;
  readonly #version: string;
  readonly #proofKey: string | undefined;
  /** The API token's proof key (core/proof.ts), derived once at start; the token itself is not kept. */
  readonly #tokenProofKey: Promise<string>;
  readonly #log: (level: LogLevel, msg: string) => void;
  readonly #hub: StreamHub;
  readonly #mime: WorkerPool;
  /** Stops #mime on close: a pool this API made itself. */
  readonly #ownMime: boolean;
  /** Pending long-polls: each ends its wait when called. */
  readonly #polls = new Set<() => void>();
  readonly #ctx: ApiContext;
  readonly #ui: UiDeps;
  readonly #twilio: TwilioContext;
  readonly #chaos: ChaosRules;
  readonly #providers: ProviderContext;
  /** Removes the providers' own spool folder, when they made one. */
  readonly #disposeProviders: () => Promise<void>;
  readonly #maxConnections: number;
  /** The drop-in APIs (`--compat`); undefined: off, their routes 404. */
  readonly #compat: CompatDeps | undefined;
  /** Sockets accepted past the cap: their requests are answered 503 and they are closed. */
  readonly #overCap = new WeakSet<Socket>();
  #open = 0;
  #closing = false;
  readonly #compatCa: LocalCa | undefined;
  /** The decrypted streams of open CONNECT tunnels (compat/connect.ts), with their targets: not counted again under the cap. */
  readonly #tunnels = new WeakMap<Socket, string>();

  constructor(o: HttpApiOptions) {
    const sameTokens = tokenSeparationProblem(o);
    if (sameTokens !== undefined) throw new AuthConfigError('same_tokens', sameTokens);
    const twilioToken = o.twilioAuthToken === undefined ? undefined : new TokenCheck(o.twilioAuthToken, 'Twilio auth token');
    this.#mime = o.mime ?? new WorkerPool();
    this.#ownMime = o.mime === undefined;
    this.#apiToken = new TokenCheck(o.apiToken, 'API token');
    const webhookToken = new TokenCheck(o.webhookToken, 'webhook token');
    const defaultDomain = o.defaultDomain.toLowerCase();
    const problem = domainProblem(defaultDomain);
    if (problem || defaultDomain === PRIVATE_DOMAIN) throw new TypeError(`defaultDomain ${JSON.stringify(o.defaultDomain)}: ${problem ?? 'must be a real domain'}`);
    this.#hosts = new HostCheck(o.allowedHosts);
    this.#version = o.version;
    this.#proofKey = o.proofKey;
    this.#tokenProofKey = tokenProofKey(o.apiToken);
    this.#log = o.log ?? (() => undefined);
    const maxBody = o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    if (!Number.isSafeInteger(maxBody) || maxBody < 1) throw new RangeError(`maxBodyBytes must be a whole number >= 1, got ${String(o.maxBodyBytes)}`);
    this.#hub = new StreamHub(o.store);
    const messages = new TwilioSidIndex(o.store, o.delayed);
    const budget = o.budget ?? new ByteBudget();
    // Without the server's held messages (chaos/delayed.ts) a delivery rule would do nothing: refused.
    this.#chaos = o.chaos ?? new ChaosRules(o.clock ? () => (o.clock as Clock).now() : Date.now, o.delayed ? APPLIED_SURFACES : APPLIED_SURFACES.filter((s) => s !== 'delivery'), serverRuleId);
    this.#twilio = { messages, authToken: twilioToken, defaultDomain, maxBody, budget, chaos: this.#chaos };
    [this.#providers, this.#disposeProviders] = providerContext(o, budget, this.#mime, this.#twilio, this.#chaos, (what, err) => this.#toHttpError(what, err));
    this.#ctx = { store: o.store, hub: this.#hub, mime: this.#mime, budget, readBudget: o.readBudget ?? new ByteBudget(), searchBodies: new SearchBodyCache(), webhookToken, twilio: this.#twilio, twilioAuthToken: o.twilioAuthToken, defaultDomain, maxBody, polls: this.#polls, closing: () => this.#closing };
    this.#ui = {
      apiToken: this.#apiToken,
      requireApiToken: (req, query) => this.#requireApiToken(req, query),
      sessions: new SessionKeys(o.apiToken, o.clock ? () => (o.clock as Clock).now() : Date.now),
      revocations: o.uiRevocations ?? new MemoryRevocations(),
      limits: { maxBody, budget },
      secure: o.publicUrl !== undefined && new URL(o.publicUrl).protocol === 'https:',
      ...(o.publicUrl !== undefined ? { publicOrigin: new URL(o.publicUrl).origin } : {}),
      streams: new SessionStreams(o.clock ? () => (o.clock as Clock).now() : Date.now, o.uiSessionCheckMs),
      dispatch: (route, method, req, res, url) => this.#dispatch(route, method, req, res, url),
    };
        this.#compatCa = o.compat ? o.compatCa : undefined;
    this.#compat =
      o.compat === undefined
        ? undefined
        : { ctx: this.#ctx, reads: new ReadMarks(o.store), apiToken: this.#apiToken, open: o.compat.open, loopbackOnly: () => this.#loopbackOnly(), version: o.version };
    this.#maxConnections = o.maxConnections ?? DEFAULT_MAX_HTTP_CONNECTIONS;
    if (!Number.isSafeInteger(this.#maxConnections) || this.#maxConnections < 1) throw new RangeError(`maxConnections must be a whole number >= 1, got ${String(o.maxConnections)}`);
    const headersTimeout = o.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
    const requestTimeout = Math.max(o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout);
    this.limits = { requestTimeoutMs: requestTimeout, maxConnections: this.#maxConnections, unprovenPoolBytes: this.unprovenPool.capacity };
    this.server = http.createServer(
      {
        // The Host checks are ours (#checkHost): Node's own answers a bare 400 without JSON.
        requireHostHeader: false,
        headersTimeout,
        requestTimeout,
        connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, headersTimeout),
      },
      (req, res) => {
        if (this.#overCap.has(req.socket)) return this.#refuseOverCap(res);
        this.#handle(req, res).catch((err: unknown) => this.#fail(req, res, err));
      },
    );
    this.server.on('connection', (socket: Socket) => this.#accept(socket));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.#clientError(err, socket));
    // CONNECT never reaches the request handler; without a listener Node drops the socket silently.
    this.server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
      // The socket is this handler's from here: Node's own error listener is gone, so a client
      // that resets it (before or after the answer) would otherwise be an unhandled 'error' that
      // ends the process.
      socket.on('error', () => socket.destroy());
      const ca = this.#compatCa;
      if (ca) {
        if (this.#overCap.has(socket)) return rawJsonReply(socket, '503 Service Unavailable', `the server has ${this.#maxConnections} connections open, its limit; try again in a moment`, { 'retry-after': '1' });
        return openTunnel(
          {
            ca,
            handshakeTimeoutMs: headersTimeout,
            refuse: (s, status, message) => rawJsonReply(s, status, message),
            serve: (tls: TLSSocket, target: string) => {
              this.#tunnels.set(tls, target);
              this.server.emit('connection', tls);
            },
            log: (msg) => this.#log('warn', msg),
          },
          req,
          socket,
          head,
        );
      }
      rawJsonReply(socket, '405 Method Not Allowed', `method ${req.method ?? 'CONNECT'} is not supported; use ${SERVED_METHODS.join(', ')} (the CONNECT proxy for Mailosaur's SDK is served with --compat on a local server: docs/compat.md)`, { allow: SERVED_METHODS.join(', ') });
    });
  }

  /** Counts open connections; one past the cap is marked, answered 503 on its request, and closed soon in any case. */
  #accept(socket: Socket): void {
    // A tunnel's stream is the connection it arrived on, counted when that was accepted.
    if (this.#tunnels.has(socket)) return;
    this.#open++;
    socket.once('close', () => this.#open--);
    if (this.#open <= this.#maxConnections) return;
    this.#overCap.add(socket);
    setTimeout(() => socket.destroy(), OVER_CAP_LINGER_MS).unref();
  }

  #refuseOverCap(res: http.ServerResponse): void {
    sendError(res, new HttpError(503, 'unavailable', `the server has ${this.#maxConnections} connections open, its limit; try again in a moment`), { connection: 'close', 'retry-after': '1' });
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#hub.close();
    this.#compat?.reads.dispose();
    this.unprovenPool.close();
    if (this.#ownMime) void this.#mime.close();
    for (const end of [...this.#polls]) end();
    if (!this.server.listening) return this.#disposeProviders();
    await new Promise<void>((resolve) => {
      // Connections whose last response (an ended stream, an answered long-poll, an in-flight
      // request) finishes after this point become idle later: sweep them until none is left.
      const sweep = setInterval(() => this.server.closeIdleConnections(), CLOSE_SWEEP_MS);
      this.server.close(() => {
        clearInterval(sweep);
        resolve();
      });
      this.server.closeIdleConnections();
    });
    await this.#disposeProviders();
  }

  /** Malformed HTTP (bad request line, oversized headers): a JSON answer, then the socket closes. */
  #clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    if (!socket.writable || (err.code === 'ECONNRESET' && !socket.bytesWritten)) {
      socket.destroy();
      return;
    }
    let status = '400 Bad Request';
    let message = 'malformed HTTP request';
    const extra: Record<string, string> = {};
    if (err.code === 'HPE_INVALID_METHOD' && REQUEST_LINE.test((err as { rawPacket?: Buffer }).rawPacket?.toString('latin1') ?? '')) {
      status = '405 Method Not Allowed';
      message = `the request method is not supported; use ${SERVED_METHODS.join(', ')}`;
      extra.allow = SERVED_METHODS.join(', ');
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      status = '431 Request Header Fields Too Large';
      message = 'request headers are too large';
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = '408 Request Timeout';
      message = 'the request was not received in time';
    }
    rawJsonReply(socket, status, message, extra);
    // The answer ends the server's side (and with it every grant of the socket's exchange,
    // budget.ts); a client that keeps its own side open does not keep the descriptor.
    setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
  }

  /** Answers a failed request: Twilio's error shape under Twilio's API path, ours elsewhere. */
  #fail(req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void {
    const twilio = (req.url ?? '').startsWith(`${TWILIO_API_PREFIX}/`);
    if (TwilioApiError.is(err)) {
      sendTwilioError(res, err);
      return;
    }
    if (twilio && InjectedFailure.is(err)) {
      sendTwilioError(res, fromInjected(err));
      return;
    }
    const httpError = this.#toHttpError(describe(req), err);
    if (twilio) sendTwilioError(res, fromHttpError(httpError));
    else sendError(res, httpError);
  }

  #toHttpError(what: string, err: unknown): HttpError {
    if (HttpError.is(err)) return err;
    // A wait for memory ended: the server is stopping (or the client left, and hears nothing).
    if (BudgetError.is(err)) return new HttpError(503, 'unavailable', err.message, { connection: 'close', 'retry-after': '1' });
    if (ComposeError.is(err)) return badRequest('bad_field', err.message);
    if (StoreError.is(err)) {
      switch (err.code) {
        case 'bad_target':
          return badRequest('bad_name', err.message);
        case 'bad_cursor':
          return badRequest('bad_param', err.message);
        case 'not_found':
          return notFound('message not found');
        case 'not_open':
          return new HttpError(503, 'unavailable', 'the message store is not open');
        case 'db_unreachable':
        case 'db_auth':
          this.#log('warn', `${what}: ${err.message}`);
          // Retry-After: the client may try again in a moment (a pool that was busy, a database restarting).
          return new HttpError(503, 'unavailable', 'the message database is unreachable; try again shortly', { 'retry-after': String(DB_RETRY_AFTER_SECONDS) });
        case 'full':
          this.#log('warn', `${what}: ${err.message}`);
          return new HttpError(507, 'insufficient_storage', err.message);
        case 'unsafe':
          this.#log('error', `${what}: refused: ${err.message}`);
          return new HttpError(500, 'internal', err.message);
        case 'io':
          this.#log('error', `${what}: storage failed: ${err.message}`);
          return new HttpError(500, 'internal', 'the message store failed to read or write; see the server log');
      }
    }
    this.#log('error', `${what}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return new HttpError(500, 'internal', 'internal error; see the server log');
  }

  /**
   * RFC 9112 §3.2: exactly one Host header (400 otherwise). The server it names, or the
   * authority of an absolute-form target (which takes its place, §3.2.2), must be this one (421).
   */
  #checkHost(req: http.IncomingMessage): void {
    let hosts = 0;
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') hosts++;
    if (hosts === 0) throw badRequest('bad_request', 'the request has no Host header');
    if (hosts > 1) throw badRequest('bad_request', 'the request has more than one Host header');
    const authority = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/i.exec(req.url ?? '')?.[1];
    const host = authority ?? req.headers.host ?? '';
    if (!this.#hosts.allows(host)) {
      throw new HttpError(421, 'misdirected', `${authority === undefined ? 'Host' : 'the host of the request target'} ${JSON.stringify(host.slice(0, 100))} is not allowed: this server answers to localhost, its loopback and own addresses and host name, and the names of --allowed-hosts (or env ${ALLOWED_HOSTS_ENV}); start it with --allowed-hosts naming this one`);
    }
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const target = this.#tunnels.get(req.socket);
    if (target === undefined) this.#checkHost(req);
    else checkTunnelHost(req, target);
    const url = parseUrl(req.url);
    // The router's table (table.ts): the entry names the credential that gates the route and
    // what a request may read before proving it; the body reader holds it to that (exchange.ts).
    const hit = classify(url);
    // Inside a tunnel only the emulated API its target names answers.
    if (target !== undefined && !tunnelServes(PROXIED_HOSTS.get(target), hit)) throw notFound(`unknown route ${req.method ?? 'GET'} ${url.path} on ${target}`);
    beginExchange(req, { bytes: ROUTES[hit.name].unprovenBytes, pool: this.unprovenPool });
    // HEAD is GET without the body: Node's response drops the body of a HEAD request itself.
    const head = req.method === 'HEAD';
    const method = head ? 'GET' : (req.method ?? 'GET');
    switch (hit.kind) {
      case 'provider':
        // The email provider APIs answer in their providers' shapes and hold their bodies to their providers' limits.
        return handleProvider(this.#providers, this.#ctx.budget, req, res, hit.provider, describe(req));
      case 'mcp':
        return handleMcp({ apiToken: this.#apiToken, version: this.#version, maxBody: this.#ctx.maxBody, budget: this.#ctx.budget, defaultDomain: this.#ctx.defaultDomain, inProcess: this.inProcessFetch() }, req, res);
      case 'oauthProbe':
        return answerOAuthProbe(res);
      case 'ui':
        return handleUi(this.#ui, req, res, url, method);
      case 'unknown':
        throw notFound(`unknown route ${method} ${url.path}`);
      case 'mailosaur':
        if (!this.#compat) throw notFound(`unknown route ${method} ${url.path}: Mailosaur's API is served with --compat (docs/compat.md)`);
        return handleMailosaur({ ctx: this.#ctx, apiToken: this.#apiToken, toHttpError: (what, err) => this.#toHttpError(what, err) }, req, res, hit.route, url.query, method);
      case 'api':
        return this.#api(hit.route, head, method, req, res, url);
      case 'compat': {
        if (this.#compat) return handleCompat(this.#compat, req, res, hit.route, method, url.query);
        // Off: the paths answer as before --compat existed (`/api/v2/search?kind=` is this API's own search).
        const own = matchRoute(url.segments);
        if (own) return this.#api(own, head, method, req, res, url);
        throw notFound(`unknown route ${method} ${url.path}: Mailpit's, MailHog's and Inbucket's APIs are served with --compat (docs/compat.md)`);
      }
    }
  }

  /** Whether the server listens on loopback addresses alone (the drop-in APIs then take no token). */
  #loopbackOnly(): boolean {
    const a = this.server.address();
    if (a === null || typeof a === 'string') return false;
    return /^(127\.|::1$|::ffff:127\.)/.test(a.address);
  }

  /**
   * The in-process transport (inject.ts) /mcp's tools call the API through, entering the router
   * after its auth step (#afterAuth). Public so tests can show what it refuses: nothing outside
   * this process reaches it, and /mcp makes it only after its own token check.
   */
  inProcessFetch(): typeof fetch {
    return injectFetch((r, s) => this.#afterAuth(r, s));
  }

  /**
   * The router's entry after its auth step, for the in-process transport (inject.ts) that only
   * the authenticated /mcp handler makes: the routes the API token opens (and /healthz, whose
   * clock `since: "now"` reads), run by the same handlers with the same body caps, wait caps and
   * error mapping. No socket, so no Host check; the caller's credential was checked once, by /mcp.
   */
  async #afterAuth(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = parseUrl(req.url);
      const hit = classify(url);
      const method = req.method ?? 'GET';
      beginExchange(req, { bytes: 0 });
      // The fault rules are never set through /mcp, whose tools stay read-only.
      if (hit.kind !== 'api' || isChaosRoute(hit.route) || (ROUTES[hit.name].credential !== 'api-token' && hit.name !== 'health')) throw notFound(`unknown route ${method} ${url.path}`);
      allowMethod(hit.route, method, req);
      prove(req);
      if (hit.route.kind === 'health') return await this.#health(res, url);
      await this.#dispatch(hit.route, method, req, res, url);
    } catch (err) {
      this.#fail(req, res, err);
    }
  }

  /** The API's own routes: health, webhooks, Twilio's Messages API, then those the API token opens. */
  async #api(route: Route, head: boolean, method: string, req: http.IncomingMessage, res: http.ServerResponse, url: ParsedUrl): Promise<void> {
    allowMethod(route, method, req);
    if (head && route.kind === 'stream') {
      // An event stream never ends: HEAD gets its headers only.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.end();
      return;
    }
    if (route.kind === 'health') return this.#health(res, url);
    const ctx = this.#ctx;
    if (route.kind === 'webhook') return receiveWebhook(ctx, req, res, route, url.query);
    if (isTwilioRoute(route)) {
      if (route.kind === 'twilioUnknown') throw notFound(`The requested resource ${url.path.slice(0, 200)} was not found`);
      return handleTwilio(this.#twilio, req, res, route, url.query);
    }
    this.#requireApiToken(req, url.query);
    // Only here, behind the API token: not in #dispatch, which the web UI's sessions and /mcp reach.
    if (isChaosRoute(route)) return chaosResource(this.#chaos, { maxBody: this.#ctx.maxBody, budget: this.#ctx.budget }, req, res, route, method, (line) => this.#log('info', line));
    return this.#dispatch(route, method, req, res, url);
  }

  async #health(res: http.ServerResponse, url: ParsedUrl): Promise<void> {
    const body: HealthResponse = { service: 'test-inbox', version: this.#version, status: 'ok', now: Date.now(), defaultDomain: this.#ctx.defaultDomain, chaosRules: this.#chaos.size };
    const challenge = url.query.get(HEALTH_CHALLENGE_PARAM);
    if (challenge !== null) {
      if (challenge.length === 0 || challenge.length > MAX_CHALLENGE_LENGTH) throw badRequest('bad_field', `${HEALTH_CHALLENGE_PARAM} must be 1 to ${MAX_CHALLENGE_LENGTH} characters`);
      if (this.#proofKey) body.proof = await healthProof(this.#proofKey, challenge);
      body.tokenProof = await hmacHex(await this.#tokenProofKey, challenge);
    }
    sendJson(res, 200, body);
  }

  /** Runs an API route once its credential is checked: the API token here, a web UI session (ui/index.ts). */
  async #dispatch(route: Route, method: string, req: http.IncomingMessage, res: http.ServerResponse, url: ParsedUrl): Promise<void> {
    const ctx = this.#ctx;
    switch (route.kind) {
      case 'domains':
        return listDomains(ctx, res);
      case 'inbox':
        if (method === 'GET') return listInbox(ctx, res, route.domain, route.inbox, url.query);
        if (method === 'POST') return injectMessage(ctx, req, res, route.domain, route.inbox);
        return clearInbox(ctx, res, route.domain, route.inbox);
      case 'inboxMessages':
        return injectMessage(ctx, req, res, route.domain, route.inbox);
      case 'allInboxes':
        return clearInbox(ctx, res, route.domain, ALL_INBOXES);
      case 'message':
        return messageResource(ctx, req, res, route);
      case 'stream':
        return openStream(ctx, res, route);
      case 'latest':
        return latestResource(ctx, res, route, url.query);
      case 'totp':
        return totpResource(res, route.secret, url.query);
      case 'search':
        return searchResource(ctx, res, url.query);
      default:
        throw notFound(`unknown route ${method} ${url.path}`);
    }
  }

  #requireApiToken(req: http.IncomingMessage, query: URLSearchParams): void {
    const header = req.headers.authorization;
    const candidate = header !== undefined && header !== '' ? apiTokenOf(header) : (query.get('token') ?? undefined);
    const outcome = checkToken(this.#apiToken, candidate);
    if (outcome === 'missing' && header !== undefined && header !== '') throw new HttpError(403, 'forbidden', 'wrong API token');
    if (outcome === 'missing') throw new HttpError(401, 'unauthorized', 'missing API token: send it in the Authorization header (raw or as "Bearer <token>") or as ?token=');
    if (outcome === 'wrong') throw new HttpError(403, 'forbidden', 'wrong API token');
    prove(req);
  }
}

function providerContext(o: HttpApiOptions, budget: ByteBudget, mime: WorkerPool, twilio: TwilioContext, chaos: ChaosRules, toHttpError: ProviderContext['toHttpError']): [ProviderContext, () => Promise<void>] {
  let own: Promise<string> | undefined;
  const spoolDir = (): Promise<string> => (o.spoolDir !== undefined ? Promise.resolve(o.spoolDir) : (own ??= fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-spool-'))));
  const dispose = async (): Promise<void> => {
    if (own) await fs.rm(await own, { recursive: true, force: true });
  };
  const ctx: ProviderContext = {
    store: o.store,
    budget,
    spoolDir,
    maxMessageBytes: o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    mime,
    ...(o.providerKey !== undefined ? { key: new TokenCheck(o.providerKey, 'provider key'), secret: o.providerKey } : {}),
    clock: o.clock ?? systemClock,
    twilio,
    chaos,
    ...(o.delayed ? { delayed: o.delayed } : {}),
    toHttpError,
  };
  return [ctx, dispose];
}

/** 405 with `Allow` for a method the route does not answer. */
function allowMethod(route: Route, method: string, req: http.IncomingMessage): void {
  const allowed = allowedMethods(route);
  if (allowed.includes(method)) return;
  const allow = allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
  throw new HttpError(405, 'method_not_allowed', `method ${req.method ?? method} is not allowed here; use ${allow.join(' or ')}`, { allow: allow.join(', ') });
}

/** A well-formed request line (RFC 9112 §3): a method token, a target, a version. */
/** Every method some route answers (routes.ts allowedMethods; PUT: /api/v2/chaos), for a 405 that no route decides. */
const SERVED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'] as const;
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ \r\n]+ HTTP\/\d\.\d\r?\n/;

/** A JSON error written straight to a socket no request/response pair owns (parse errors, CONNECT), then the socket closes. */
function rawJsonReply(socket: Socket, status: string, message: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ status: 'error', message });
  const headers = Object.entries(extra).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers}connection: close\r\n\r\n${body}`);
}

/**
 * Inside a CONNECT tunnel: exactly one Host header, naming the tunnel's target (with no port or
 * 443), and an absolute-form target naming it too; else 421. The loopback Host list does not apply.
 */
function checkTunnelHost(req: http.IncomingMessage, target: string): void {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') hosts++;
  if (hosts !== 1) throw badRequest('bad_request', 'the request must have exactly one Host header');
  const authority = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]*)/i.exec(req.url ?? '')?.[1];
  for (const h of [req.headers.host ?? '', ...(authority === undefined ? [] : [authority])]) {
    const name = h.trim().toLowerCase().replace(/:443$/, '');
    if (name !== target) throw new HttpError(421, 'misdirected', `Host ${JSON.stringify(h.slice(0, 100))} is not this tunnel's target ${target}`);
  }
}

/** Whether a tunnel to a host of `api` reaches the route `hit`. */
function tunnelServes(api: ProxiedApi | undefined, hit: ReturnType<typeof classify>): boolean {
  switch (api) {
    case 'mailosaur':
      return hit.kind === 'mailosaur';
    case 'twilio':
      return hit.name === 'twilioMessages' || hit.name === 'twilioMessage' || hit.name === 'twilioUnknown';
    case undefined:
      return false;
    default:
      return hit.kind === 'provider' && hit.provider.api === api;
  }
}

/** `METHOD /path` for the log: no query (it may hold `token`), no webhook token segment. */
function describe(req: http.IncomingMessage): string {
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  const path = (q >= 0 ? target.slice(0, q) : target).replace(/(\/domains?\/)[^/]*(\/webhook)/, '$1…$2').slice(0, 200);
  return `${req.method ?? 'GET'} ${path}`;
}
