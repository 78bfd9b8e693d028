// Context figures: how fast this machine's disk makes a small file durable right now
// (4 KB write + fdatasync + close + rename, one at a time), and what creating a file costs.
// On a shared machine both move a lot; the SMTP and inject figures of a store that writes a
// file per message and fsyncs cannot be read without them.
//
// File creation on ext4 can cost 20x its usual ~20 µs for minutes after many files were
// deleted nearby: the inode allocator skips inodes freed in the last 1-5 minutes and checks
// each of them on every creation (fs/ext4/ialloc.c recently_deleted()). A CI run or an
// `rm -rf` of a big folder just before the bench is enough. The probes write into folders
// the caller removes at the end, so they do not cause it themselves.
import { promises as fs, closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';

/** How long the probe writes; long enough for a stable rate, short beside the whole bench. */
export const DISK_PROBE_MS = 1_500;

/** Files the creation probe makes: enough for a stable mean, few enough to take well under a second when the disk is well. */
export const CREATE_PROBE_FILES = 1_000;

/** Durable 4 KB file creations per second, sequentially, in the empty folder `dir`. */
export async function diskProbe(dir: string, durationMs = DISK_PROBE_MS): Promise<number> {
  const data = Buffer.alloc(4096, 0x61);
  let n = 0;
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
}

/** Mean µs to create, write (4 KB, no fsync) and close one file, in the empty folder `dir`. */
export function createProbe(dir: string, files = CREATE_PROBE_FILES): number {
  const data = Buffer.alloc(4096, 0x61);
  const t0 = performance.now();
  for (let i = 0; i < files; i++) {
    const fd = openSync(path.join(dir, `c${i}`), 'wx');
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
  }
  return ((performance.now() - t0) * 1000) / files;
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
