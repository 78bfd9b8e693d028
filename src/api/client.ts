// The API client: one object per server (base URL + API token) implementing InboxApi for
// our local server (docs/api.md) and the hosted service (Mailinator v2,
// `https://api.mailinator.com`, raw `Authorization: <token>` header).
import type { AttachmentInfo, DeleteResult, DomainsResponse, HealthResponse, InjectedMessage, InjectionResult, LatestCode, LatestLink, SearchResponse, WebhookDeliveryResult } from '../core/wire';
import { HEALTH_CHALLENGE_PARAM, hmacHex, sameProof, tokenProofKey } from '../core/proof';
import { ApiError } from './errors';
import { DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS, DEFAULT_USER_AGENT, DOWNLOAD_TIMEOUT_MS, MAX_DOWNLOAD_BYTES, MAX_JSON_BYTES, Transport, type HttpRequest, type LogFn, utf8 } from './http';
import { baseString, checkAttachmentId, checkDomain, checkInbox, checkMessageId, listQuery, normalizeBaseUrl, paths } from './paths';
import { StreamSubscription, type StreamOptions } from './stream';
import type { LinkKindParam } from '../core/clickKinds';
import type { Attachment, CallOptions, InboxApi, LatestParams, ListParams, Listing, SearchParams, ServerIdentity, StreamHandlers, Subscription } from './types';
import type { ChaosList, ChaosRuleInfo, Message, WebUiSession } from '../core/wire';
import {
  parseAttachments,
  parseChaosAdded,
  parseChaosList,
  parseChaosRemoved,
  parseDeleteResult,
  parseDomains,
  parseHealth,
  parseInjectionResult,
  parseJsonText,
  parseLatestCode,
  parseLatestLink,
  parseLinks,
  parseListing,
  parseMessage,
  parseOk,
  parseSearchResponse,
  parseWebhookDeliveryResult,
  parseWebUiSession,
  parseWebUiTicket,
} from './validate';

/** More retries than this would only hide a broken server from the user. */
const MAX_RETRIES = 5;
/** Longest per-call budget accepted: beyond ten minutes a call is hung, not slow. */
const MAX_TIMEOUT_MS = 10 * 60_000;
/** A long poll (`wait`) gets its wait plus this margin for the answer to travel. */
const LONG_POLL_MARGIN_MS = 10_000;
/** Longest field of an injected message sent; the local server refuses larger bodies anyway. */
const MAX_INJECT_FIELD_CHARS = 1024 * 1024;

interface ClientOptions {
  /** `http://127.0.0.1:2580`, `https://api.mailinator.com`, … (a path prefix is kept). */
  baseUrl: string;
  /** Sent as the raw `Authorization` header; never in a URL, a log line or an error. */
  apiToken?: string;
  /** Budget of one call, retries included (default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  userAgent?: string;
  /** Extra attempts for GET on network errors, 5xx and 429 (default DEFAULT_RETRIES). */
  retries?: number;
  log?: LogFn;
  /** Reconnection tuning of push subscriptions (defaults in stream.ts). */
  stream?: StreamOptions;
  /** Sends each request instead of the runtime's `fetch`: the server's in-process transport for /mcp (server/http/inject.ts). */
  fetch?: typeof fetch;
  /** The server's address as errors name it (default baseUrl): a page's client names its server, not the `/ui` base it calls. */
  serverUrl?: string;
}

function invalid(field: string, message: string): ApiError {
  return new ApiError('invalid_input', message, { field });
}

