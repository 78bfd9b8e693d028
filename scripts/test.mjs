// `npm test`: every check, timed; the split is printed at the end, and also when a step fails
// (then the exit code is that step's). The steps are the package.json scripts of the same names,
// so each can be run alone. A step starts as soon as what it needs has passed (the build; the
// package for the steps that test it) and fewer than PARALLEL steps run, in the order of STEPS:
// the longest first, so that the short ones fill the end. Each step's output goes to a file,
// printed whole when the step ends, so no two steps' lines interleave. Beside the wall times it
// prints the CPU time the machine was busy (Linux, /proc/stat) and the share of its cores that
// kept busy, so the split also says how far more overlap could go on this machine.
//   node scripts/test.mjs [--from STEP]     (--from: that step and the steps after it in STEPS;
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
 * (`TEST_INBOX_CLI_BUNDLE`, as the Windows suite does): what ships, and a third of the CPU of a
 * start through tsx (test/support/cli.ts). `npx mocha` alone runs the source through tsx.
 */
const BUNDLED_CLI = { TEST_INBOX_CLI_BUNDLE: path.join(ROOT, 'dist', 'cli.js') };

/**
 * Steps that run at once. Each keeps about one core busy or more (mocha's 4 workers, a browser,
 * Wine, PostgreSQL), so three keep 2 cores busy without starving a browser suite's waits.
 */
const PARALLEL = 3;

/**
 * The steps, in the order they start; each { name, argv, env, needs }: npm scripts by name; the
 * mocha of test:node alone, so its PostgreSQL half is its own row. The build is made once:
 * build writes dist/ and package the VSIX, so the extension-host suites run their `:built`
 * scripts (test:integration and test:e2e alone rebuild first), and test:windows reads dist/
 * beside test:node (test:windows:built). The order is the CPU each took in a timed run, most
 * first; package early, as e2e waits for it.
 */
const STEPS = [
  { name: 'build', argv: ['npm', 'run', '-s', 'build'], needs: [] },
  { name: 'package', argv: ['npm', 'run', '-s', 'package'], needs: ['build'] },
  { name: 'test:node', argv: [process.execPath, 'node_modules/mocha/bin/mocha.js'], env: BUNDLED_CLI, needs: ['build'] },
  { name: 'test:e2e', argv: ['npm', 'run', '-s', 'test:e2e:built'], needs: ['package'] },
  { name: 'test:integration', argv: ['npm', 'run', '-s', 'test:integration:built'], needs: ['build'] },
  { name: 'test:node:postgres', argv: ['npm', 'run', '-s', 'test:node:postgres'], env: BUNDLED_CLI, needs: ['build'] },
  { name: 'test:windows', argv: ['npm', 'run', '-s', 'test:windows:built'], needs: ['build'] },
  // They need no build, but would take the first places from the longer suites.
  { name: 'lint', argv: ['npm', 'run', '-s', 'lint'], needs: ['build'] },
  { name: 'typecheck', argv: ['npm', 'run', '-s', 'typecheck'], needs: ['build'] },
  { name: 'test:package', argv: ['npm', 'run', '-s', 'test:package'], needs: ['package'] },
];
const STEP_NAMES = STEPS.map((s) => s.name);

const fromAt = process.argv.indexOf('--from');
const from = fromAt >= 0 ? process.argv[fromAt + 1] : undefined;
if (from !== undefined && !STEP_NAMES.includes(from)) {
  process.stderr.write(`no step ${JSON.stringify(from)}; the steps: ${STEP_NAMES.join(', ')}\n`);
  process.exit(64);
}
/**
 * The steps to run: --from's step and the ones after it, and what they need made anew: the steps
 * after build read what it makes (the Node suites' child servers are dist/cli.js), and
 * test:package and test:e2e read what package makes.
 */
const chosen = STEPS.slice(from === undefined ? 0 : STEP_NAMES.indexOf(from));
const makes = (steps) => {
  const names = new Set(steps.map((s) => s.name));
  for (const s of steps) for (const n of s.needs) names.add(n);
  return STEPS.filter((s) => names.has(s.name));
};
let steps = chosen;
for (let more = makes(steps); more.length !== steps.length; more = makes(steps)) steps = more;
steps = steps.map((s) => ({ ...s, needs: s.needs.filter((n) => steps.some((t) => t.name === n)) }));

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

