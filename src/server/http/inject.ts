// The in-process transport: a `fetch` that runs a request through the server's own handler
// without a socket, as fastify's `inject` does. The request is a Readable holding its body and
// the response a Writable whose bytes become the Web Response's body, with backpressure: the
// handler's writes wait while the reader does not read. The handler sees the request and
// response shapes it always sees; the exchange ends (its `close`) when the response is sent, or
// when the caller aborts or stops reading, which ends a long-poll or a stream as a client that
// goes away does. Made only by the authenticated /mcp handler (mcp.ts), which passes the entry
// into the router after its auth step (httpApi.ts #afterAuth): no Host check, no second token
// check, no connection.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';

/** Runs one request in the router after the auth step; answers on `res`, never throws. */
export type AfterAuth = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Bytes of a response the handler may write ahead of its reader. */
const HIGH_WATER_BYTES = 64 * 1024;

class InjectedRequest extends Readable {
  readonly headers: Record<string, string>;
  readonly rawHeaders: string[];
  readonly method: string;
  readonly url: string;
  readonly httpVersion = '1.1';
  complete = false;
  constructor(method: string, url: string, headers: Headers, body: Buffer) {
    super({ read: () => undefined });
    this.method = method;
    this.url = url;
    this.headers = {};
    this.rawHeaders = [];
    headers.forEach((v, k) => {
      this.headers[k] = v;
      this.rawHeaders.push(k, v);
    });
    this.headers['content-length'] = String(body.length);
    if (body.length > 0) this.push(body);
    this.complete = true;
    this.push(null);
  }
}

class InjectedResponse extends Writable {
  statusCode = 200;
  headersSent = false;
  readonly socket = null;
  readonly #headers: Record<string, string> = {};
  readonly #onHead: (status: number, headers: Record<string, string>) => void;
  readonly #controller: () => ReadableStreamDefaultController<Uint8Array> | undefined;
  /** The write waiting for the reader to pull. */
  #pending: (() => void) | undefined;

  constructor(onHead: (status: number, headers: Record<string, string>) => void, controller: () => ReadableStreamDefaultController<Uint8Array> | undefined) {
    super({ highWaterMark: HIGH_WATER_BYTES });
    this.#onHead = onHead;
    this.#controller = controller;
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.#headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    return this;
  }

  getHeader(name: string): string | undefined {
    return this.#headers[name.toLowerCase()];
  }

  writeHead(status: number, headers?: Record<string, string | number | readonly string[] | undefined>): this {
    if (this.headersSent) throw new Error('the head of this response was written already');
    this.statusCode = status;
    for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) this.setHeader(k, v);
    this.headersSent = true;
    this.#onHead(status, { ...this.#headers });
    return this;
  }

  /** The reader pulled: a write that waited for it goes on. */
  pulled(): void {
    const go = this.#pending;
    this.#pending = undefined;
    go?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
    const c = this.#controller();
    if (!c) return callback();
    c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if ((c.desiredSize ?? 0) > 0) callback();
    else this.#pending = () => callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
    try {
      this.#controller()?.close();
    } catch {
      // the reader went away
    }
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#pending = undefined;
    try {
      this.#controller()?.error(error ?? new Error('the response was cut off'));
    } catch {
      // closed already
    }
    callback(error);
  }
}

function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

function bodyBytes(body: unknown): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('the in-process transport sends a string or bytes as the body');
}

/** A `fetch` that answers through `enter`, in this process. */
export function injectFetch(enter: AfterAuth): typeof fetch {
  const inject = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request) return Promise.reject(new TypeError('the in-process transport takes a URL and its init'));
    const url = new URL(String(input));
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortError());
    const req = new InjectedRequest((init.method ?? 'GET').toUpperCase(), `${url.pathname}${url.search}`, new Headers(init.headers), bodyBytes(init.body));
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    return new Promise<Response>((resolve, reject) => {
      let res: InjectedResponse | undefined = undefined;
      const body = new ReadableStream<Uint8Array>(
        {
          start: (c) => void (controller = c),
          pull: () => res?.pulled(),
          cancel: () => void res?.destroy(),
        },
        new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }),
      );
      res = new InjectedResponse(
        (status, headers) => {
          const empty = status === 204 || status === 205 || status === 304;
          resolve(new Response(empty ? null : body, { status, headers }));
        },
        () => controller,
      );
      const onAbort = (): void => {
        reject(abortError());
        res?.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      res.once('close', () => signal?.removeEventListener('abort', onAbort));
      enter(req as unknown as IncomingMessage, res as unknown as ServerResponse).catch((e: unknown) => {
        reject(e instanceof Error ? e : new Error(String(e)));
        res?.destroy();
      });
    });
  };
  return inject as typeof fetch;
}
