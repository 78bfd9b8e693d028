// A request over a raw socket that announces a body and sends only part of it: what a slow or
// hostile client does. The socket is half-open capable (allowHalfOpen), so when the server ends
// its side the client keeps its own open, as a client that never closes does.
import * as net from 'node:net';

export interface Stalled {
  socket: net.Socket;
  /** Everything the server sent so far. */
  answer(): string;
  /** The status code of the answer, once its status line arrived. */
  status(): number | undefined;
  /** Resolves with the status once an answer arrives; rejects after `ms`. */
  answered(ms: number): Promise<number>;
  /** Resolves once the server has let go of the connection (the client never ends its side), as the server counts them; rejects after `ms`. */
  closed(server: net.Server, ms: number): Promise<void>;
}

export async function stalledRequest(port: number, method: string, target: string, o: { declare: number; send?: number; headers?: Record<string, string> }): Promise<Stalled> {
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  let isClosed = false;
  socket.setEncoding('latin1').on('data', (d: string) => (text += d));
  socket.on('error', () => undefined);
  socket.on('close', () => (isClosed = true));
  const extra = Object.entries({ 'content-type': 'application/json', ...o.headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: ${o.declare}\r\n${extra}\r\n`);
  if ((o.send ?? 1) > 0) socket.write(Buffer.alloc(o.send ?? 1, '{'));
  const status = (): number | undefined => {
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
    return m ? Number(m[1]) : undefined;
  };
  return {
    socket,
    answer: () => text,
    status,
    answered: (ms) => until(() => status(), ms, () => `no answer to ${method} ${target} within ${ms} ms`),
    closed: async (server, ms) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const open = await new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
        if (open === 0 || isClosed) return;
        if (Date.now() > deadline) throw new Error(`the server kept ${method} ${target} open for ${ms} ms (answer: ${JSON.stringify(text.slice(0, 80))})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Polls `probe` until it yields a value; rejects with `why()` after `ms`. */
export async function until<T>(probe: () => T | undefined, ms: number, why: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(why());
    await new Promise((r) => setTimeout(r, 20));
  }
}
