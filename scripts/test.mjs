// `npm test`: every check, in order, each timed; the split is printed at the end, and also
// when a step fails (then the exit code is that step's). The steps are the package.json
// scripts of the same names, so each can be run alone. Beside each step's wall time it prints the
// CPU time the machine was busy (Linux, /proc/stat) and the share of its cores that kept busy, so
// the split also says how far more parallelism could go on this machine.
//   node scripts/test.mjs [--from STEP]     (--from: start at that step, for a rerun)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * [name, the command's argv]: npm scripts by name; the mocha of test:node alone, so its PostgreSQL
 * half is its own row. The build is made once: build writes dist/ and package the VSIX, so the
 * extension-host suites run their `:built` scripts (test:integration and test:e2e alone rebuild first).
 */
const STEPS = [
  ['build', ['npm', 'run', '-s', 'build']],
  ['typecheck', ['npm', 'run', '-s', 'typecheck']],
  ['lint', ['npm', 'run', '-s', 'lint']],
  ['test:node', [process.execPath, 'node_modules/mocha/bin/mocha.js']],
  ['test:node:postgres', ['npm', 'run', '-s', 'test:node:postgres']],
  ['test:windows', ['npm', 'run', '-s', 'test:windows']],
  ['package', ['npm', 'run', '-s', 'package']],
  ['test:package', ['npm', 'run', '-s', 'test:package']],
  ['test:integration', ['npm', 'run', '-s', 'test:integration:built']],
  ['test:e2e', ['npm', 'run', '-s', 'test:e2e:built']],
];

const fromAt = process.argv.indexOf('--from');
const from = fromAt >= 0 ? process.argv[fromAt + 1] : undefined;
const first = from === undefined ? 0 : STEPS.findIndex(([name]) => name === from);
if (first < 0) {
  process.stderr.write(`no step ${JSON.stringify(from)}; the steps: ${STEPS.map(([n]) => n).join(', ')}\n`);
  process.exit(64);
}

/**
 * The machine's CPU seconds so far, busy and in all, summed over its cores (Linux: /proc/stat's
 * first line, in ticks of 1/100 s), or undefined elsewhere. Busy is all but idle and iowait: it
 * counts every process, also those a step starts detached (code-server, Chromium, Wine's server),
 * which a child's own rusage would miss; on a shared machine it counts the neighbours too.
 */
function machineCpuSeconds() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const all = f.slice(0, 8).reduce((n, x) => n + x, 0);
    return { busy: (all - f[3] - f[4]) / 100, all: all / 100 };
  } catch {
    return undefined;
  }
}

const fmt = (s) => (s >= 60 ? `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s` : `${s.toFixed(1)} s`);
const rows = [];
let failed;
const started = process.hrtime.bigint();
for (const [name, [cmd, ...args]] of STEPS.slice(first)) {
  process.stdout.write(`\n=== ${name}\n`);
  const t0 = process.hrtime.bigint();
  const cpu0 = machineCpuSeconds();
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = machineCpuSeconds();
  rows.push([name, seconds, cpu0 === undefined || cpu1 === undefined ? undefined : { busy: cpu1.busy - cpu0.busy, all: cpu1.all - cpu0.all }, r.status === 0 ? 'ok' : r.error ? `failed: ${r.error.message}` : `failed (exit ${r.status ?? r.signal})`]);
  if (r.status !== 0) {
    failed = r.status || 1;
    break;
  }
}
const total = Number(process.hrtime.bigint() - started) / 1e9;
const width = Math.max(...STEPS.map(([n]) => n.length));
const busyTotal = rows.every((r) => r[2] !== undefined) ? rows.reduce((n, r) => n + r[2].busy, 0) : undefined;
const cores = availableParallelism();
process.stdout.write(`\nnpm test, where the time went (${fmt(total)} in all${busyTotal === undefined ? '' : `; the machine's ${cores} cores were busy for ${fmt(busyTotal)} of CPU`}):\n`);
process.stdout.write(`  ${'step'.padEnd(width)}  ${'wall'.padStart(12)}  share  ${'CPU busy'.padStart(12)}  cores busy\n`);
for (const [name, seconds, cpu, how] of rows) {
  const cpuText = cpu === undefined ? ''.padStart(12 + 2 + 10) : `${fmt(cpu.busy).padStart(12)}  ${`${Math.round((100 * cpu.busy) / cpu.all)} %`.padStart(10)}`;
  process.stdout.write(`  ${name.padEnd(width)}  ${fmt(seconds).padStart(12)}  ${String(Math.round((100 * seconds) / total)).padStart(3)} %  ${cpuText}  ${how}\n`);
}
if (busyTotal !== undefined) process.stdout.write(`  that CPU time spread over ${cores} cores is ${fmt(busyTotal / cores)}: no order or overlap of these steps could finish sooner here\n`);
if (failed !== undefined) process.stdout.write(`stopped at ${rows.at(-1)[0]}; rerun from there: node scripts/test.mjs --from ${rows.at(-1)[0]}\n`);
process.exit(failed ?? 0);
