// A raw SMTP load client: N connections over node:net with TCP_NODELAY, each saying EHLO
// once and then looping MAIL FROM / RCPT TO / DATA / body / "." and waiting for each
// reply (no pipelining). Only messages the server acknowledged with 250 after the final
// dot, inside the measuring window, are counted. Works against any SMTP port.
import * as net from 'node:net';
import { serverCpu } from './procs';
import { percentile } from './stats';
import { counts, newWindow, runWindow } from './window';

/** Size of one generated message (headers + body) in bytes: the size the issue asks for. */
export const DEFAULT_MESSAGE_BYTES = 4096;
/** A reply slower than this means the server is stuck; the connection is abandoned. */
const REPLY_TIMEOUT_MS = 30_000;

export interface SmtpLoadOptions {
  host: string;
  port: number;
  /** Parallel connections, each with one transaction in flight. */
  connections: number;
  /** Time spent sending before counting starts (JIT, caches, pools). */
  warmupMs: number;
  /** Length of the measuring window. */
  durationMs: number;
  /** Total size of each message in bytes. */
  messageBytes?: number;
  /** Recipient of the messages of connection `conn`. */
  recipient?: (conn: number) => string;
  /** Server process whose CPU time is sampled over the window (Linux). */
  serverPid?: number;
}

export interface SmtpLoadResult {
  /** Messages acknowledged with 250 inside the window. */
  acked: number;
  /** Acknowledged messages per second over the window. */
  msgsPerSec: number;
  /** Replies other than the expected code (the transaction is reset and the loop continues). */
  rejected: number;
  /** Connections that failed (socket error, close or timeout). */
  failedConnections: number;
  /** First problem seen, for the report. */
  firstError?: string;
  /** Latency from MAIL FROM to the 250 after the final dot, in ms. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  windowMs: number;
  /** Server CPU time (user + system, all threads) per acknowledged message, in ms; NaN when unknown. */
  serverCpuMsPerMsg: number;
  /** The server's CPU per message over the whole run and until it went quiet after it (every message, warm-up included). */
  serverCpuSettledMsPerMsg: number;
  /** The server did not go quiet within the wait: serverCpuSettledMsPerMsg is a lower bound. */
  settleTimedOut: boolean;
}

/** An SMTP reply: the code of the last line and the text of all lines. */
export interface SmtpReply {
  code: number;
  text: string;
}

export class SmtpLoadError extends Error {
  constructor(
    readonly code: 'SMTP_CONNECT' | 'SMTP_REPLY' | 'SMTP_TIMEOUT' | 'SMTP_CLOSED',
    message: string,
  ) {
    super(message);
    this.name = 'SmtpLoadError';
  }
  static is(e: unknown): e is SmtpLoadError {
    return e instanceof SmtpLoadError;
  }
}

/**
 * Builds one RFC 5322 message of exactly `bytes` bytes (CRLF line endings, no line starting
 * with a dot, so it needs no dot-stuffing), ending with CRLF.
 */
export function buildMessage(bytes: number, from: string, to: string, subject: string): Buffer {
  const head =
    `From: Bench Sender <${from}>\r\n` +
    `To: <${to}>\r\n` +
    `Subject: ${subject}\r\n` +
    `Date: ${new Date().toUTCString().replace('GMT', '+0000')}\r\n` +
    `Message-ID: <${subject.replace(/[^a-z0-9]/gi, '')}.${Date.now()}@bench.test>\r\n` +
    'MIME-Version: 1.0\r\n' +
    'Content-Type: text/plain; charset=utf-8\r\n' +
    '\r\n' +
    'Your verification code is 482913.\r\n';
  const line = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\r\n';
  let body = '';
  while (head.length + body.length + line.length <= bytes - 2) body += line;
  const fill = bytes - 2 - head.length - body.length;
  if (fill < 0) throw new RangeError(`message of ${bytes} bytes is too small for its headers`);
  body += 'x'.repeat(fill) + '\r\n';
  const msg = Buffer.from(head + body, 'latin1');
  if (msg.length !== bytes) throw new RangeError(`built ${msg.length} bytes instead of ${bytes}`);
  return msg;
}

