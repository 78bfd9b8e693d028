// The HTTP API of the local inbox server: every endpoint of seed section 4 plus the
// Mailinator-compatible extras of DESIGN.md (route table in docs/api.md). Codes against the
// Store interface only; returns a node:http server that is not listening yet.
import http from 'node:http';
import type { Socket } from 'node:net';
import { ALL_INBOXES, PRIVATE_DOMAIN, domainProblem, inboxNameProblem, normalizeInbox, parseMessageId } from '../../core/ids';
import { extractLinks } from '../../core/links';
import type { DeleteResult, DomainsResponse, HealthResponse, InboxListing, InjectedMessage, InjectionResult } from '../../core/wire';
import { AuthConfigError, HostCheck, TokenCheck, checkToken } from './auth';
import { ComposeError, composeMessage } from './compose';
import { getAttachment, listAttachments, renderMessage, summarize, textAndHtml } from './render';
import { StoreError } from '../store/errors';
import type { ListOptions, ListResult, MessageMeta, MessageSource, Store } from '../store/types';
import { StreamHub } from './stream';
import { DEFAULT_MAX_BODY_BYTES, readInjectedMessage } from './body';
import { HttpError, badRequest, notFound } from './errors';
import { sendBytes, sendError, sendJson } from './respond';
import { type Route, allowedMethods, matchRoute, parseUrl } from './routes';

export { HttpError } from './errors';
export { DEFAULT_MAX_BODY_BYTES } from './body';

/** Default page size of a listing (Mailinator's default). */
export const DEFAULT_LIST_LIMIT = 50;
/** Largest page size: bounds the work and the response of one list call. */
export const MAX_LIST_LIMIT = 500;
/** Longest long-poll (`wait`) in seconds; longer values are cut to this (proxies and clients time out around a minute). */
export const MAX_WAIT_SECONDS = 60;

/** While closing, idle keep-alive connections are closed this often (instead of waiting out the keep-alive timeout). */
const CLOSE_SWEEP_MS = 20;

export type LogLevel = 'info' | 'warn' | 'error';

export interface HttpApiOptions {
  store: Store;
  apiToken: string;
  webhookToken: string;
  /** Domain that writes to `private` go to. */
  defaultDomain: string;
  /** Host header values allowed besides localhost, 127.0.0.1 and [::1] (any port). */
  allowedHosts?: string[];
  version: string;
  log?: (level: LogLevel, msg: string) => void;
  maxBodyBytes?: number;
}

export interface HttpApi {
  server: http.Server;
  /** Ends open streams and long-polls, then closes the server (when listening). */
  close(): Promise<void>;
}

type Query = URLSearchParams;

export function createHttpApi(options: HttpApiOptions): HttpApi {
  const api = new Api(options);
  return { server: api.server, close: () => api.close() };
}

class Api {
  readonly server: http.Server;
  readonly #store: Store;
  readonly #apiToken: TokenCheck;
  readonly #webhookToken: TokenCheck;
  readonly #hosts: HostCheck;
  readonly #defaultDomain: string;
  readonly #version: string;
  readonly #log: (level: LogLevel, msg: string) => void;
  readonly #maxBody: number;
  readonly #hub: StreamHub;
  /** Pending long-polls: each ends its wait when called. */
  readonly #polls = new Set<() => void>();
  #closing = false;

