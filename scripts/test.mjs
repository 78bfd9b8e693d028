// `npm test`: every check, timed; the split is printed at the end, and also when a step fails
// (then the exit code is that step's). The steps are the package.json scripts of the same names,
// so each can be run alone. They run in stages: the steps of one stage run at once (each one's
// output is printed whole when it ends), a stage starts when the one before it has passed. Steps
// share a stage where they are independent and one of them alone leaves cores idle (a step that
// waits on a browser, Wine or PostgreSQL). Beside each stage's wall time it prints the CPU time
// the machine was busy (Linux, /proc/stat) and the share of its cores that kept busy, so the
// split also says how far more overlap could go on this machine.
//   node scripts/test.mjs [--from STEP]     (--from: start at that step, and the steps after it;
//                                            build first, and package when a step tests the VSIX
//                                            or the tarball, so a rerun tests the code as it is now)
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The Node suites start `test-inbox` as a child process from the bundle that `build` just made
 * (`TEST_INBOX_CLI_BUNDLE`, as the Windows suite does): what ships, and a quarter of the CPU of a
 * start through tsx. `npx mocha` alone runs the source through tsx.
 */
const BUNDLED_CLI = { TEST_INBOX_CLI_BUNDLE: path.join(ROOT, 'dist', 'cli.js') };

/**
 * The stages, in order; each a list of [name, the command's argv, extra environment]: npm scripts
 * by name; the mocha of test:node alone, so its PostgreSQL half is its own row. The build is made
 * once: build writes dist/ and package the VSIX, so the extension-host suites run their `:built`
 * scripts (test:integration and test:e2e alone rebuild first).
 */
const STAGES = [
  [['build', ['npm', 'run', '-s', 'build']]],
  [
    ['typecheck', ['npm', 'run', '-s', 'typecheck']],
    ['lint', ['npm', 'run', '-s', 'lint']],
    ['package', ['npm', 'run', '-s', 'package']],
  ],
  [
    ['test:node', [process.execPath, 'node_modules/mocha/bin/mocha.js'], BUNDLED_CLI],
    ['test:windows', ['npm', 'run', '-s', 'test:windows:built']],
  ],
  [
    ['test:node:postgres', ['npm', 'run', '-s', 'test:node:postgres'], BUNDLED_CLI],
    ['test:package', ['npm', 'run', '-s', 'test:package']],
    ['test:integration', ['npm', 'run', '-s', 'test:integration:built']],
    ['test:e2e', ['npm', 'run', '-s', 'test:e2e:built']],
  ],
];
const STEP_NAMES = STAGES.flat().map(([name]) => name);

const fromAt = process.argv.indexOf('--from');
const from = fromAt >= 0 ? process.argv[fromAt + 1] : undefined;
if (from !== undefined && !STEP_NAMES.includes(from)) {
  process.stderr.write(`no step ${JSON.stringify(from)}; the steps: ${STEP_NAMES.join(', ')}\n`);
  process.exit(64);
}
/**
 * The stages to run: from the one holding --from's step, that step and the ones after it. The
 * steps after build read what it makes (the Node suites' child servers are dist/cli.js), and
 * test:package and test:e2e read what package makes: a rerun makes them anew first.
 */
const firstStep = from === undefined ? 0 : STEP_NAMES.indexOf(from);
let seen = 0;
const chosen = STAGES.map((stage) => stage.filter(() => seen++ >= firstStep)).filter((stage) => stage.length > 0);
const picked = new Set(chosen.flat().map(([name]) => name));
const stepNamed = (name) => STAGES.flat().find(([n]) => n === name);
const makes = [
  ...(picked.has('build') ? [] : [stepNamed('build')]),
  ...(picked.has('package') || !(picked.has('test:package') || picked.has('test:e2e')) ? [] : [stepNamed('package')]),
];
const stages = makes.length > 0 ? [makes, ...chosen] : chosen;

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

const fmt = (s) => (s >= 59.5 ? `${Math.floor(Math.round(s) / 60)} min ${String(Math.round(s) % 60).padStart(2, '0')} s` : `${s.toFixed(1)} s`);
const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
const outcome = (code, signal, error) => (code === 0 ? 'ok' : error ? `failed: ${error.message}` : `failed (exit ${code ?? signal})`);

