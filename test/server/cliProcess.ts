// Runs `test-inbox` as a child process (test/support/cli.ts: the bundle under `npm test`, else the
// TypeScript source through tsx), for the CLI and durability tests.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseReadyLine, SERVER_ENV_NAMES, stopServerProcess } from '../../src/shared/contract';
import { cliArgv } from '../support/cli';

const REPO = path.resolve(__dirname, '..', '..');

export interface Running {
  child: ChildProcess;
  /** Resolves the ready line, rejects when the process exits first. */
  ready: Promise<{ http: string; smtp: string }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
  /** The clean stop every starter uses (contract.ts stopServerProcess: the IPC channel where there is one), then waits for the pipes to close. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `test-inbox` as a child process. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const childEnv = { ...process.env, ...env };
  for (const k of SERVER_ENV_NAMES) if (!(k in env)) delete childEnv[k];
  // A temp folder of its own (a PostgreSQL-backed server spools there), removed when the child
  // exits however it ends: a child killed by a test (SIGKILL) cannot remove what it made.
  let ownTmp: string | undefined;
  if (env.TMPDIR === undefined) childEnv.TMPDIR = childEnv.TMP = childEnv.TEMP = ownTmp = mkdtempSync(path.join(os.tmpdir(), 'test-inbox-child-'));
  // With an IPC channel, as the extension starts it: the stop closes the channel, which is a
  // clean stop on every platform (SIGTERM is TerminateProcess on Windows).
  const running = startServer(process.execPath, [...cliArgv(), ...args], { cwd: REPO, env: childEnv, ipc: true });
  if (ownTmp !== undefined) {
    const dir = ownTmp;
    running.child.once('exit', () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));
    running.child.once('error', () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));
  }
  return running;
}

/**
 * `spawn`, tried again when Windows' process creation fails with an error libuv cannot name
 * (`spawn UNKNOWN`, thrown at once). Under Wine (npm run test:windows) CreateProcess fails so now
 * and then, about once in a full run, after minutes of suites; the same call a moment later
 * works. Any other error, and a third failure, is the test's.
 */
export function spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess {
  for (let attempt = 1; ; attempt++) {
    try {
      return spawn(command, args, options);
    } catch (e) {
      if (process.platform !== 'win32' || (e as NodeJS.ErrnoException).code !== 'UNKNOWN' || attempt === 3) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200 * attempt);
    }
  }
}

/**
 * Starts any command that runs `test-inbox serve` (the source through tsx, the installed
 * binary, npx) and reads its ready line. `detached` puts it in its own process group, as a
 * terminal runs a foreground job. `exited` waits for the exit and both pipes' ends: the pipes close only when every
 * process holding them (a wrapper's child too) has ended.
 */
export function startServer(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; detached?: boolean; ipc?: boolean }): Running {
  const child = spawnChild(command, args, { cwd: options.cwd, env: options.env, detached: options.detached ?? false, stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  // The exit and both pipes' ends, not the child's 'close': with an IPC channel that the parent
  // disconnected, Node never emits 'close'.
  const exitedOnly = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const piped = (s: NodeJS.ReadableStream): Promise<void> => new Promise((resolve) => s.once('close', () => resolve()));
  const exited = Promise.all([exitedOnly, piped(child.stdout!), piped(child.stderr!)]).then(([r]) => r);
  const ready = new Promise<{ http: string; smtp: string }>((resolve, reject) => {
    const check = (): void => {
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const line = out.slice(0, nl);
      if (parseReadyLine(line)) resolve(JSON.parse(line) as { http: string; smtp: string });
      else reject(new Error(`the first line on stdout is not a ready line: ${line}`));
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => reject(new Error(`exited with ${code} before ready:\n${err}`)));
  });
  ready.catch(() => undefined);
  const stop = async (): Promise<{ code: number | null; signal: NodeJS.Signals | null }> => {
    await stopServerProcess(child);
    return exited;
  };
  return { child, ready, exited, stdout: () => out, stderr: () => err, stop };
}