  constructor(o: HttpApiOptions) {
    if (o.apiToken === o.webhookToken) throw new AuthConfigError('same_tokens', 'the API token and the webhook token must differ');
    this.#apiToken = new TokenCheck(o.apiToken, 'API token');
    this.#webhookToken = new TokenCheck(o.webhookToken, 'webhook token');
    const defaultDomain = o.defaultDomain.toLowerCase();
    const problem = domainProblem(defaultDomain);
    if (problem || defaultDomain === PRIVATE_DOMAIN) throw new TypeError(`defaultDomain ${JSON.stringify(o.defaultDomain)}: ${problem ?? 'must be a real domain'}`);
    this.#defaultDomain = defaultDomain;
    this.#store = o.store;
    this.#hosts = new HostCheck(o.allowedHosts);
    this.#version = o.version;
    this.#log = o.log ?? (() => undefined);
    this.#maxBody = o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    if (!Number.isSafeInteger(this.#maxBody) || this.#maxBody < 1) throw new RangeError(`maxBodyBytes must be a whole number >= 1, got ${String(o.maxBodyBytes)}`);
    this.#hub = new StreamHub(o.store);
    this.server = http.createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => this.#fail(res, describe(req), err));
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.#clientError(err, socket));
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#hub.close();
    for (const end of [...this.#polls]) end();
    if (!this.server.listening) return;
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
  }

  /** Malformed HTTP (bad request line, oversized headers): a JSON answer, then the socket closes. */
  #clientError(err: NodeJS.ErrnoException, socket: Socket): void {
    if (!socket.writable || (err.code === 'ECONNRESET' && !socket.bytesWritten)) {
      socket.destroy();
      return;
    }
    let status = '400 Bad Request';
    let message = 'malformed HTTP request';
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      status = '431 Request Header Fields Too Large';
      message = 'request headers are too large';
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = '408 Request Timeout';
      message = 'the request was not received in time';
    }
    const body = JSON.stringify({ status: 'error', message });
    socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  }

