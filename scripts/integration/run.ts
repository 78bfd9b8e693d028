// Integration test runner: runs test/integration/**/*.test.ts inside a real VS Code
// extension host and exits non-zero on any failure, on timeout, or when no test ran.
//
//   npm run test:integration                          every suite
//   npm run test:integration -- activation            only suite files whose path contains "activation"
//                                                     (several: comma-separated; or TEST_INBOX_IT_FILES)
//   npm run test:integration -- --grep "activates"    only tests whose full title contains the text (mocha
//                                                     grep, taken literally; or TEST_INBOX_IT_GREP)
//
// Host: with VSCODE_EXECUTABLE set (or when @vscode/test-electron can download VS Code and
// a display is available) desktop VS Code via @vscode/test-electron; otherwise code-server
// (installed on first use into ${XDG_CACHE_HOME:-~/.cache}/test-inbox/code-server-<version>/)
// in headless Debian Chromium via playwright-core. TEST_INBOX_IT_RUNNER=code-server|electron
// forces one. The first line printed says which runner was used. Whole-run timeout:
// TEST_INBOX_IT_TIMEOUT_MS (default 5 min, after any first-time install). Logs of failed
// code-server runs are kept under .test-output/integration/<time>/.
//
// Browser-level checks and screenshots: see startWorkbench in ./workbench.ts (re-exported here).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IntegrationResults } from '../../test/integration/index';
import { buildIntegrationTests, type IntegrationBuild } from './build';
import {
  CODE_SERVER_VERSION,
  DEFAULT_RUN_TIMEOUT_MS,
  ENV,
  EXTENSION_MAIN,
  REPO_ROOT,
  SUITE_LINE_PREFIX,
  SUITES_BEGIN_MARKER,
  SUITES_END_MARKER,
  outputRoot,
  suitesDir,
} from './config';
import { canDownloadVSCode, hasDisplay, runInElectron } from './electron';
import { IntegrationError } from './errors';
import { ensureCodeServer } from './install';
import { chromiumPath, startWorkbench, type Workbench } from './workbench';

export { startWorkbench, type Workbench, type WorkbenchOptions } from './workbench';

/** Start of the run, for the elapsed times in progress lines. */
const T0 = Date.now();
type RunnerKind = 'code-server' | 'electron';

interface CliOptions {
  grep?: string;
  files?: string;
}

function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = { grep: process.env[ENV.grep] || undefined, files: process.env[ENV.files] || undefined };
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--grep' || arg === '-g') {
      const value = argv[++i];
      if (value === undefined) throw new IntegrationError('NO_TESTS', '--grep needs a pattern.');
      options.grep = value;
    } else if (arg.startsWith('--grep=')) {
      options.grep = arg.slice('--grep='.length);
    } else if (arg.startsWith('-')) {
      throw new IntegrationError('NO_TESTS', `Unknown option ${arg}. Use --grep <pattern> and/or suite file names.`);
    } else {
      files.push(arg);
    }
  }
  if (files.length > 0) options.files = files.join(',');
  return options;
}

/** A path relative to the clone when inside it, absolute otherwise. */
function shown(p: string): string {
  const rel = path.relative(REPO_ROOT, p);
  return rel.startsWith('..') || path.isAbsolute(rel) ? p : rel;
}

function say(message: string): void {
  process.stdout.write(`[integration +${((Date.now() - T0) / 1000).toFixed(1)}s] ${message}\n`);
}

function timeoutMs(): number {
  const raw = process.env[ENV.timeout];
  if (!raw) return DEFAULT_RUN_TIMEOUT_MS;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new IntegrationError('NO_RUNNER', `${ENV.timeout} must be a positive number of milliseconds, got "${raw}".`);
  }
  return value;
}

