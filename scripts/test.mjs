// `npm test`: every check, in order, each timed; the split is printed at the end, and also
// when a step fails (then the exit code is that step's). The steps are the package.json
// scripts of the same names, so each can be run alone. Beside each step's wall time it prints the
// CPU time its processes used (Linux: the reaped children's user + system time, /proc/self/stat),
// so the split also says how far more parallelism could go on this machine's cores.
//   node scripts/test.mjs [--from STEP]     (--from: start at that step, for a rerun)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** [name, the command's argv]: npm scripts by name; the mocha of test:node alone, so its PostgreSQL half is its own row. */
const STEPS = [
  ['build', ['npm', 'run', '-s', 'build']],
  ['typecheck', ['npm', 'run', '-s', 'typecheck']],
  ['lint', ['npm', 'run', '-s', 'lint']],
  ['test:node', [process.execPath, 'node_modules/mocha/bin/mocha.js']],
  ['test:node:postgres', ['npm', 'run', '-s', 'test:node:postgres']],
  ['test:windows', ['npm', 'run', '-s', 'test:windows']],
  ['package', ['npm', 'run', '-s', 'package']],
  ['test:package', ['npm', 'run', '-s', 'test:package']],
  ['test:integration', ['npm', 'run', '-s', 'test:integration']],
  ['test:e2e', ['npm', 'run', '-s', 'test:e2e']],
];

const fromAt = process.argv.indexOf('--from');
const from = fromAt >= 0 ? process.argv[fromAt + 1] : undefined;
const first = from === undefined ? 0 : STEPS.findIndex(([name]) => name === from);
if (first < 0) {
  process.stderr.write(`no step ${JSON.stringify(from)}; the steps: ${STEPS.map(([n]) => n).join(', ')}\n`);
  process.exit(64);
}

/** CPU seconds used so far by this process's reaped children (Linux), or undefined elsewhere. */
function childCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command's closing parenthesis; cutime and cstime are fields 16 and 17 (1-based), in ticks of 1/100 s.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / 100;
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
  const cpu0 = childCpuSeconds();
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = childCpuSeconds();
  rows.push([name, seconds, cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0, r.status === 0 ? 'ok' : r.error ? `failed: ${r.error.message}` : `failed (exit ${r.status ?? r.signal})`]);
  if (r.status !== 0) {
    failed = r.status || 1;
    break;
  }
}
const total = Number(process.hrtime.bigint() - started) / 1e9;
const width = Math.max(...STEPS.map(([n]) => n.length));
const cpuTotal = rows.every((r) => r[2] !== undefined) ? rows.reduce((n, r) => n + r[2], 0) : undefined;
const cores = availableParallelism();
process.stdout.write(`\nnpm test, where the time went (${fmt(total)} in all${cpuTotal === undefined ? '' : `; ${fmt(cpuTotal)} of CPU, ${cores} cores`}):\n`);
process.stdout.write(`  ${'step'.padEnd(width)}  ${'wall'.padStart(12)}  share  ${'CPU'.padStart(12)}\n`);
for (const [name, seconds, cpu, how] of rows) {
  const cpuText = cpu === undefined ? '' : fmt(cpu);
  process.stdout.write(`  ${name.padEnd(width)}  ${fmt(seconds).padStart(12)}  ${String(Math.round((100 * seconds) / total)).padStart(3)} %  ${cpuText.padStart(12)}  ${how}\n`);
}
if (cpuTotal !== undefined) process.stdout.write(`  the CPU time over ${cores} cores: ${fmt(cpuTotal / cores)}, the least wall time any split of these steps could take here\n`);
if (failed !== undefined) process.stdout.write(`stopped at ${rows.at(-1)[0]}; rerun from there: node scripts/test.mjs --from ${rows.at(-1)[0]}\n`);
process.exit(failed ?? 0);
