// HTTP load: inject throughput (many requests in flight over a keep-alive pool) and list
// latency (sequential requests over one keep-alive connection).
import { Client, Pool } from 'undici';
import { serverCpu } from './procs';
import { percentile } from './stats';
import { counts, newWindow, runWindow } from './window';

/** Requests in flight for the inject benchmark: enough to keep a server busy without queueing forever. */
export const DEFAULT_INJECT_CONCURRENCY = 32;
/** A small client pool (8 connections, one request each), measured as context. */
export const INJECT_SMALL_POOL = 8;

export class HttpLoadError extends Error {
  constructor(
    readonly code: 'HTTP_STATUS' | 'HTTP_BODY',
    message: string,
  ) {
    super(message);
    this.name = 'HttpLoadError';
  }
  static is(e: unknown): e is HttpLoadError {
    return e instanceof HttpLoadError;
  }
}

export interface InjectLoadOptions {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** API token sent as `Authorization`; undefined for servers without auth. */
  token?: string;
  /** Path of the inject route. */
  path: string;
  /** Requests in flight. Default DEFAULT_INJECT_CONCURRENCY. */
  concurrency?: number;
  /** Keep-alive connections, one request in flight on each (no pipelining). Default: as many as requests in flight, so they are all at the server. */
  connections?: number;
  warmupMs: number;
  durationMs: number;
  /** Server process whose CPU time is sampled over the window (Linux). */
  serverPid?: number;
}

export interface InjectLoadResult {
  ok: number;
  reqPerSec: number;
  failed: number;
  firstError?: string;
  latencyP50Ms: number;
  latencyP99Ms: number;
  windowMs: number;
  /** Server CPU time (user + system, all threads) per answered request, in ms; NaN when unknown. */
  serverCpuMsPerReq: number;
}

/** POSTs `{from,subject,text}` JSON as fast as the server answers; counts 2xx answers with an id. */
export async function runInjectLoad(opts: InjectLoadOptions): Promise<InjectLoadResult> {
  const pool = new Pool(opts.origin, { connections: opts.connections ?? opts.concurrency ?? DEFAULT_INJECT_CONCURRENCY, pipelining: 1 });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.token) headers.authorization = opts.token;
  const w = newWindow();
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  let n = 0;

  const worker = async () => {
    while (!w.stopping) {
      const i = ++n;
      const body = JSON.stringify({
        from: 'Bench Sender <sender@bench.test>',
        subject: `Your code is ${100000 + (i % 900000)}`,
        text: `Hello,\n\nyour verification code is ${100000 + (i % 900000)}. It expires in 10 minutes.\n`,
      });
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: 'POST', path: opts.path, headers, body });
        const text = await res.body.text();
        if (res.statusCode < 200 || res.statusCode >= 300) throw new HttpLoadError('HTTP_STATUS', `HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        const parsed = JSON.parse(text) as { status?: string; id?: string };
        if (parsed.status !== 'ok' || typeof parsed.id !== 'string') throw new HttpLoadError('HTTP_BODY', `unexpected answer ${text.slice(0, 200)}`);
        if (counts(w)) {
          ok++;
          latencies.push(performance.now() - t0);
        }
      } catch (e) {
        failed++;
        firstError ??= e instanceof Error ? e.message : String(e);
        if (failed > 1000 && ok === 0) w.stopping = true;
      }
    }
  };

  const workers = Array.from({ length: opts.concurrency ?? DEFAULT_INJECT_CONCURRENCY }, worker);
  const { windowMs, cpuMs: serverCpuMs } = await runWindow(w, { warmupMs: opts.warmupMs, durationMs: opts.durationMs, cpuMs: serverCpu(opts.serverPid) }, workers);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    ok,
    reqPerSec: ok / (windowMs / 1000),
    failed,
    firstError,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    windowMs,
    serverCpuMsPerReq: ok > 0 ? serverCpuMs / ok : NaN,
  };
}

export interface ListLatencyOptions {
  origin: string;
  token?: string;
  /** Path with query, e.g. `/api/v2/domains/private/inboxes/big?limit=50`. */
  path: string;
  /** Requests not measured (JIT, caches). */
  warmup: number;
  /** Requests measured. */
  requests: number;
  /** Each answer must hold exactly this many messages. */
  expectMsgs: number;
}

export interface LatencyResult {
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  requests: number;
}

/**
 * Sequential GETs over one keep-alive connection; the time of each is from sending to the
 * last byte of the body. Every answer is checked (status 200, `msgs` of the expected length)
 * outside the timed part.
 */
export async function runListLatency(opts: ListLatencyOptions): Promise<LatencyResult> {
  const client = new Client(opts.origin, { pipelining: 1 });
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = opts.token;
  const times: number[] = [];
  try {
    for (let i = 0; i < opts.warmup + opts.requests; i++) {
      const t0 = performance.now();
      const res = await client.request({ method: 'GET', path: opts.path, headers });
      const text = await res.body.text();
      const dt = performance.now() - t0;
      if (res.statusCode !== 200) throw new HttpLoadError('HTTP_STATUS', `GET ${opts.path}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      const parsed = JSON.parse(text) as { msgs?: unknown[] };
      if (!Array.isArray(parsed.msgs) || parsed.msgs.length !== opts.expectMsgs) {
        throw new HttpLoadError('HTTP_BODY', `GET ${opts.path}: expected ${opts.expectMsgs} msgs, got ${Array.isArray(parsed.msgs) ? parsed.msgs.length : 'none'}`);
      }
      if (i >= opts.warmup) times.push(dt);
    }
  } finally {
    await client.close();
  }
  times.sort((a, b) => a - b);
  return {
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    meanMs: times.reduce((a, b) => a + b, 0) / times.length,
    maxMs: times[times.length - 1],
    requests: times.length,
  };
}