const logDir = mkdtempSync(path.join(tmpdir(), 'test-inbox-npm-test-'));
const started = process.hrtime.bigint();
const cpu0 = machineCpuSeconds();
process.stdout.write(`npm test: ${steps.map((s) => s.name).join(', ')}; up to ${PARALLEL} at once, each one's output printed when it ends and written meanwhile under ${logDir}\n`);

/** Runs one step with its output in a file, printed whole when it ends. */
function runStep({ name, argv: [cmd, ...args], env }) {
  const at = seconds(started);
  const t0 = process.hrtime.bigint();
  const log = path.join(logDir, `${name.replace(/:/g, '-')}.log`);
  const fd = openSync(log, 'w');
  process.stdout.write(`\n=== ${name}: started at ${fmt(at)}\n`);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', fd, fd], env: { ...process.env, ...env } });
    let error;
    child.on('error', (e) => (error = e));
    child.on('close', (code, signal) => {
      closeSync(fd);
      process.stdout.write(`\n=== ${name}: its output (${fmt(seconds(t0))})\n${readFileSync(log, 'utf8')}`);
      resolve({ name, at, seconds: seconds(t0), status: code === 0 ? 0 : code || 1, how: outcome(code, signal, error) });
    });
  });
}

/** Starts each step once what it needs has passed and fewer than PARALLEL run; after a failure starts none. */
const done = [];
await new Promise((resolveAll) => {
  const running = new Map();
  const waiting = [...steps];
  const failed = () => done.some((r) => r.status !== 0);
  const pump = () => {
    while (!failed() && running.size < PARALLEL) {
      const next = waiting.find((s) => s.needs.every((n) => done.some((r) => r.name === n && r.status === 0)));
      if (next === undefined) break;
      waiting.splice(waiting.indexOf(next), 1);
      running.set(
        next.name,
        runStep(next).then((r) => {
          running.delete(next.name);
          done.push(r);
          pump();
        }),
      );
    }
    if (running.size === 0) resolveAll();
  };
  pump();
});
rmSync(logDir, { recursive: true, force: true });

const total = seconds(started);
const cpu1 = machineCpuSeconds();
const cpu = cpu0 === undefined || cpu1 === undefined ? undefined : { busy: cpu1.busy - cpu0.busy, all: cpu1.all - cpu0.all };
const cores = availableParallelism();
const width = Math.max(...STEP_NAMES.map((n) => n.length));
process.stdout.write(`\nnpm test, where the time went (${fmt(total)} in all, up to ${PARALLEL} steps at once):\n`);
process.stdout.write(`  ${'step'.padEnd(width)}  ${'started at'.padStart(12)}  ${'wall'.padStart(12)}\n`);
for (const s of [...done].sort((a, b) => a.at - b.at)) process.stdout.write(`  ${s.name.padEnd(width)}  ${fmt(s.at).padStart(12)}  ${fmt(s.seconds).padStart(12)}  ${s.how}\n`);
const skipped = steps.filter((s) => !done.some((r) => r.name === s.name));
if (skipped.length > 0) process.stdout.write(`  not started after the failure: ${skipped.map((s) => s.name).join(', ')}\n`);
if (cpu !== undefined) {
  process.stdout.write(`  the machine's ${cores} cores were busy for ${fmt(cpu.busy)} of CPU, ${Math.round((100 * cpu.busy) / cpu.all)} % of the time they had;\n`);
  process.stdout.write(`  that CPU time spread over ${cores} cores is ${fmt(cpu.busy / cores)}: no order or overlap of these steps could finish sooner here\n`);
}
const failedStep = done.find((s) => s.status !== 0);
if (failedStep !== undefined) process.stdout.write(`${failedStep.name} failed; rerun from there: node scripts/test.mjs --from ${failedStep.name}\n`);
// exitCode, not exit(): whatever is still being written to a pipe gets out first.
process.exitCode = failedStep?.status ?? 0;