  #fail(res: http.ServerResponse, what: string, err: unknown): void {
    if (HttpError.is(err)) {
      sendError(res, err);
      return;
    }
    if (ComposeError.is(err)) {
      sendError(res, badRequest('bad_field', err.message));
      return;
    }
    if (StoreError.is(err)) {
      switch (err.code) {
        case 'BAD_TARGET':
          sendError(res, badRequest('bad_name', err.message));
          return;
        case 'BAD_CURSOR':
          sendError(res, badRequest('bad_param', err.message));
          return;
        case 'NOT_FOUND':
          sendError(res, notFound('message not found'));
          return;
        case 'NOT_OPEN':
          sendError(res, new HttpError(503, 'unavailable', 'the message store is not open'));
          return;
        case 'IO':
          this.#log('error', `${what}: storage failed: ${err.message}`);
          sendError(res, new HttpError(500, 'internal', 'the message store failed to read or write; see the server log'));
          return;
      }
    }
    this.#log('error', `${what}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    sendError(res, new HttpError(500, 'internal', 'internal error; see the server log'));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!this.#hosts.allows(req.headers.host)) {
      const host = (req.headers.host ?? '').slice(0, 100);
      throw new HttpError(421, 'misdirected', host ? `Host ${JSON.stringify(host)} is not allowed; use localhost or 127.0.0.1, or add it to allowedHosts` : 'the request has no Host header');
    }
    const method = req.method ?? 'GET';
    const url = parseUrl(req.url);
    const route = matchRoute(url.segments);
    if (!route) throw notFound(`unknown route ${method} ${url.path}`);
    const allowed = allowedMethods(route);
    if (!allowed.includes(method)) {
      throw new HttpError(405, 'method_not_allowed', `method ${method} is not allowed here; use ${allowed.join(' or ')}`, { allow: allowed.join(', ') });
    }
    if (route.kind === 'health') {
      const body: HealthResponse = { service: 'test-inbox', version: this.#version, status: 'ok' };
      sendJson(res, 200, body);
      return;
    }
    if (route.kind === 'webhook') {
      await this.#webhook(req, res, route, url.query);
      return;
    }
    this.#requireApiToken(req, url.query);
    switch (route.kind) {
      case 'domains': {
        const body: DomainsResponse = { domains: this.#store.domains() };
        sendJson(res, 200, body);
        return;
      }
      case 'inbox':
        if (method === 'GET') return this.#list(res, route.domain, route.inbox, url.query);
        if (method === 'POST') return this.#inject(req, res, route.domain, route.inbox);
        return this.#clear(res, route.domain, route.inbox);
      case 'inboxMessages':
        return this.#inject(req, res, route.domain, route.inbox);
      case 'allInboxes':
        return this.#clear(res, route.domain, ALL_INBOXES);
      case 'message':
        return this.#message(req, res, route);
      case 'stream': {
        const domain = readDomain(route.domain);
        const inbox = route.inbox === undefined ? undefined : readInbox(route.inbox, true);
        this.#hub.open(res, { domain, inbox });
        return;
      }
    }
  }

  #requireApiToken(req: http.IncomingMessage, query: Query): void {
    const header = req.headers.authorization;
    const candidate = header !== undefined && header !== '' ? header : (query.get('token') ?? undefined);
    const outcome = checkToken(this.#apiToken, candidate);
    if (outcome === 'missing') throw new HttpError(401, 'unauthorized', 'missing API token: send it in the Authorization header or as ?token=');
    if (outcome === 'wrong') {
      const hint = /^bearer\s/i.test(candidate ?? '') ? ' (send the raw token in Authorization, without "Bearer")' : '';
      throw new HttpError(403, 'forbidden', `wrong API token${hint}`);
    }
  }

  // ---- list (seed 4.1) with limit/skip/sort/cursor/wait ----

  async #list(res: http.ServerResponse, rawDomain: string, rawInbox: string, query: Query): Promise<void> {
    const domain = readDomain(rawDomain);
    const inbox = readInbox(rawInbox, true);
    const opts = readListOptions(query);
    const wait = readWait(query);
    let result = this.#store.list(domain, inbox, opts);
    if (result.msgs.length === 0 && wait > 0 && !this.#closing) result = await this.#waitFor(res, domain, inbox, opts, wait, result);
    const now = Date.now();
    const body: InboxListing & { cursor?: string } = {
      domain: domain ?? PRIVATE_DOMAIN,
      to: inbox,
      msgs: result.msgs.map((m) => summarize(m, now)),
    };
    if (result.nextCursor !== undefined) body.cursor = result.nextCursor;
    sendJson(res, 200, body);
  }

  /** Long-poll: resolves when a matching message arrives, the wait ends, the client leaves, or close(). */
  #waitFor(res: http.ServerResponse, domain: string | undefined, inbox: string, opts: ListOptions, seconds: number, empty: ListResult): Promise<ListResult> {
    return new Promise((resolve) => {
      let result = empty;
      const finish = () => {
        clearTimeout(timer);
        this.#store.off('message', onMessage);
        res.off('close', finish);
        this.#polls.delete(finish);
        resolve(result);
      };
      const onMessage = (meta: MessageMeta) => {
        if (domain !== undefined && meta.domain !== domain) return;
        if (inbox !== ALL_INBOXES && meta.inbox !== inbox) return;
        const next = this.#store.list(domain, inbox, opts);
        if (next.msgs.length === 0) return;
        result = next;
        finish();
      };
      const timer = setTimeout(finish, seconds * 1000);
      this.#store.on('message', onMessage);
      res.on('close', finish);
      this.#polls.add(finish);
    });
  }

  // ---- inject (seed 4.4) and webhook (seed 4.5) ----

  async #inject(req: http.IncomingMessage, res: http.ServerResponse, rawDomain: string, rawInbox: string): Promise<void> {
    const domain = readDomain(rawDomain) ?? this.#defaultDomain;
    const inbox = readInbox(rawInbox, false);
    const msg = await readInjectedMessage(req, this.#maxBody);
    await this.#deliver(res, domain, inbox, msg, 'inject');
  }

  async #webhook(req: http.IncomingMessage, res: http.ServerResponse, route: Extract<Route, { kind: 'webhook' }>, query: Query): Promise<void> {
    // With ?whtoken= the first segment is the domain (`private` or a name); without, it is the token.
    const queryToken = query.get('whtoken');
    const tokenInQuery = queryToken !== null;
    const candidate = tokenInQuery ? queryToken : route.first;
    const outcome = checkToken(this.#webhookToken, candidate);
    if (outcome === 'missing') throw new HttpError(401, 'unauthorized', 'missing webhook token: put it in the path or in ?whtoken=');
    if (outcome === 'wrong') throw new HttpError(403, 'forbidden', 'wrong webhook token (webhook routes take the webhook token, never the API token)');
    const domain = tokenInQuery ? (readDomain(route.first) ?? this.#defaultDomain) : this.#defaultDomain;
    // Rule 3: an inbox in the path overrides `to`.
    const pathInbox = route.inbox === undefined ? undefined : readInbox(route.inbox, false);
    const msg = await readInjectedMessage(req, this.#maxBody);
    let inbox = pathInbox;
    if (inbox === undefined) {
      // Rules 1 and 2: the inbox named by `to` (an inbox name, or an address whose local part is used).
      if (msg.to === undefined || msg.to.trim() === '') throw badRequest('bad_field', 'no inbox: name it in the path or in the "to" field');
      const to = msg.to.trim();
      const at = to.lastIndexOf('@');
      inbox = readInbox(at > 0 ? to.slice(0, at) : to, false, 'field "to"');
    }
    await this.#deliver(res, domain, inbox, msg, 'webhook');
  }

  async #deliver(res: http.ServerResponse, domain: string, inbox: string, msg: InjectedMessage, source: Exclude<MessageSource, 'smtp'>): Promise<void> {
    const raw = composeMessage({ from: msg.from, subject: msg.subject, text: msg.text, inbox, domain, source });
    const [meta] = await this.#store.add([{ domain, inbox }], raw, source);
    const body: InjectionResult = { status: 'ok', id: meta.id };
    sendJson(res, 200, body);
  }

  // ---- clear, message, links, attachments, raw, delete ----

  async #clear(res: http.ServerResponse, rawDomain: string, rawInbox: string): Promise<void> {
    const domain = readDomain(rawDomain);
    const inbox = readInbox(rawInbox, true);
    const count = await this.#store.clear(domain, inbox);
    const body: DeleteResult = { status: 'ok', count };
    sendJson(res, 200, body);
  }

  async #message(req: http.IncomingMessage, res: http.ServerResponse, route: Extract<Route, { kind: 'message' }>): Promise<void> {
    const domain = readDomain(route.domain);
    const inbox = route.inbox === undefined ? undefined : readInbox(route.inbox, true);
    const id = readId(route.id);
    let attachment = 0;
    if (route.view === 'attachment') {
      if (!/^[0-9]{1,6}$/.test(route.attachment ?? '')) throw badRequest('bad_id', 'attachment id must be a number (the attachment_id of …/attachments)');
      attachment = Number(route.attachment);
    }
    const meta = this.#store.get(id);
    const where = inbox === undefined || inbox === ALL_INBOXES ? '' : ` in inbox ${inbox}`;
    if (!meta || (domain !== undefined && meta.domain !== domain) || (inbox !== undefined && inbox !== ALL_INBOXES && meta.inbox !== inbox)) {
      throw notFound(`message ${id} not found${where}`);
    }
    if (req.method === 'DELETE') {
      const removed = await this.#store.delete(id);
      if (!removed) throw notFound(`message ${id} not found${where}`);
      const body: DeleteResult = { status: 'ok', count: 1 };
      sendJson(res, 200, body);
      return;
    }
    const raw = await this.#store.readRaw(id);
    switch (route.view) {
      case 'message':
        sendJson(res, 200, await renderMessage(meta, raw, Date.now()));
        return;
      case 'raw':
        sendBytes(res, raw, { 'content-type': 'message/rfc822' });
        return;
      case 'links': {
        const links = extractLinks(await textAndHtml(raw)).map((l) => l.url);
        sendJson(res, 200, { links });
        return;
      }
      case 'attachments':
        sendJson(res, 200, { attachments: await listAttachments(raw) });
        return;
      case 'attachment': {
        const a = await getAttachment(raw, attachment);
        if (!a) throw notFound(`message ${id} has no attachment ${attachment}`);
        sendBytes(res, a.bytes, { 'content-type': safeContentType(a.contentType), 'content-disposition': contentDisposition(a.filename) });
        return;
      }
    }
  }
}

