// Push subscription to `GET /api/v2/domains/<domain>/stream[/<inbox>]` (server-sent events).
// States: connecting → open ⇄ reconnecting, ending in closed (disposed, or an error that
// retrying cannot fix, such as a rejected token) or unsupported (the server has no stream
// route, as the hosted service: the caller polls instead). Events missed while
// reconnecting are not replayed unless the server honours Last-Event-ID: a consumer
// should refresh when the state goes back to `open` after `reconnecting`.
import { ApiError, errorFromStatus, networkError, parseRetryAfter, serverMessageOf } from './errors';
import { backoffDelay, formatMs, type StreamBody, type Transport } from './http';
import { SseParser, SseProtocolError, type SseEvent } from './sse';
import type { StreamHandlers, StreamState, Subscription } from './types';
import { parseJsonText, parseStreamEvent } from './validate';

/** First reconnection delay: quick enough to feel live after a server restart. */
const STREAM_RECONNECT_INITIAL_MS = 1_000;
/** Longest reconnection delay: a server down for long is retried twice a minute. */
const STREAM_RECONNECT_MAX_MS = 30_000;
/** A connection that stayed open this long was healthy: the backoff starts over after it drops. */
const STREAM_STABLE_MS = 10_000;
/** Longest Retry-After (429/503) honoured before reconnecting; longer asks are cut to this. */
const STREAM_MAX_RETRY_AFTER_MS = 5 * 60_000;
/**
 * The server sends `: ping` every 15 s (docs/api.md); three missed pings mean a dead connection.
 * Measured between events (a ping ends an event without data), not between chunks, so a server
 * that keeps sending bytes without ever ending an event times out too.
 */
const STREAM_IDLE_TIMEOUT_MS = 45_000;

export interface StreamOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
  idleTimeoutMs?: number;
  /** Wait for the response headers; defaults to the client's timeout. */
  connectTimeoutMs?: number;
}

/** Statuses meaning "this server has no stream route" (besides other 4xx, see run()). */
const UNSUPPORTED_STATUSES = new Set([404, 405, 501]);

/** The stream completed no event (pings included) for `ms`: reconnect. */
function idleError(ms: number): ApiError {
  return new ApiError('timeout', `The event stream completed no event for ${formatMs(ms)}.`);
}

function contentType(headers: Record<string, string | string[] | undefined>): string {
  const v = headers['content-type'];
  return (Array.isArray(v) ? v[0] : v ?? '').toLowerCase();
}

export class StreamSubscription implements Subscription {
  private current: StreamState = 'connecting';
  private readonly ac = new AbortController();
  private attempt = 0;
  private lastEventId: string | undefined;
  private serverRetryMs: number | undefined;
  private ended = false;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly idleTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly onEnd: (() => void) | undefined;

  constructor(
    private readonly transport: Transport,
    private readonly url: string,
    private readonly handlers: StreamHandlers,
    private readonly where: string,
    options: StreamOptions & { connectTimeoutMs: number; onEnd?: () => void },
    startError?: ApiError,
  ) {
    this.initialDelayMs = options.initialDelayMs ?? STREAM_RECONNECT_INITIAL_MS;
    this.maxDelayMs = options.maxDelayMs ?? STREAM_RECONNECT_MAX_MS;
    this.idleTimeoutMs = options.idleTimeoutMs ?? STREAM_IDLE_TIMEOUT_MS;
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.onEnd = options.onEnd;
    // States are reported asynchronously, so a caller can keep the returned object first.
    queueMicrotask(() => {
      if (startError) {
        this.finish('closed', startError);
        return;
      }
      this.emit('connecting');
      void this.run();
    });
  }

  get state(): StreamState {
    return this.current;
  }

  dispose(): void {
    if (this.ended) return;
    this.finish('closed');
  }

  private finish(state: 'closed' | 'unsupported', error?: Error): void {
    if (this.ended) return;
    this.emit(state, error);
    this.ended = true;
    this.ac.abort();
    this.onEnd?.();
  }

