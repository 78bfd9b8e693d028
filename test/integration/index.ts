// Test entry loaded by the extension host (extensionTestsPath → out/test/integration/index.js).
// Runs every compiled *.test.js next to it with mocha, prints mocha's spec output on the
// host's console (the runner relays it to the terminal), writes `{passes, failures, …}` to
// the file named by TEST_INBOX_IT_RESULTS as a backup of the result, and rejects when any
// test failed so that the host reports a failure.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';
import { ENV, MOCHA_TEST_TIMEOUT_MS, SUITE_LINE_PREFIX, SUITES_BEGIN_MARKER, SUITES_END_MARKER } from '../../scripts/integration/config';

export interface IntegrationResults {
  passes: number;
  failures: number;
  pending: number;
  /** Tests mocha knew about when the run ended. */
  tests: number;
  /** Suite files that were loaded, relative to the compiled folder. */
  files: string[];
  /** Set when the run could not start (e.g. a suite threw while loading). */
  error?: string;
}

export function run(): Promise<void> {
  // Stack traces of failures point into the .ts sources (the bundles carry inline source maps).
  process.setSourceMapsEnabled(true);
  const grep = process.env[ENV.grep];
  // Mocha's output, line by line, marked as the suites' own (SUITE_LINE_PREFIX): the runner relays it and nothing else.
  const consoleLog = Mocha.reporters.Base.consoleLog;
  const suiteLog = (...args: unknown[]): void => {
    for (const line of format(...args).split('\n')) consoleLog(SUITE_LINE_PREFIX + line);
  };
  Mocha.reporters.Base.consoleLog = suiteLog;
  const mocha = new Mocha({ ui: 'bdd', timeout: MOCHA_TEST_TIMEOUT_MS, color: false, reporter: 'spec', ...(grep ? { grep } : {}) });
  const files = suiteFiles(__dirname, process.env[ENV.files]);
  for (const file of files) mocha.addFile(file);
  // Each suite file is a bundle of its own, with its own copy of every helper module: a helper
  // that adds a process listener "once" adds one per suite. Cleanups at exit go through
  // test/support/atExit.ts (one listener for the whole host); this hook fails the run otherwise.
  const exitListenersAtStart = process.listenerCount('exit');
  mocha.suite.afterAll('the suites added at most one process exit listener (test/support/atExit.ts)', () => {
    const added = process.listenerCount('exit') - exitListenersAtStart;
    if (added > 1) throw new Error(`The suites added ${added} process 'exit' listeners; register cleanups with atExit() (test/support/atExit.ts), which shares one.`);
  });
  const relFiles = files.map((f) => path.relative(__dirname, f));

  return new Promise((resolve, reject) => {
    console.log(SUITES_BEGIN_MARKER);
    try {
      const runner = mocha.run((failures) => {
        console.log(SUITES_END_MARKER);
        const stats = runner.stats;
        const results: IntegrationResults = {
          passes: stats?.passes ?? 0,
          failures: stats?.failures ?? failures,
          pending: stats?.pending ?? 0,
          tests: stats?.tests ?? 0,
          files: relFiles,
        };
        writeResults(results);
        if (failures > 0) reject(new Error(`${failures} integration test(s) failed.`));
        else resolve();
      });
    } catch (err) {
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      suiteLog(`Integration suites could not run: ${error}`);
      console.log(SUITES_END_MARKER);
      writeResults({ passes: 0, failures: 1, pending: 0, tests: 0, files: relFiles, error });
      reject(err);
    }
  });
}

/** Compiled suites under `root`, sorted for a stable order; `filter` keeps paths containing one of its comma-separated parts. */
function suiteFiles(root: string, filter: string | undefined): string[] {
  const parts = (filter ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return fs
    .readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((rel) => rel.endsWith('.test.js'))
    .filter((rel) => parts.length === 0 || parts.some((part) => rel.includes(part)))
    .sort()
    .map((rel) => path.join(root, rel));
}

function writeResults(results: IntegrationResults): void {
  const file = process.env[ENV.resultsFile];
  if (!file) return;
  try {
    fs.writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  } catch (err) {
    console.error(`Could not write the results file ${file}: ${(err as Error).message}`);
  }
}