/** Picks the host: forced by TEST_INBOX_IT_RUNNER, else desktop VS Code when possible, else code-server. */
async function chooseRunner(): Promise<{ kind: RunnerKind; why: string }> {
  const forced = process.env[ENV.runner];
  if (forced === 'code-server' || forced === 'electron') return { kind: forced, why: `${ENV.runner}=${forced}` };
  if (forced && forced !== 'auto') {
    throw new IntegrationError('NO_RUNNER', `${ENV.runner} must be code-server, electron or auto, got "${forced}".`);
  }
  const exe = process.env[ENV.vscodeExecutable];
  if (exe) {
    if (!fs.existsSync(exe)) throw new IntegrationError('NO_RUNNER', `${ENV.vscodeExecutable}=${exe} does not exist.`);
    return { kind: 'electron', why: `${ENV.vscodeExecutable}=${exe}` };
  }
  if (hasDisplay() && (await canDownloadVSCode())) return { kind: 'electron', why: 'VS Code can be downloaded and a display is available' };
  const reason = hasDisplay() ? 'VS Code cannot be downloaded here' : 'no display for desktop VS Code';
  return { kind: 'code-server', why: `${reason} and ${ENV.vscodeExecutable} is not set` };
}

function readResults(file: string): IntegrationResults | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as IntegrationResults;
  } catch {
    return undefined;
  }
}

/** Turns the host's exit code and the backup results into a verdict; throws on anything but a clean pass. */
function judge(exitCode: number, results: IntegrationResults | undefined): IntegrationResults {
  if (!results) {
    throw new IntegrationError(
      'HOST_FAILED',
      `The extension host ended with code ${exitCode} but the test entry wrote no results; it probably failed to load (see the log above).`,
    );
  }
  if (results.error) throw new IntegrationError('HOST_FAILED', `The test entry could not run the suites:\n${results.error}`);
  if (results.failures > 0) throw new IntegrationError('TESTS_FAILED', `${results.failures} of ${results.passes + results.failures} integration tests failed.`);
  if (exitCode !== 0) throw new IntegrationError('HOST_FAILED', `All tests passed but the extension host reported failure (code ${exitCode}).`);
  if (results.passes === 0) {
    throw new IntegrationError('NO_TESTS', `No integration test ran (files: ${results.files.join(', ') || 'none'}). Check the file filter and --grep pattern.`);
  }
  return results;
}

async function runCodeServer(entry: string, hostEnv: Record<string, string>, limitMs: number): Promise<number> {
  chromiumPath();
  const install = await ensureCodeServer(say);
  say(`code-server ${CODE_SERVER_VERSION} (${install.dir}) in headless Chromium (${chromiumPath()})`);

  let reportExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (reportExit = resolve));
  const relay = new SuiteOutputRelay();
  const keep = path.join(outputRoot(), new Date().toISOString().replace(/[:.]/g, '-'));
  const wb: Workbench = await startWorkbench({
    failureLogDir: keep,
    extensionTestsPath: entry,
    env: { ...hostEnv, [ENV.hostKind]: 'code-server' },
    onProgress: say,
    onLog: (line) => relay.line(line),
    onExit: reportExit,
  });
  let timer: NodeJS.Timeout | undefined;
  let failed = true;
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new IntegrationError('TIMEOUT', `The extension host did not finish the suites within ${limitMs / 1000} s (${ENV.timeout}).`)),
        limitMs,
      );
    });
    const code = await Promise.race([exited, timeout, wb.serverExited]);
    failed = code !== 0;
    return code;
  } finally {
    clearTimeout(timer);
    if (failed) {
      relay.flushIfSilent();
      fs.mkdirSync(keep, { recursive: true });
      await wb.page.screenshot({ path: path.join(keep, 'workbench.png') }).catch(() => {});
      await wb.stop({ keepLogsIn: keep });
      say(`Logs kept in ${shown(keep)}/ (workbench.log: the ${relay.logged} lines the workbench and the extension host logged while the suites ran)`);
    } else {
      await wb.stop();
      say(`${relay.logged} lines the workbench and the extension host logged while the suites ran (errors the tests provoke among them) are not shown; a failing run keeps them in workbench.log`);
    }
  }
}

