// The client's transport: the runtime's own `fetch` (Node's built-in undici, whose global
// pool keeps connections alive; in VS Code's extension host the same fetch also goes through
// the user's proxy settings), a time budget per call, cancellation through AbortSignal, and
// retries with jittered exponential backoff for idempotent reads only. Redirects are not
// followed. Every failure leaves here as an ApiError; no token is ever put in a URL, a log
// line or an error.
import { ApiError, errorFromStatus, networkError, parseRetryAfter, redact, serverMessageOf } from './errors';
import type { CallOptions } from './types';
import { redactWebhookUrl } from './webhooks';
import { sleep } from '../core/sleep';

/** Budget of one call when the caller gives none: long enough for a slow hosted API, short enough that a dead server is noticed. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Extra reads after the first for GET on network errors, 5xx and 429. */
export const DEFAULT_RETRIES = 2;
/** First backoff delay; doubled per attempt, with jitter. */
const RETRY_BASE_DELAY_MS = 250;
/** Largest backoff delay between two attempts. */
const RETRY_MAX_DELAY_MS = 5_000;
/** A Retry-After longer than this is not waited for: the call fails as rate_limited and the caller decides. */
const MAX_RETRY_AFTER_MS = 30_000;
/** Largest JSON body read: a 500-message listing is well below 1 MiB. */
export const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** Budget of a download (attachment, raw source) when the caller gives none: 64 MiB over a slow link. */
export const DOWNLOAD_TIMEOUT_MS = 120_000;
/** Largest attachment or raw message read; larger messages are refused by the local server anyway. */
export const MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024;
/** Bytes of an error body read to find its `message`. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
export const DEFAULT_USER_AGENT = 'test-inbox-client/0.1';

export type LogFn = (level: 'debug' | 'info' | 'warn' | 'error', msg: string) => void;

interface TransportOptions {
  apiToken?: string;
  timeoutMs: number;
  userAgent: string;
  retries: number;
  /** Where the server is, for messages (no credentials). */
  origin: string;
  log?: LogFn;
  /** Sends a request: the runtime's `fetch` unless given (the server's in-process transport, server/http/inject.ts). */
  fetch?: typeof fetch;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Absolute URL. */
  url: string;
  /** `api`: send the API token; `webhook`: the URL carries the webhook token, send none. */
  credential: 'api' | 'webhook' | 'none';
  /** JSON body. */
  json?: unknown;
  accept: string;
  /** For 404 messages: what was asked for. */
  what: string;
  maxBytes: number;
  /** Minimum budget for this request even when the caller gives less (long polls), in ms. */
  minTimeoutMs?: number;
  /** Budget when the caller gives none, if larger than the client's default (downloads), in ms. */
  defaultTimeoutMs?: number;
}

/** Response headers by lower-case name (repeated headers joined with `, `, as fetch does). */
type ResponseHeaders = Record<string, string>;

interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  body: Uint8Array;
}

/** The unread body of a push stream: read it chunk by chunk; close it (once or more) to end it and its request. */
export interface StreamBody {
  /** The next chunk, or `done` at its end (also once closed). */
  read(): Promise<{ done: true; value?: Uint8Array } | { done: false; value: Uint8Array }>;
  close(): void;
}

interface StreamResponse {
  status: number;
  headers: ResponseHeaders;
  body: StreamBody;
}

/** UTF-8 as the server sent it (a byte-order mark kept, bad bytes as U+FFFD): what the client reads a text body with. */
export function utf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function headersOf(res: Response): ResponseHeaders {
  return Object.fromEntries(res.headers);
}

/**
 * Reads a fetch body up to `limit` bytes (decoded bytes: fetch undoes a content-encoding).
 * Past the limit the body is cancelled, which closes its connection, and `over` is set;
 * `bytes` then holds the chunks before the one that passed it.
 */
async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<{ bytes: Uint8Array; over: boolean }> {
  if (body === null) return { bytes: new Uint8Array(0), over: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: concat(chunks), over: false };
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return { bytes: concat(chunks), over: true };
    }
    chunks.push(value);
  }
}

/** Full-jitter-ish exponential backoff: between half and all of `base * 2^attempt`, capped. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

/** `800 ms`, `15 s`. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}

function cancelledError(): ApiError {
  return new ApiError('cancelled', 'The request was cancelled.');
}

/** Why a call's controller was aborted. */
type AbortWhy = 'cancelled' | 'timeout' | 'disposed';

export class Transport {
  /** Every call in flight, with how to abort it. */
  private readonly active = new Map<AbortController, (why: AbortWhy) => void>();
  private disposed = false;

  constructor(private readonly options: TransportOptions) {}