function checkInjected(message: InjectedMessage, options: { checkTo: boolean }): InjectedMessage {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalid('message', 'The message must be an object with from, subject, text and to.');
  const out: InjectedMessage = {};
  for (const key of ['from', 'subject', 'text', 'to'] as const) {
    const v: unknown = message[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw invalid(key, `The message's ${key} must be a string.`);
    if (v.length > MAX_INJECT_FIELD_CHARS) throw invalid(key, `The message's ${key} is longer than ${MAX_INJECT_FIELD_CHARS} characters.`);
    out[key] = v;
  }
  if (options.checkTo && out.to !== undefined) checkInbox(out.to, { allowAll: false });
  return out;
}

/** The file name of a Content-Disposition header (RFC 6266, `filename*` preferred), reduced to a base name. */
export function filenameFromDisposition(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let name: string | undefined;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(value);
  if (star) {
    try {
      name = decodeURIComponent(star[2].trim());
    } catch {
      name = undefined;
    }
  }
  if (name === undefined) {
    const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(value);
    const bare = /filename\s*=\s*([^;"\s]+)/i.exec(value);
    name = quoted ? quoted[1].replace(/\\(.)/g, '$1') : bare?.[1];
  }
  if (name === undefined) return undefined;
  const base = name.split(/[/\\]/).pop()?.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base && base !== '.' && base !== '..' ? base : undefined;
}

/** Bytes as base64url without padding (Buffer's 'base64url'), with what every runtime has. */
function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

class InboxClient implements InboxApi {
  readonly baseUrl: string;
  private readonly transport: Transport;
  private readonly timeoutMs: number;
  private readonly streamOptions: StreamOptions;
  private readonly subscriptions = new Set<Subscription>();
  /** Strings never to show: the API token. */
  private readonly secrets: string[];
  /** Kept for identify(): the token's proof key is derived from it. */
  private readonly apiToken: string | undefined;

  constructor(options: ClientOptions) {
    const url = normalizeBaseUrl(options.baseUrl);
    this.baseUrl = baseString(url);
    let token = options.apiToken?.trim();
    if (token === '') token = undefined;
    if (token !== undefined && /[\u0000-\u001f\u007f]/.test(token)) {
      throw invalid('apiToken', 'The API token contains line breaks or control characters. Copy it again.');
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) throw invalid('timeoutMs', `The timeout must be between 1 and ${MAX_TIMEOUT_MS} ms.`);
    const retries = options.retries ?? DEFAULT_RETRIES;
    if (!Number.isSafeInteger(retries) || retries < 0 || retries > MAX_RETRIES) throw invalid('retries', `Retries must be an integer from 0 to ${MAX_RETRIES}.`);
    this.timeoutMs = timeoutMs;
    this.secrets = token === undefined ? [] : [token];
    this.apiToken = token;
    this.streamOptions = options.stream ?? {};
    this.transport = new Transport({
      apiToken: token,
      timeoutMs,
      retries,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      origin: options.serverUrl ?? this.baseUrl,
      log: options.log,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  private url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  private async json<T>(req: Omit<HttpRequest, 'accept' | 'maxBytes'>, opts: CallOptions | undefined, parse: (v: unknown) => T): Promise<T> {
    const res = await this.transport.request({ ...req, accept: 'application/json', maxBytes: MAX_JSON_BYTES }, opts);
    const value = parseJsonText(utf8(res.body), this.secrets);
    try {
      return parse(value);
    } catch (e) {
      if (ApiError.is(e)) this.transport.log('warn', `${this.transport.describe(req.method, req.url)}: ${e.message}`);
      throw e;
    }
  }

  health(opts?: CallOptions): Promise<HealthResponse> {
    return this.json({ method: 'GET', url: this.url(paths.health()), credential: 'none', what: 'health endpoint (is this a Test Inbox server?)' }, opts, parseHealth);
  }

  async identify(opts?: CallOptions): Promise<ServerIdentity> {
    const challenge = base64url(globalThis.crypto.getRandomValues(new Uint8Array(24)));
    const key = this.apiToken === undefined ? undefined : tokenProofKey(this.apiToken);
    let health: HealthResponse;
    try {
      health = await this.json(
        { method: 'GET', url: this.url(`${paths.health()}?${HEALTH_CHALLENGE_PARAM}=${challenge}`), credential: 'none', what: 'identity check (is this a Test Inbox server?)' },
        opts,
        parseHealth,
      );
    } catch (e) {
      // Whatever answers but is not our health endpoint is something else; no answer is no answer.
      if (ApiError.is(e, 'network') || ApiError.is(e, 'timeout') || ApiError.is(e, 'cancelled')) throw e;
      return { kind: 'other' };
    }
    if (health.tokenProof === undefined || key === undefined) return { kind: 'other' };
    if (!sameProof(health.tokenProof, await hmacHex(await key, challenge))) {
      throw new ApiError('unauthorized', `The Test Inbox server at ${this.baseUrl} uses another API token (found by a check that does not send this one). Use that server's token: "apiToken" in the tokens.json of its data folder.`);
    }
    return { kind: 'test-inbox', health };
  }

  listDomains(opts?: CallOptions): Promise<DomainsResponse> {
    return this.json({ method: 'GET', url: this.url(paths.domains()), credential: 'api', what: 'domain list' }, opts, parseDomains);
  }

  async listInbox(domain: string, inbox: string, params?: ListParams, opts?: CallOptions): Promise<Listing> {
    checkDomain(domain);
    inbox = checkInbox(inbox, { allowAll: true });
    const query = listQuery(params);
    const minTimeoutMs = params?.wait ? params.wait * 1000 + LONG_POLL_MARGIN_MS : undefined;
    return this.json(
      { method: 'GET', url: this.url(paths.inbox(domain, inbox) + query), credential: 'api', what: `inbox "${inbox}" in domain "${domain}"`, minTimeoutMs },
      opts,
      parseListing,
    );
  }

  async search(q: string, params: SearchParams = {}, opts?: CallOptions): Promise<SearchResponse> {
    if (typeof q !== 'string' || q.trim() === '') throw invalid('q', 'The search query is empty.');
    const list = listQuery({ limit: params.limit, skip: params.skip, wait: params.wait });
    const query = `?q=${encodeURIComponent(q)}${list === '' ? '' : `&${list.slice(1)}`}`;
    const minTimeoutMs = params.wait ? params.wait * 1000 + LONG_POLL_MARGIN_MS : undefined;
    return this.json({ method: 'GET', url: this.url(paths.search() + query), credential: 'api', what: 'search', minTimeoutMs }, opts, parseSearchResponse);
  }

  /**
   * A one-time sign-in link to the web UI. `origin` is the page's origin when the browser reaches
   * the server through a proxy that rewrites Host (the editor's asExternalUri): the session spent
   * from the link accepts requests from it (docs/api.md "Web UI").
   */
  async webUiSignInUrl(opts?: CallOptions & { origin?: string }): Promise<{ url: string; expires: number }> {
    const json = opts?.origin === undefined ? {} : { json: { origin: opts.origin } };
    const t = await this.json({ method: 'POST', url: this.url(paths.webUiTicket()), credential: 'api', ...json, what: 'web UI sign-in ticket' }, opts, parseWebUiTicket);
    return { url: `${this.url(paths.webUi())}#ticket=${t.ticket}`, expires: t.expires };
  }

  async openPageSession(credential: { token: string } | { ticket: string }, opts?: CallOptions): Promise<WebUiSession> {
    let body: { token: string } | { ticket: string };
    if (typeof credential === 'object' && credential !== null && 'ticket' in credential) {
      // As the page reads it from its address (`#ticket=…`): a ticket is URL-safe (validate.ts parseWebUiTicket).
      if (typeof credential.ticket !== 'string' || !/^[A-Za-z0-9_.-]{1,600}$/.test(credential.ticket)) throw invalid('ticket', 'The sign-in link is not valid: open the web UI again from the editor.');
      body = { ticket: credential.ticket };
    } else {
      const token = typeof credential === 'object' && credential !== null && typeof credential.token === 'string' ? credential.token : '';
      if (token === '') throw invalid('token', 'Enter the API token.');
      if (/[\u0000-\u001f\u007f]/.test(token)) throw invalid('token', 'The API token contains line breaks or control characters. Copy it again.');
      body = { token };
    }
    return this.json({ method: 'POST', url: this.url(paths.pageSession()), credential: 'none', json: body, what: 'web UI session' }, opts, parseWebUiSession);
  }

  async closePageSession(opts?: CallOptions): Promise<void> {
    await this.json({ method: 'DELETE', url: this.url(paths.pageSession()), credential: 'api', what: 'web UI session' }, opts, parseOk);
  }

  async getMessage(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<Message> {
    checkDomain(domain);
    inbox = checkInbox(inbox, { allowAll: true });
    checkMessageId(id);
    return this.json({ method: 'GET', url: this.url(paths.message(domain, inbox, id)), credential: 'api', what: `message ${id}` }, opts, (v) => parseMessage(v, { inbox, id }));
  }

  async inject(domain: string, inbox: string, message: InjectedMessage, opts?: CallOptions): Promise<InjectionResult> {
    checkDomain(domain);
    inbox = checkInbox(inbox, { allowAll: false });
    const body = checkInjected(message, { checkTo: false });
    return this.json({ method: 'POST', url: this.url(paths.inject(domain, inbox)), credential: 'api', json: body, what: `inbox "${inbox}" in domain "${domain}"` }, opts, parseInjectionResult);
  }

  async deliverWebhook(url: string, message: InjectedMessage, opts?: CallOptions): Promise<WebhookDeliveryResult> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalid('url', 'Invalid webhook URL: copy one of the webhook URLs of the server.');
    }
    if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username !== '' || parsed.password !== '') {
      throw invalid('url', 'Invalid webhook URL: it must be an http(s) URL without credentials.');
    }
    const body = checkInjected(message, { checkTo: true });
    return this.json({ method: 'POST', url: parsed.href, credential: 'webhook', json: body, what: 'webhook route at this URL' }, opts, parseWebhookDeliveryResult);
  }

  async getLinks(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<string[]> {
    inbox = this.checkMessageArgs(domain, inbox, id);
    return this.json({ method: 'GET', url: this.url(paths.messageExtra(domain, inbox, id, '/links')), credential: 'api', what: `message ${id}` }, opts, parseLinks);
  }

  getCode(domain: string, inbox: string, params?: LatestParams, opts?: CallOptions): Promise<LatestCode> {
    return this.latest(domain, inbox, 'code', params ?? {}, opts, parseLatestCode);
  }

  getLink(domain: string, inbox: string, params?: LatestParams & { kind?: LinkKindParam }, opts?: CallOptions): Promise<LatestLink> {
    return this.latest(domain, inbox, 'link', params ?? {}, opts, parseLatestLink);
  }

  private async latest<T>(domain: string, inbox: string, what: 'code' | 'link', params: LatestParams & { kind?: LinkKindParam }, opts: CallOptions | undefined, parse: (v: unknown) => T): Promise<T> {
    checkDomain(domain);
    inbox = checkInbox(inbox, { allowAll: false });
    const q = new URLSearchParams();
    if (params.since !== undefined) {
      if (typeof params.since === 'number' && !(Number.isSafeInteger(params.since) && params.since >= 0)) throw invalid('since', 'since must be a time in ms since the epoch or a message id.');
      if (typeof params.since === 'string') checkMessageId(params.since);
      q.set('since', String(params.since));
    }
    if (params.wait !== undefined) {
      if (!Number.isFinite(params.wait) || params.wait < 0) throw invalid('wait', 'wait must be a number of seconds, 0 or more.');
      q.set('wait', `${Math.round(params.wait * 1000)}ms`);
    }
    if (params.delete) q.set('delete', 'true');
    if (params.kind !== undefined) q.set('kind', params.kind);
    const query = q.size > 0 ? `?${q.toString()}` : '';
    const minTimeoutMs = params.wait ? params.wait * 1000 + LONG_POLL_MARGIN_MS : undefined;
    return this.json({ method: 'GET', url: this.url(paths.latest(domain, inbox, what) + query), credential: 'api', what: `inbox "${inbox}" in domain "${domain}"`, minTimeoutMs }, opts, parse);
  }

  async listAttachments(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<AttachmentInfo[]> {
    inbox = this.checkMessageArgs(domain, inbox, id);
    return this.json({ method: 'GET', url: this.url(paths.messageExtra(domain, inbox, id, '/attachments')), credential: 'api', what: `message ${id}` }, opts, parseAttachments);
  }

  async downloadAttachment(domain: string, inbox: string, id: string, attachmentId: number, opts?: CallOptions): Promise<Attachment> {
    inbox = this.checkMessageArgs(domain, inbox, id);
    checkAttachmentId(attachmentId);
    const res = await this.transport.request(
      {
        method: 'GET',
        url: this.url(paths.messageExtra(domain, inbox, id, `/attachments/${attachmentId}`)),
        credential: 'api',
        accept: '*/*',
        maxBytes: MAX_DOWNLOAD_BYTES,
        defaultTimeoutMs: DOWNLOAD_TIMEOUT_MS,
        what: `attachment ${attachmentId} of message ${id}`,
      },
      opts,
    );
    const contentType = headerValue(res.headers, 'content-type') ?? 'application/octet-stream';
    const filename = filenameFromDisposition(headerValue(res.headers, 'content-disposition')) ?? `attachment-${attachmentId}`;
    return { bytes: new Uint8Array(res.body.buffer, res.body.byteOffset, res.body.byteLength), contentType, filename };
  }

  async getRaw(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<string> {
    inbox = this.checkMessageArgs(domain, inbox, id);
    const res = await this.transport.request(
      {
        method: 'GET',
        url: this.url(paths.messageExtra(domain, inbox, id, '/raw')),
        credential: 'api',
        accept: 'message/rfc822, text/plain;q=0.9, application/json;q=0.5',
        maxBytes: MAX_DOWNLOAD_BYTES,
        defaultTimeoutMs: DOWNLOAD_TIMEOUT_MS,
        what: `message ${id}`,
      },
      opts,
    );
    const text = utf8(res.body);
    const type = (headerValue(res.headers, 'content-type') ?? '').toLowerCase();
    if (type.startsWith('application/json')) {
      // The hosted service may wrap the source: `{"rawData": "…"}`.
      const v = parseJsonText(text, this.secrets);
      const raw = typeof v === 'object' && v !== null ? ((v as Record<string, unknown>).rawData ?? (v as Record<string, unknown>).raw) : v;
      if (typeof raw !== 'string') {
        throw new ApiError('protocol', 'The server sent an unexpected response (rawData: expected string). Check that the URL points at a Test Inbox or Mailinator API.', { field: 'rawData' });
      }
      return raw;
    }
    return text;
  }

  async deleteMessage(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<DeleteResult> {
    inbox = this.checkMessageArgs(domain, inbox, id);
    return this.json({ method: 'DELETE', url: this.url(paths.messageExtra(domain, inbox, id)), credential: 'api', what: `message ${id}` }, opts, parseDeleteResult);
  }

  async clearInbox(domain: string, inbox: string, opts?: CallOptions): Promise<DeleteResult> {
    checkDomain(domain);
    inbox = checkInbox(inbox, { allowAll: true });
    return this.json({ method: 'DELETE', url: this.url(paths.inbox(domain, inbox)), credential: 'api', what: `inbox "${inbox}" in domain "${domain}"` }, opts, parseDeleteResult);
  }

  chaosRules(opts?: CallOptions): Promise<ChaosList> {
    return this.json({ method: 'GET', url: this.url(paths.chaos()), credential: 'api', what: 'fault rules (is this a Test Inbox server?)' }, opts, parseChaosList);
  }

  addChaosRule(rule: Record<string, unknown>, opts?: CallOptions): Promise<{ id: string; rule: ChaosRuleInfo }> {
    return this.json({ method: 'POST', url: this.url(paths.chaosRules()), credential: 'api', json: rule, what: 'fault rules (is this a Test Inbox server?)' }, opts, parseChaosAdded);
  }

  removeChaosRule(id: string, opts?: CallOptions): Promise<{ removed: number }> {
    return this.json({ method: 'DELETE', url: this.url(paths.chaosRule(id)), credential: 'api', what: `fault rule ${id}` }, opts, parseChaosRemoved);
  }

  clearChaos(opts?: CallOptions): Promise<{ removed: number }> {
    return this.json({ method: 'DELETE', url: this.url(paths.chaos()), credential: 'api', what: 'fault rules (is this a Test Inbox server?)' }, opts, parseChaosRemoved);
  }

  /**
   * Opens the push stream. Invalid arguments do not throw: the subscription reports
   * `closed` with an `invalid_input` error, like every other way it can end.
   */
  subscribe(domain: string, inbox: string | undefined, handlers: StreamHandlers): Subscription {
    let startError: ApiError | undefined;
    let url = '';
    try {
      checkDomain(domain);
      if (inbox !== undefined) inbox = checkInbox(inbox, { allowAll: true });
      url = this.url(paths.stream(domain, inbox));
      if (this.transport.isDisposed) startError = new ApiError('cancelled', 'The client was disposed.');
    } catch (e) {
      startError = ApiError.is(e) ? e : new ApiError('invalid_input', String(e));
    }
    const where = inbox === undefined ? `domain "${domain}"` : `inbox "${inbox}" in domain "${domain}"`;
    const sub: StreamSubscription = new StreamSubscription(
      this.transport,
      url,
      handlers,
      where,
      { ...this.streamOptions, connectTimeoutMs: this.streamOptions.connectTimeoutMs ?? this.timeoutMs, onEnd: () => this.subscriptions.delete(sub) },
      startError,
    );
    this.subscriptions.add(sub);
    return sub;
  }

  async dispose(): Promise<void> {
    for (const sub of [...this.subscriptions]) sub.dispose();
    await this.transport.dispose();
  }

  /** Checks the arguments naming a message; returns the inbox for its path (checkInbox). */
  private checkMessageArgs(domain: string, inbox: string, id: string): string {
    checkDomain(domain);
    const name = checkInbox(inbox, { allowAll: true });
    checkMessageId(id);
    return name;
  }
}

/** One client per server. Throws ApiError `invalid_input` for a bad URL, token or option. */
export function createClient(options: ClientOptions): InboxApi {
  return new InboxClient(options);
}