/**
 * Relays the suites' console output (between the test entry's begin and end markers) to
 * the terminal; the workbench's own chatter (offline gallery lookups and the like) only
 * goes to workbench.log. When the suites never started, flushIfSilent() prints what the
 * workbench said, since the reason is in there.
 */
class SuiteOutputRelay {
  private state: 'before' | 'during' | 'after' = 'before';
  private readonly early: string[] = [];

  line(text: string): void {
    if (this.state === 'before') {
      if (text.includes(SUITES_BEGIN_MARKER)) this.state = 'during';
      else this.early.push(text);
    } else if (this.state === 'during') {
      if (text.includes(SUITES_END_MARKER)) this.state = 'after';
      else if (text.startsWith(SUITE_LINE_PREFIX)) process.stdout.write(`${text.slice(SUITE_LINE_PREFIX.length)}\n`);
      else this.logged++;
    }
  }

  /** Lines the workbench and the extension host logged while the suites ran, not relayed (workbench.log has them). */
  logged = 0;

  flushIfSilent(): void {
    if (this.state !== 'before') return;
    say('The suites never started; the workbench said:');
    for (const text of this.early.slice(-EARLY_LINES_SHOWN)) process.stdout.write(`${text}\n`);
  }
}

/** On a run whose suites never started, this many of the workbench's last log lines are shown. */
const EARLY_LINES_SHOWN = 200;

async function main(): Promise<void> {
  const cli = parseArgs(process.argv.slice(2));
  const limitMs = timeoutMs();
  if (!fs.existsSync(EXTENSION_MAIN)) {
    throw new IntegrationError('NOT_BUILT', `${path.relative(REPO_ROOT, EXTENSION_MAIN)} is missing; run \`npm run build\` first.`);
  }
  const build = await buildIntegrationTests();
  try {
    await runSuites(build, cli, limitMs);
  } finally {
    build.dispose();
  }
}

async function runSuites({ entry, suites, outDir }: IntegrationBuild, cli: CliOptions, limitMs: number): Promise<void> {
  if (suites.length === 0) throw new IntegrationError('NO_TESTS', `No *.test.ts suite exists under ${shown(suitesDir())}.`);

  const runner = await chooseRunner();
  say(`runner: ${runner.kind} (${runner.why})`);
  say(`suites: ${suites.join(', ')}${cli.files ? ` (filter: ${cli.files})` : ''}${cli.grep ? ` (grep: ${cli.grep})` : ''}`);

  // Beside the compiled suites: removed with them, or pruned by a later run if this one is killed.
  const resultsFile = path.join(outDir, 'results.json');
  const hostEnv: Record<string, string> = { [ENV.resultsFile]: resultsFile };
  if (cli.grep) hostEnv[ENV.grep] = cli.grep;
  if (cli.files) hostEnv[ENV.files] = cli.files;
  try {
    const exitCode =
      runner.kind === 'electron'
        ? await runInElectron({ entry, env: { ...hostEnv, [ENV.hostKind]: 'electron' }, timeoutMs: limitMs })
        : await runCodeServer(entry, hostEnv, limitMs);
    const results = judge(exitCode, readResults(resultsFile));
    say(
      `${results.passes} passing, ${results.pending} pending, 0 failing on ${runner.kind} ` +
        `in ${Math.round((Date.now() - T0) / 1000)} s`,
    );
  } catch (err) {
    const results = readResults(resultsFile);
    if (results && !IntegrationError.is(err, 'TESTS_FAILED')) {
      say(`results so far: ${results.passes} passing, ${results.failures} failing`);
    }
    throw err;
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      if (IntegrationError.is(err)) {
        process.stderr.write(`[integration] FAILED (${err.code}): ${err.message}\n`);
      } else {
        process.stderr.write(`[integration] FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      }
      process.exit(1);
    },
  );
}