  /** Where the server is, for messages (no credentials). */
  get origin(): string {
    return this.options.origin;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Text with every secret this transport knows replaced. */
  redact(text: string): string {
    return redact(text, [this.options.apiToken]);
  }

  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string): void {
    if (!this.options.log) return;
    try {
      this.options.log(level, this.redact(msg));
    } catch {
      // a failing logger must not fail the call
    }
  }

  /** A printable request line: method and URL with the webhook token hidden. */
  describe(method: string, url: string): string {
    let shown = url;
    try {
      const u = new URL(url);
      shown = `${u.pathname}${u.search}`;
    } catch {
      // keep as is
    }
    return `${method} ${redactWebhookUrl(shown)}`;
  }

  headers(credential: HttpRequest['credential'], accept: string, extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { accept, 'user-agent': this.options.userAgent, ...extra };
    if (credential === 'api' && this.options.apiToken) h.authorization = this.options.apiToken;
    return h;
  }

  /**
   * Sends one request within the call's budget, retrying GETs on network errors, 5xx and
   * 429. Resolves only with a 2xx response (body read, at most `maxBytes`).
   */
  async request(req: HttpRequest, opts: CallOptions = {}): Promise<HttpResponse> {
    if (this.disposed) throw new ApiError('cancelled', 'The client was disposed.');
    if (opts.signal?.aborted) throw cancelledError();
    if (opts.timeoutMs !== undefined && !(Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0)) {
      throw new ApiError('invalid_input', `Invalid timeout ${String(opts.timeoutMs)}: expected a positive number of ms.`, { field: 'timeoutMs' });
    }
    const budget = Math.max(opts.timeoutMs ?? Math.max(this.options.timeoutMs, req.defaultTimeoutMs ?? 0), req.minTimeoutMs ?? 0);
    const deadline = Date.now() + budget;
    const line = this.describe(req.method, req.url);
    const retries = req.method === 'GET' ? this.options.retries : 0;

    const ac = new AbortController();
    let why: AbortWhy | undefined;
    const abort = (w: AbortWhy): void => {
      if (why === undefined) why = w;
      ac.abort();
    };
    const onCallerAbort = (): void => abort('cancelled');
    opts.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer = setTimeout(() => abort('timeout'), budget);
    this.active.set(ac, abort);

    const abortedError = (): ApiError => {
      if (why === 'timeout') return new ApiError('timeout', `The server did not answer within ${formatMs(budget)}. Try again, or raise the timeout.`);
      if (why === 'disposed') return new ApiError('cancelled', 'The client was disposed.');
      return cancelledError();
    };

    try {
      for (let attempt = 0; ; attempt++) {
        let failure: ApiError;
        const started = Date.now();
        try {
          const res = await this.once(req, ac.signal);
          if (res.status >= 200 && res.status < 300) {
            this.log('debug', `${line} → ${res.status} (${Date.now() - started} ms)`);
            return res;
          }
          if (res.status >= 300 && res.status < 400) {
            // Not followed: a redirect would resend the token to wherever it points.
            const location = res.headers.location;
            const where = location ? ` to ${redactWebhookUrl(this.redact(location))}` : '';
            throw new ApiError('bad_request', `The server redirects${where} (HTTP ${res.status}). Use the address it redirects to as the server URL (https instead of http?).`, {
              status: res.status,
            });
          }
          const text = utf8(res.body);
          const serverMessage = serverMessageOf(text);
          failure = errorFromStatus(res.status, serverMessage === undefined ? undefined : this.redact(serverMessage), parseRetryAfter(res.headers['retry-after']), {
            what: req.what,
            credential: req.credential,
            hasToken: !!this.options.apiToken,
            origin: this.options.origin,
          });
        } catch (e) {
          if (why !== undefined) throw abortedError();
          if (ApiError.is(e)) throw e;
          failure = networkError(e, this.options.origin, [this.options.apiToken]);
        }
        const retryable = failure.code === 'network' || failure.code === 'server' || failure.code === 'rate_limited';
        const detail = failure.status !== undefined ? `HTTP ${failure.status}` : failure.code;
        if (!retryable || attempt >= retries) {
          this.log(failure.code === 'not_found' ? 'debug' : 'warn', `${line} failed: ${detail}${attempt > 0 ? ` after ${attempt + 1} attempts` : ''}`);
          throw failure;
        }
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS) {
          this.log('warn', `${line} failed: ${detail}; the server asks to wait longer than ${MAX_RETRY_AFTER_MS / 1000} s, not retrying`);
          throw failure;
        }
        const delay = failure.retryAfterMs ?? backoffDelay(attempt, RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS);
        if (Date.now() + delay >= deadline) {
          this.log('warn', `${line} failed: ${detail}; no time left in the budget to retry`);
          throw failure;
        }
        this.log('info', `${line} failed: ${detail}; retrying in ${delay} ms (attempt ${attempt + 2} of ${retries + 1})`);
        try {
          await sleep(delay, ac.signal);
        } catch {
          throw abortedError();
        }
      }
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onCallerAbort);
      this.active.delete(ac);
    }
  }

  private async once(req: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
    const url = new URL(req.url);
    const extra: Record<string, string> = {};
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      extra['content-type'] = 'application/json';
    }
    const res = await (this.options.fetch ?? fetch)(url, {
      method: req.method,
      headers: this.headers(req.credential, req.accept, extra),
      body,
      signal,
      // Not followed: a redirect would resend the token to wherever it points (request() reports it).
      redirect: 'manual',
    });
    const ok = res.status >= 200 && res.status < 300;
    const limit = ok ? req.maxBytes : MAX_ERROR_BODY_BYTES;
    // Content-Length counts encoded bytes; the limit counts what is read, so only an unencoded length is checked up front.
    const declared = res.headers.has('content-encoding') ? NaN : Number(res.headers.get('content-length') ?? NaN);
    if (ok && Number.isFinite(declared) && declared > limit) {
      await res.body?.cancel().catch(() => undefined);
      throw new ApiError('protocol', `The server sent ${declared} bytes, more than the ${limit} this client reads.`, { status: res.status, field: 'response' });
    }
    const { bytes, over } = await readLimited(res.body, limit);
    // An error body only needs its start.
    if (over && ok) throw new ApiError('protocol', `The server sent more than the ${limit} bytes this client reads.`, { status: res.status, field: 'response' });
    return { status: res.status, headers: headersOf(res), body: bytes };
  }

  /**
   * Opens a long-lived GET (push stream). Resolves with the status and the unread body;
   * the caller reads or destroys it. `signal` ends it; `connectTimeoutMs` bounds the wait
   * for the response headers.
   */
  async openStream(url: string, signal: AbortSignal, connectTimeoutMs: number, extraHeaders: Record<string, string> = {}): Promise<StreamResponse> {
    if (this.disposed) throw new ApiError('cancelled', 'The client was disposed.');
    const ac = new AbortController();
    let why: AbortWhy | undefined;
    const abort = (w: AbortWhy): void => {
      why ??= w;
      ac.abort();
    };
    const onAbort = (): void => abort('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    const timer = setTimeout(() => abort('timeout'), connectTimeoutMs);
    this.active.set(ac, abort);
    try {
      const res = await (this.options.fetch ?? fetch)(url, {
        method: 'GET',
        // identity: events are read as they come; a compressing server or proxy could hold them back.
        headers: this.headers('api', 'text/event-stream', { 'cache-control': 'no-cache', 'accept-encoding': 'identity', ...extraHeaders }),
        signal: ac.signal,
        redirect: 'manual',
      });
      clearTimeout(timer);
      const reader = res.body?.getReader();
      let closed = false;
      // From here the body lives as long as the caller's signal; the controller stays tracked for dispose().
      const close = (): void => {
        if (closed) return;
        closed = true;
        signal.removeEventListener('abort', onAbort);
        this.active.delete(ac);
        void reader?.cancel().catch(() => undefined);
        // Ends the request too, so the connection is closed rather than left streaming to nobody.
        ac.abort();
      };
      const body: StreamBody = {
        read: () => (reader === undefined || closed ? Promise.resolve({ done: true, value: undefined }) : reader.read()),
        close,
      };
      return { status: res.status, headers: headersOf(res), body };
    } catch (e) {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      this.active.delete(ac);
      if (why === 'timeout') throw new ApiError('timeout', `The server did not open the event stream within ${formatMs(connectTimeoutMs)}.`);
      if (why !== undefined || this.disposed) throw cancelledError();
      throw networkError(e, this.options.origin, [this.options.apiToken]);
    }
  }

  /** Reads a whole (error) body of a stream response, at most MAX_ERROR_BODY_BYTES, and closes it. */
  async readSmall(body: StreamBody): Promise<string> {
    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      for (;;) {
        const { done, value } = await body.read();
        if (done) break;
        size += value.byteLength;
        chunks.push(value);
        if (size > MAX_ERROR_BODY_BYTES) break;
      }
    } catch {
      // whatever arrived is enough for a message
    } finally {
      body.close();
    }
    return utf8(concat(chunks));
  }

  errorContext(what: string): Parameters<typeof errorFromStatus>[3] {
    return { what, credential: 'api', hasToken: !!this.options.apiToken, origin: this.options.origin };
  }

  /**
   * Aborts every call in flight (they fail as cancelled) and every open stream. The pool is the
   * runtime's: its idle keep-alive connections close by themselves after a few seconds.
   */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const abort of this.active.values()) abort('disposed');
    this.active.clear();
  }
}
