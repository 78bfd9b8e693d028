// Issue 16 point 3: how our checkpoints feel to another program on the same disk. The probe
// (bench/fsync-probe.ts, a separate process) measures its own 4 KB write + fdatasync latency
// while the machine is otherwise idle, during our SMTP ingest, and during our SMTP ingest with a
// `sync -f <dir>` every 2 s beside it (what the store's checkpoint did before it synced only its
// own files: syncfs flushes every dirty page of the whole file system, other programs' included).
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './ours';

export interface FsyncLatency {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** The probe in its own process for `ms`, writing in `dir`. */
export function runFsyncProbe(dir: string, ms: number): Promise<FsyncLatency> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'fsync-probe.ts'), dir, String(ms)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`fsync probe exited with ${code}: ${err.trim()}`);
        resolve(JSON.parse(out) as FsyncLatency);
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** `sync -f <dir>` every `everyMs` until the returned stop function is called (the old checkpoint's flush). */
export function syncfsLoop(dir: string, everyMs: number): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const tick = (): void => {
    if (stopped) return;
    running = new Promise<void>((resolve) => {
      const c = spawn('sync', ['-f', dir], { stdio: 'ignore' });
      c.on('error', () => resolve());
      c.on('exit', () => resolve());
    });
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