/**
 * Runs one step. Alone in its stage its output goes straight to ours; beside others it goes to a
 * file that is printed whole when the step ends, so no two steps' lines interleave.
 */
function runStep([name, [cmd, ...args], env], alone, logDir) {
  const t0 = process.hrtime.bigint();
  const log = alone ? undefined : path.join(logDir, `${name.replace(/:/g, '-')}.log`);
  const fd = log === undefined ? undefined : openSync(log, 'w');
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: fd === undefined ? 'inherit' : ['ignore', fd, fd], env: { ...process.env, ...env } });
    let error;
    child.on('error', (e) => (error = e));
    child.on('close', (code, signal) => {
      if (fd !== undefined) {
        closeSync(fd);
        process.stdout.write(`\n=== ${name}: its output (${fmt(seconds(t0))})\n${readFileSync(log, 'utf8')}`);
      }
      resolve({ name, seconds: seconds(t0), status: code === 0 ? 0 : code || 1, how: outcome(code, signal, error) });
    });
  });
}

const logDir = mkdtempSync(path.join(tmpdir(), 'test-inbox-npm-test-'));
const stageRows = [];
let failedStep;
const started = process.hrtime.bigint();
for (const stage of stages) {
  const names = stage.map(([name]) => name);
  process.stdout.write(`\n=== ${names.join(', ')}${names.length > 1 ? ` (at once; each one's output is printed when it ends, and is written meanwhile under ${logDir})` : ''}\n`);
  const t0 = process.hrtime.bigint();
  const cpu0 = machineCpuSeconds();
  const steps = await Promise.all(stage.map((step) => runStep(step, stage.length === 1, logDir)));
  const cpu1 = machineCpuSeconds();
  stageRows.push({ steps, seconds: seconds(t0), cpu: cpu0 === undefined || cpu1 === undefined ? undefined : { busy: cpu1.busy - cpu0.busy, all: cpu1.all - cpu0.all } });
  failedStep = steps.find((s) => s.status !== 0);
  if (failedStep !== undefined) break;
}
rmSync(logDir, { recursive: true, force: true });

const total = seconds(started);
const width = Math.max(...STEP_NAMES.map((n) => n.length));
const busyTotal = stageRows.every((r) => r.cpu !== undefined) ? stageRows.reduce((n, r) => n + r.cpu.busy, 0) : undefined;
const cores = availableParallelism();
process.stdout.write(`\nnpm test, where the time went (${fmt(total)} in all${busyTotal === undefined ? '' : `; the machine's ${cores} cores were busy for ${fmt(busyTotal)} of CPU`}):\n`);
process.stdout.write(`  ${'step'.padEnd(width)}  ${'wall'.padStart(12)}  ${'stage wall'.padStart(12)}  share  ${'CPU busy'.padStart(12)}  cores busy\n`);
for (const { steps, seconds: stageSeconds, cpu } of stageRows) {
  steps.forEach((s, i) => {
    const stageText = i > 0 ? ''.padStart(12 + 2 + 5 + 2 + 12 + 2 + 10) : `${fmt(stageSeconds).padStart(12)}  ${`${Math.round((100 * stageSeconds) / total)} %`.padStart(5)}  ${cpu === undefined ? ''.padStart(12 + 2 + 10) : `${fmt(cpu.busy).padStart(12)}  ${`${Math.round((100 * cpu.busy) / cpu.all)} %`.padStart(10)}`}`;
    process.stdout.write(`  ${(i === 0 ? s.name : `+ ${s.name}`).padEnd(width)}  ${fmt(s.seconds).padStart(12)}  ${stageText}  ${s.how}\n`);
  });
}
if (busyTotal !== undefined) process.stdout.write(`  that CPU time spread over ${cores} cores is ${fmt(busyTotal / cores)}: no order or overlap of these steps could finish sooner here\n`);
if (failedStep !== undefined) process.stdout.write(`${failedStep.name} failed; rerun from there: node scripts/test.mjs --from ${failedStep.name}\n`);
// exitCode, not exit(): whatever is still being written to a pipe gets out first.
process.exitCode = failedStep?.status ?? 0;
