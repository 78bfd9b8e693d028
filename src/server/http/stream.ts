// Push stream of new and removed messages (`GET /api/v2/domains/<D>/stream[/<inbox>]`),
// as Server-Sent Events: `event: message` / `event: delete` with a StreamEvent JSON as
// data, and a `: ping` comment every 15 s so proxies and clients notice dead connections.
// One store subscription serves every open stream.
import type { ServerResponse } from 'node:http';
import { ALL_INBOXES } from '../../core/ids';
import type { StreamEvent } from '../../core/wire';
import { summarize } from '../mime/render';
import type { MessageMeta, Store } from '../store/types';

/** Comment sent this often on every stream so idle connections are seen alive (and dead ones fail). */
const STREAM_PING_MS = 15_000;
/** Reconnect delay the client is told to use (SSE `retry:`), short because the server is local. */
const STREAM_RETRY_MS = 2_000;
/** A client that leaves this much unread is dropped (it reconnects and re-lists), so a stalled reader cannot grow server memory. */
const MAX_STREAM_BACKLOG_BYTES = 1024 * 1024;

interface StreamHubOptions {
  /** Ping interval; STREAM_PING_MS by default. */
  pingMs?: number;
}

interface StreamFilter {
  /** Lowercase domain, or undefined for every domain (`private`). */
  domain: string | undefined;
  /** Lowercase inbox, or undefined / `*` for every inbox. */
  inbox: string | undefined;
}

interface Client {
  res: ServerResponse;
  filter: StreamFilter;
}

function matches(filter: StreamFilter, domain: string, inbox: string): boolean {
  if (filter.domain !== undefined && filter.domain !== domain) return false;
  return filter.inbox === undefined || filter.inbox === ALL_INBOXES || filter.inbox === inbox;
}

export class StreamHub {
  readonly #store: Store;
  readonly #clients = new Set<Client>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  readonly #onMessage = (meta: MessageMeta): void => {
    if (this.#clients.size === 0) return;
    const event: StreamEvent = { type: 'message', domain: meta.domain, inbox: meta.inbox, msg: summarize(meta, Date.now()) };
    const frame = `event: message\ndata: ${JSON.stringify(event)}\n\n`;
    for (const c of this.#clients) if (matches(c.filter, meta.domain, meta.inbox)) this.#send(c, frame);
  };

  readonly #onDelete = (metas: MessageMeta[]): void => {
    if (this.#clients.size === 0) return;
    const groups = new Map<string, StreamEvent>();
    for (const m of metas) {
      const key = `${m.domain}\u0000${m.inbox}`;
      let event = groups.get(key);
      if (!event) {
        event = { type: 'delete', domain: m.domain, inbox: m.inbox, ids: [] };
        groups.set(key, event);
      }
      event.ids?.push(m.id);
    }
    for (const event of groups.values()) {
      const frame = `event: delete\ndata: ${JSON.stringify(event)}\n\n`;
      for (const c of this.#clients) if (matches(c.filter, event.domain, event.inbox)) this.#send(c, frame);
    }
  };

  readonly #pingMs: number;

  constructor(store: Store, options: StreamHubOptions = {}) {
    this.#store = store;
    this.#pingMs = options.pingMs ?? STREAM_PING_MS;
  }

  get size(): number {
    return this.#clients.size;
  }

  /** Starts an event stream on `res`; it ends when the client goes away or on close(). */
  open(res: ServerResponse, filter: StreamFilter): void {
    if (this.#closed) {
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      res.end(JSON.stringify({ status: 'error', message: 'the server is shutting down' }));
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      // no-transform: a proxy that compresses (code-server's port proxy, through which the web
      // UI reads this stream in a browser-based editor) would otherwise hold events in its gzip
      // buffer; x-accel-buffering: nginx's own buffering.
      'cache-control': 'no-store, no-transform',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    res.write(`retry: ${STREAM_RETRY_MS}\n: connected\n\n`);
    const client: Client = { res, filter };
    if (this.#clients.size === 0) this.#start();
    this.#clients.add(client);
    const drop = () => this.#remove(client);
    res.on('close', drop);
    res.on('error', drop);
  }

  /** Ends every open stream and stops listening to the store. */
  close(): void {
    this.#closed = true;
    for (const c of [...this.#clients]) {
      this.#remove(c);
      c.res.end();
    }
  }

  #start(): void {
    this.#store.on('message', this.#onMessage);
    this.#store.on('delete', this.#onDelete);
    this.#timer = setInterval(() => {
      for (const c of [...this.#clients]) this.#send(c, ': ping\n\n');
    }, this.#pingMs);
    this.#timer.unref();
  }

  #send(client: Client, frame: string): void {
    if (client.res.writableLength > MAX_STREAM_BACKLOG_BYTES) {
      this.#remove(client);
      client.res.destroy();
      return;
    }
    client.res.write(frame);
  }

  #remove(client: Client): void {
    if (!this.#clients.delete(client)) return;
    if (this.#clients.size === 0) {
      this.#store.off('message', this.#onMessage);
      this.#store.off('delete', this.#onDelete);
      if (this.#timer) clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}