/** `METHOD /path` for the log: no query (it may hold `token`), no webhook token segment. */
function describe(req: http.IncomingMessage): string {
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  const path = (q >= 0 ? target.slice(0, q) : target).replace(/(\/domains?\/)[^/]*(\/webhook)/, '$1…$2').slice(0, 200);
  return `${req.method ?? 'GET'} ${path}`;
}

// ---- input readers: each throws a 400 HttpError naming the problem ----

/** `private` → undefined (reads: every domain); otherwise the lowercase domain. */
function readDomain(raw: string): string | undefined {
  const d = raw.toLowerCase();
  if (d === PRIVATE_DOMAIN) return undefined;
  const problem = domainProblem(d);
  if (problem) throw badRequest('bad_name', `bad domain ${JSON.stringify(raw.slice(0, 100))}: ${problem}`);
  return d;
}

function readInbox(raw: string, allowAll: boolean, what = 'inbox'): string {
  const problem = inboxNameProblem(raw);
  if (problem) throw badRequest('bad_name', `bad ${what} ${JSON.stringify(raw.slice(0, 100))}: ${problem}`);
  if (raw === ALL_INBOXES && !allowAll) throw badRequest('bad_name', `bad ${what}: "*" (every inbox) is only for reading and clearing; name one inbox`);
  return normalizeInbox(raw);
}

