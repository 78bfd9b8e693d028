// Another program's view of our disk use: a loop of 4 KB write + fdatasync to one file, in its
// own process, for a given time; prints the latencies' p50, p99 and max as one JSON line.
// Run by bench/lib/fsync-latency.ts:
//
//   node bench/fsync-probe.ts <dir> <ms>      (plain JavaScript apart from types: run with tsx)
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { percentile } from './lib/stats';

/** A short pause between writes, so the probe is a program that writes now and then, not a load. */
const GAP_MS = 5;

async function main(): Promise<void> {
  const [dir, msText] = process.argv.slice(2);
  const ms = Number(msText);
  if (!dir || !Number.isFinite(ms) || ms <= 0) {
    process.stderr.write('usage: fsync-probe.ts <dir> <ms>\n');
    process.exit(64);
  }
  const fd = openSync(path.join(dir, 'probe'), 'w');
  const data = Buffer.alloc(4096, 0x61);
  const lat: number[] = [];
  const end = performance.now() + ms;
  try {
    for (let i = 0; performance.now() < end; i++) {
      const t0 = performance.now();
      writeSync(fd, data, 0, data.length, (i % 256) * data.length);
      fdatasyncSync(fd);
      lat.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
  } finally {
    closeSync(fd);
  }
  lat.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ samples: lat.length, p50Ms: percentile(lat, 50), p99Ms: percentile(lat, 99), maxMs: lat[lat.length - 1] }) + '\n');
}

void main();