  private emit(state: StreamState, error?: Error): void {
    if (this.ended) return;
    this.current = state;
    try {
      this.handlers.onState?.(state, error);
    } catch (e) {
      this.transport.log('error', `stream ${this.where}: onState handler threw: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async run(): Promise<void> {
    while (!this.ended) {
      let error: ApiError;
      let retryAfterMs: number | undefined;
      try {
        const headers: Record<string, string> = this.lastEventId !== undefined ? { 'last-event-id': this.lastEventId } : {};
        const res = await this.transport.openStream(this.url, this.ac.signal, this.connectTimeoutMs, headers);
        if (this.ended) {
          res.body.close();
          return;
        }
        if (res.status >= 200 && res.status < 300) {
          if (!contentType(res.headers).startsWith('text/event-stream')) {
            res.body.close();
            this.transport.log('info', `stream ${this.where}: the server answered without an event stream; polling instead`);
            this.finish('unsupported', new ApiError('not_found', 'The server offers no push stream here.', { status: res.status }));
            return;
          }
          this.emit('open');
          this.transport.log('debug', `stream ${this.where}: open`);
          const openedAt = Date.now();
          error = await this.consume(res.body);
          if (Date.now() - openedAt >= STREAM_STABLE_MS) this.attempt = 0;
        } else {
          const text = await this.transport.readSmall(res.body);
          const message = serverMessageOf(text);
          const err = errorFromStatus(res.status, message === undefined ? undefined : this.transport.redact(message), parseRetryAfter(res.headers['retry-after']), this.transport.errorContext(`event stream for ${this.where}`));
          // A 400 here is not about our (checked) names: a server that does not know the route. Poll instead.
          if (UNSUPPORTED_STATUSES.has(res.status) || err.code === 'bad_request') {
            this.transport.log('info', `stream ${this.where}: the server has no stream route (HTTP ${res.status}); polling instead`);
            this.finish('unsupported', err);
            return;
          }
          if (err.code === 'unauthorized') {
            this.transport.log('warn', `stream ${this.where}: ${err.code} (HTTP ${res.status}); not reconnecting`);
            this.finish('closed', err);
            return;
          }
          error = err;
          retryAfterMs = err.retryAfterMs;
        }
      } catch (e) {
        if (this.ended) return;
        if (ApiError.is(e, 'cancelled')) {
          // only the transport's dispose cancels without us having ended
          this.finish('closed', e);
          return;
        }
        error = ApiError.is(e) ? e : networkError(e, this.transport.origin, []);
      }
      if (this.ended) return;
      // Retry-After is honoured (up to a cap); otherwise jittered backoff, never shorter than the server's `retry:`.
      const delay =
        retryAfterMs !== undefined
          ? Math.min(retryAfterMs, STREAM_MAX_RETRY_AFTER_MS)
          : Math.min(Math.max(this.serverRetryMs ?? 0, backoffDelay(this.attempt, this.initialDelayMs, this.maxDelayMs)), this.maxDelayMs);
      this.attempt++;
      this.transport.log('info', `stream ${this.where}: ${error.message} Reconnecting in ${delay} ms.`);
      this.emit('reconnecting', error);
      const waited = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          this.ac.signal.removeEventListener('abort', onAbort);
          resolve(true);
        }, delay);
        const onAbort = (): void => {
          clearTimeout(timer);
          resolve(false);
        };
        this.ac.signal.addEventListener('abort', onAbort, { once: true });
      });
      if (!waited) return;
    }
  }

  /** Reads the event stream until it ends; resolves with the reason to reconnect. */
  private async consume(body: StreamBody): Promise<ApiError> {
    const parser = new SseParser();
    let idle: ReturnType<typeof setTimeout> | undefined;
    let idled = false;
    const arm = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        idled = true;
        body.close();
      }, this.idleTimeoutMs);
    };
    arm();
    try {
      for (;;) {
        const { done, value: chunk } = await body.read();
        if (done || this.ended) break;
        const ended = parser.eventsEnded;
        const events = parser.push(chunk);
        if (parser.eventsEnded !== ended) arm();
        for (const ev of events) this.handle(ev);
        if (parser.lastEventId !== undefined) this.lastEventId = parser.lastEventId;
        this.serverRetryMs = parser.retryMs;
      }
      if (idled) return idleError(this.idleTimeoutMs);
      return new ApiError('network', 'The server closed the event stream.');
    } catch (e) {
      if (idled) return idleError(this.idleTimeoutMs);
      if (SseProtocolError.is(e)) return new ApiError('protocol', e.message, { cause: e });
      return networkError(e, this.transport.origin, []);
    } finally {
      clearTimeout(idle);
      body.close();
    }
  }

  private handle(ev: SseEvent): void {
    if (this.ended) return;
    if (ev.event !== 'message' && ev.event !== 'delete') return; // other event names are not ours
    let parsed;
    try {
      parsed = parseStreamEvent(parseJsonText(ev.data));
    } catch (e) {
      this.transport.log('warn', `stream ${this.where}: skipped a malformed event: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    try {
      this.handlers.onEvent(parsed);
    } catch (e) {
      this.transport.log('error', `stream ${this.where}: onEvent handler threw: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
