// Child-process helpers: commands run in their own process group so that a timeout or a
// stop ends every descendant (code-server forks its extension host and a file watcher).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

/** After SIGTERM, how long a process group gets before SIGKILL (code-server's watcher lingers ~5 s). */
export const STOP_GRACE_MS = 8_000;

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here. */
  logFile: string;
  timeoutMs: number;
}

/** Runs a command to completion; resolves with its exit code (or -1 when killed by the timeout). */
export function runLogged(command: string, args: readonly string[], options: RunOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(options.logFile, 'a');
    fs.writeSync(log, `$ ${command} ${args.join(' ')}\n`);
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', log, log],
      detached: true,
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGKILL');
    }, options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      fs.closeSync(log);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      fs.writeSync(log, `[exit ${code ?? signal}${timedOut ? ', timed out' : ''}]\n`);
      fs.closeSync(log);
      resolve(timedOut ? -1 : (code ?? 1));
    });
  });
}

/** Signals the whole process group of a detached child; ignores groups that are already gone. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group has already exited.
  }
}

/** Ends a detached child's process group: SIGTERM, then SIGKILL after a grace period. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  killGroup(child, 'SIGTERM');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (Date.now() < deadline && groupAlive(child.pid)) {
    await delay(100);
  }
  if (groupAlive(child.pid)) killGroup(child, 'SIGKILL');
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Last lines of a log file, for error messages. */
export function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
