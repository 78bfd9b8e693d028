// Child processes of the benchmark: start a server, wait for its JSON ready line (or for
// its SMTP greeting), read its RSS, stop it.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import { stopServerProcess } from '../../src/shared/contract';

/** A server that has not said it is ready by then is reported as failed. */
export const READY_TIMEOUT_MS = 120_000;
/** Lines of stderr kept to explain a failure. */
const STDERR_TAIL_LINES = 30;
/** Grace period of a clean stop (contract.ts stopServerProcess) before SIGKILL. */
const STOP_GRACE_MS = 5_000;

export class BenchProcessError extends Error {
  constructor(
    readonly code: 'PROC_EXIT' | 'PROC_TIMEOUT' | 'PROC_READY_LINE',
    message: string,
  ) {
    super(message);
    this.name = 'BenchProcessError';
  }
  static is(e: unknown): e is BenchProcessError {
    return e instanceof BenchProcessError;
  }
}

export interface Started<R> {
  child: ChildProcess;
  /** Parsed ready line (or the value of the readiness probe). */
  ready: R;
  /** ms from spawn() to readiness. */
  readyMs: number;
  stderrTail(): string;
  stop(): Promise<void>;
}

function attach(child: ChildProcess): { tail: () => string; exited: Promise<number | null> } {
  const lines: string[] = [];
  let partial = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (c: string) => {
    const parts = (partial + c).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    if (lines.length > STDERR_TAIL_LINES) lines.splice(0, lines.length - STDERR_TAIL_LINES);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { tail: () => [...lines, partial].join('\n').trim(), exited };
}

function stopper(child: ChildProcess, exited: Promise<number | null>): () => Promise<void> {
  return async () => {
    await stopServerProcess(child, STOP_GRACE_MS);
    await exited;
  };
}

/** Any JSON value: the first-line check of processes other than ours. */
function anyJson<R>(line: string): R | undefined {
  try {
    return JSON.parse(line) as R;
  } catch {
    return undefined;
  }
}

/**
 * Spawns `command args` and resolves when it prints its first line on stdout, as `parse`
 * reads it (undefined: not a ready line). By default any JSON line, as bench/ref/bare.mjs
 * prints; `test-inbox serve` is read with the contract's parseReadyLine (./ours.ts).
 */
export async function startWithReadyLine<R>(
  command: string,
  args: string[],
  options: SpawnOptions = {},
  parse: (line: string) => R | undefined = anyJson,
): Promise<Started<R>> {
  const t0 = performance.now();
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const { tail, exited } = attach(child);
  const stop = stopper(child, exited);
  try {
    const ready = await new Promise<R>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new BenchProcessError('PROC_TIMEOUT', `no ready line within ${READY_TIMEOUT_MS} ms\n${tail()}`)),
        READY_TIMEOUT_MS,
      );
      child.stdout?.setEncoding('utf8');
      const onData = (c: string) => {
        out += c;
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        const line = out.slice(0, nl).trim();
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        clearTimeout(timer);
        const ready = parse(line);
        if (ready !== undefined) resolve(ready);
        else reject(new BenchProcessError('PROC_READY_LINE', `first stdout line is not a ready line: ${line.slice(0, 200)}`));
      };
      child.stdout?.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new BenchProcessError('PROC_EXIT', `exited with code ${code} before it was ready\n${tail()}`));
      });
    });
    return { child, ready, readyMs: performance.now() - t0, stderrTail: tail, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Spawns a server and resolves when its SMTP port answers with a 220 greeting. */
export async function startWithSmtpProbe(command: string, args: string[], port: number, options: SpawnOptions = {}): Promise<Started<number>> {
  const t0 = performance.now();
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
  const { tail, exited } = attach(child);
  const stop = stopper(child, exited);
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = t0 + READY_TIMEOUT_MS;
  while (!(await greets(port))) {
    if (gone) throw new BenchProcessError('PROC_EXIT', `exited with code ${child.exitCode} before it was ready\n${tail()}`);
    if (performance.now() > deadline) {
      await stop();
      throw new BenchProcessError('PROC_TIMEOUT', `SMTP port ${port} did not greet within ${READY_TIMEOUT_MS} ms\n${tail()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, ready: port, readyMs: performance.now() - t0, stderrTail: tail, stop };
}

function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setEncoding('latin1');
    s.on('data', (c: string) => {
      buf += c;
      if (buf.includes('\n')) done(buf.startsWith('220'));
    });
    s.on('error', () => done(false));
    s.setTimeout(2_000, () => done(false));
  });
}

/** A port free on 127.0.0.1 right now (for servers that cannot take port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process in MB, from /proc/<pid>/status (Linux); NaN elsewhere. */
export function rssMb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** "host:port" or "http://host:port" → port. */
export function portOf(address: string): number {
  const m = /:(\d+)\/?$/.exec(address);
  if (!m) throw new BenchProcessError('PROC_READY_LINE', `no port in ${address}`);
  return Number(m[1]);
}

let clockTicks: number | undefined;
/** Kernel clock ticks per second (`getconf CLK_TCK`, 100 almost everywhere). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * CPU time (user + system, every thread) a process has used so far, in ms, from
 * /proc/<pid>/stat (Linux); NaN elsewhere. Unlike wall-clock rates it hardly moves when other
 * work shares the machine, so CPU per message is the steadier figure on a busy machine.
 */
/** A CPU-time reader for the process `pid` (for a measuring window, window.ts); NaN when there is none. */
export function serverCpu(pid: number | undefined): () => number {
  return pid ? () => cpuMs(pid) : () => NaN;
}

export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) / ticksPerSecond()) * 1000;
  } catch {
    return NaN;
  }
}
