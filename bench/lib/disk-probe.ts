// A context figure: how fast this machine's disk makes a small file durable right now
// (4 KB write + fdatasync + close + rename, one at a time). On a shared machine it moves a
// lot; the SMTP and inject figures of a store that fsyncs cannot be read without it.
import { promises as fs, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** How long the probe writes; long enough for a stable rate, short beside the whole bench. */
export const DISK_PROBE_MS = 1_500;

/** Durable 4 KB file creations per second, sequentially. */
export async function diskProbe(durationMs = DISK_PROBE_MS): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'test-inbox-bench-disk-'));
  const data = Buffer.alloc(4096, 0x61);
  let n = 0;
  try {
    const t0 = performance.now();
    while (performance.now() - t0 < durationMs) {
      const tmp = path.join(dir, `t${n}`);
      const fh = await fs.open(tmp, 'wx');
      try {
        await fh.writeFile(data);
        await fh.datasync();
      } finally {
        await fh.close();
      }
      await fs.rename(tmp, path.join(dir, `m${n}`));
      n++;
    }
    return n / ((performance.now() - t0) / 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `some avg10` of /proc/pressure/<what> (share of the last 10 s something waited), or undefined. */
export function pressure(what: 'cpu' | 'io'): number | undefined {
  try {
    const m = /^some avg10=([\d.]+)/m.exec(readFileSync(`/proc/pressure/${what}`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