/** One SMTP connection that sends a command and waits for its reply. */
export class SmtpConnection {
  private readonly socket: net.Socket;
  private pending = '';
  private lines: string[] = [];
  private waiter?: { resolve: (r: SmtpReply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };
  private queued: SmtpReply[] = [];
  private failure?: Error;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (e) => this.fail(new SmtpLoadError('SMTP_CLOSED', `socket error: ${e.message}`)));
    socket.on('close', () => this.fail(new SmtpLoadError('SMTP_CLOSED', 'connection closed by the server')));
  }

  /** Connects and reads the 220 greeting. */
  static async open(host: string, port: number): Promise<SmtpConnection> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host, port, noDelay: true });
      s.once('connect', () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', (e) => reject(new SmtpLoadError('SMTP_CONNECT', `cannot connect to ${host}:${port}: ${e.message}`)));
    });
    const conn = new SmtpConnection(socket);
    await conn.expect(conn.read(), 220, 'greeting');
    return conn;
  }

  private onData(chunk: string): void {
    this.pending += chunk;
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, nl).replace(/\r$/, '');
      this.pending = this.pending.slice(nl + 1);
      this.lines.push(line);
      // A final reply line is "NNN " or just "NNN"; "NNN-" continues.
      if (line.length < 4 || line[3] !== '-') {
        const reply = { code: Number(line.slice(0, 3)) || 0, text: this.lines.join('\n') };
        this.lines = [];
        if (this.waiter) {
          const w = this.waiter;
          this.waiter = undefined;
          clearTimeout(w.timer);
          w.resolve(reply);
        } else {
          this.queued.push(reply);
        }
      }
    }
  }

  private fail(e: Error): void {
    if (this.failure) return;
    this.failure = e;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      clearTimeout(w.timer);
      w.reject(e);
    }
  }

  /** The next reply. */
  read(): Promise<SmtpReply> {
    const q = this.queued.shift();
    if (q) return Promise.resolve(q);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new SmtpLoadError('SMTP_TIMEOUT', `no reply within ${REPLY_TIMEOUT_MS} ms`));
        this.socket.destroy();
      }, REPLY_TIMEOUT_MS);
      this.waiter = { resolve, reject, timer };
    });
  }

  async expect(reply: Promise<SmtpReply>, code: number, what: string): Promise<SmtpReply> {
    const r = await reply;
    if (r.code !== code) throw new SmtpLoadError('SMTP_REPLY', `${what}: expected ${code}, got ${r.text.slice(0, 200)}`);
    return r;
  }

  /** Sends a command line (CRLF added) and returns its reply. */
  command(line: string): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    this.socket.write(line + '\r\n');
    return this.read();
  }

  /** Sends the message data followed by the terminating dot and returns the reply. */
  data(message: Buffer): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    this.socket.write(message);
    this.socket.write('.\r\n');
    return this.read();
  }

  async quit(): Promise<void> {
    if (!this.failure) {
      try {
        await this.command('QUIT');
      } catch {
        // The server may close first; nothing to do.
      }
    }
    this.socket.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/**
 * Sends one message over a fresh connection and returns the reply to the final dot, with
 * `at`, Date.now() when that reply arrived (before QUIT). Used by tests, to check a server
 * works before loading it, and by the arrival-latency bench.
 */
export async function sendOne(host: string, port: number, to: string, message?: Buffer): Promise<SmtpReply & { at: number }> {
  const c = await SmtpConnection.open(host, port);
  try {
    await c.expect(c.command('EHLO bench.test'), 250, 'EHLO');
    await c.expect(c.command('MAIL FROM:<sender@bench.test>'), 250, 'MAIL FROM');
    await c.expect(c.command(`RCPT TO:<${to}>`), 250, 'RCPT TO');
    await c.expect(c.command('DATA'), 354, 'DATA');
    const reply = await c.data(message ?? buildMessage(DEFAULT_MESSAGE_BYTES, 'sender@bench.test', to, 'one'));
    return { ...reply, at: Date.now() };
  } finally {
    await c.quit();
  }
}

/** Runs the load and reports acknowledged messages per second inside the window. */
export async function runSmtpLoad(opts: SmtpLoadOptions): Promise<SmtpLoadResult> {
  const size = opts.messageBytes ?? DEFAULT_MESSAGE_BYTES;
  const recipient = opts.recipient ?? ((i: number) => `bench${i}@inbox.test`);
  const from = 'sender@bench.test';
  const w = newWindow();
  let acked = 0;
  let ackedAll = 0;
  let rejected = 0;
  let failedConnections = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];

  const conns = await Promise.all(
    Array.from({ length: opts.connections }, async (_, i) => {
      const c = await SmtpConnection.open(opts.host, opts.port);
      await c.expect(c.command('EHLO bench.test'), 250, 'EHLO');
      return { c, i, to: recipient(i) };
    }),
  );

  const loops = conns.map(async ({ c, i, to }) => {
    let n = 0;
    try {
      while (!w.stopping) {
        n++;
        const message = buildMessage(size, from, to, `bench ${i}-${n}`);
        const t0 = performance.now();
        const steps: Array<[() => Promise<SmtpReply>, number]> = [
          [() => c.command(`MAIL FROM:<${from}>`), 250],
          [() => c.command(`RCPT TO:<${to}>`), 250],
          [() => c.command('DATA'), 354],
          [() => c.data(message), 250],
        ];
        let ok = true;
        for (const [step, code] of steps) {
          const r = await step();
          if (r.code !== code) {
            ok = false;
            rejected++;
            firstError ??= `unexpected reply ${r.text.slice(0, 200)}`;
            await c.command('RSET');
            break;
          }
        }
        if (ok) ackedAll++;
        if (ok && counts(w)) {
          acked++;
          latencies.push(performance.now() - t0);
        }
      }
      await c.quit();
    } catch (e) {
      failedConnections++;
      firstError ??= e instanceof Error ? e.message : String(e);
      c.destroy();
    }
  });

  const { windowMs, cpuMs: serverCpuMs, settledCpuMs, settleTimedOut } = await runWindow(w, { warmupMs: opts.warmupMs, durationMs: opts.durationMs, cpuMs: serverCpu(opts.serverPid), settle: true }, loops);

  latencies.sort((a, b) => a - b);
  return {
    acked,
    msgsPerSec: acked / (windowMs / 1000),
    rejected,
    failedConnections,
    firstError,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    windowMs,
    serverCpuMsPerMsg: acked > 0 ? serverCpuMs / acked : NaN,
    serverCpuSettledMsPerMsg: ackedAll > 0 ? settledCpuMs / ackedAll : NaN,
    settleTimedOut,
  };
}

