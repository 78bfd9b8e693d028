// Runs `test-inbox` from the TypeScript source (through tsx) as a child process, for the
// CLI and durability tests.
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { SERVER_ENV_NAMES } from '../../src/server/contract';

const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'src', 'server', 'cli.ts');

export interface Running {
  child: ChildProcess;
  /** Resolves the ready line, rejects when the process exits first. */
  ready: Promise<{ http: string; smtp: string }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

/** Starts `test-inbox` (the TypeScript source, through tsx) as a child process. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const childEnv = { ...process.env, ...env };
  for (const k of SERVER_ENV_NAMES) if (!(k in env)) delete childEnv[k];
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: REPO, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<{ http: string; smtp: string }>((resolve, reject) => {
    const check = (): void => {
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      try {
        resolve(JSON.parse(out.slice(0, nl)) as { http: string; smtp: string });
      } catch (e) {
        reject(e as Error);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => reject(new Error(`exited with ${code} before ready: ${err}`)));
  });
  ready.catch(() => undefined);
  return { child, ready, exited, stdout: () => out, stderr: () => err };
}