function readId(raw: string): string {
  const id = raw.toLowerCase();
  if (!parseMessageId(id)) throw badRequest('bad_id', `bad message id ${JSON.stringify(raw.slice(0, 100))}: it must be shaped <inbox>-<number>-<number>`);
  return id;
}

function readInt(query: Query, name: string, min: number, max: number, fallback: number): number {
  const v = query.get(name);
  if (v === null || v === '') return fallback;
  if (!/^[0-9]{1,9}$/.test(v)) throw badRequest('bad_param', `${name} must be a whole number from ${min} to ${max}`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest('bad_param', `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

function readListOptions(query: Query): ListOptions {
  const limit = readInt(query, 'limit', 1, MAX_LIST_LIMIT, DEFAULT_LIST_LIMIT);
  const skip = readInt(query, 'skip', 0, Number.MAX_SAFE_INTEGER, 0);
  const sortParam = (query.get('sort') ?? '').toLowerCase();
  let sort: ListOptions['sort'];
  if (sortParam === '' || sortParam === 'descending' || sortParam === 'desc') sort = 'descending';
  else if (sortParam === 'ascending' || sortParam === 'asc') sort = 'ascending';
  else throw badRequest('bad_param', 'sort must be "ascending" or "descending"');
  const cursorParam = query.get('cursor');
  const opts: ListOptions = { limit, skip, sort };
  if (cursorParam !== null && cursorParam !== '') opts.cursor = readId(cursorParam);
  return opts;
}

/** `wait` seconds, cut to MAX_WAIT_SECONDS. */
function readWait(query: Query): number {
  const v = query.get('wait');
  if (v === null || v === '') return 0;
  if (!/^[0-9]{1,9}(\.[0-9]+)?$/.test(v)) throw badRequest('bad_param', `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
  return Math.min(Number(v), MAX_WAIT_SECONDS);
}

const MIME_TYPE_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

function safeContentType(type: string): string {
  return MIME_TYPE_RE.test(type) ? type : 'application/octet-stream';
}

/** `attachment` with an ASCII fallback name and the exact UTF-8 name (RFC 6266). */
function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