/**
 * Sends `total` messages over `connections` connections (a fixture builder, not a
 * measurement); `recipient(i)` names the recipient of message i. Rejects on the first
 * refused message.
 */
export async function sendMany(
  host: string,
  port: number,
  connections: number,
  total: number,
  recipient: (i: number) => string,
  messageBytes = DEFAULT_MESSAGE_BYTES,
  onProgress?: (sent: number) => void,
): Promise<void> {
  let next = 0;
  let sent = 0;
  const from = 'sender@bench.test';
  await Promise.all(
    Array.from({ length: Math.min(connections, total) }, async () => {
      const c = await SmtpConnection.open(host, port);
      try {
        await c.expect(c.command('EHLO bench.test'), 250, 'EHLO');
        while (next < total) {
          const i = next++;
          const to = recipient(i);
          await c.expect(c.command(`MAIL FROM:<${from}>`), 250, 'MAIL FROM');
          await c.expect(c.command(`RCPT TO:<${to}>`), 250, 'RCPT TO');
          await c.expect(c.command('DATA'), 354, 'DATA');
          await c.expect(c.data(buildMessage(messageBytes, from, to, `Your code is ${100000 + (i % 900000)} (#${i})`)), 250, 'end of data');
          if (++sent % 10_000 === 0) onProgress?.(sent);
        }
      } finally {
        await c.quit();
      }
    }),
  );
}
