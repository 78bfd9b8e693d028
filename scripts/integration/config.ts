// Constants, paths and environment variable names shared by the integration runner,
// the code-server workbench helper and the test entry (test/integration/index.ts).
import * as os from 'node:os';
import * as path from 'node:path';

/** code-server release whose VS Code (1.139) extension host runs the suites offline. */
export const CODE_SERVER_VERSION = '4.139.1';
/** code-server 4.139 requires Node 24; the npm package `node` ships that binary. Pinned for reproducible caches. */
export const NODE24_VERSION = '24.21.0';

/** Repository root (this file is scripts/integration/config.ts). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** Folder holding the extension's package.json (extensionDevelopmentPath). */
export const EXTENSION_PATH = REPO_ROOT;
/** The bundle the manifest's "main" points at; must exist before any run. */
export const EXTENSION_MAIN = path.join(REPO_ROOT, 'dist', 'extension.js');
/** Sources of the suites and their test entry. */
export const INTEGRATION_SRC = path.join(REPO_ROOT, 'test', 'integration');
/**
 * Compiled suites (gitignored): the extension host loads plain CommonJS from here. Each run
 * builds into its own `run-<pid>-<time>/` below it, so that runs started at the same time in
 * one checkout never replace each other's files; mocha still resolves from the clone.
 */
export const INTEGRATION_OUT = path.join(REPO_ROOT, 'out', 'test', 'integration');
/** Logs of failed runs are kept here (gitignored) for inspection. */
export const OUTPUT_ROOT = path.join(REPO_ROOT, '.test-output', 'integration');

/** Debian Chromium; CHROMIUM_PATH overrides it. */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';
/** Debian packages the offline runner needs: Chromium plus code-server's native build dependencies. */
export const DEBIAN_PACKAGES = ['chromium', 'libkrb5-dev', 'libxkbfile-dev', 'libsecret-1-dev', 'pkg-config'];

/** Whole-run limit: a hung workbench or extension host fails the run instead of blocking CI. */
export const DEFAULT_RUN_TIMEOUT_MS = 5 * 60_000;
/** code-server usually listens within 2 s; generous for a loaded 2-core CI machine. */
export const SERVER_READY_TIMEOUT_MS = 60_000;
/** A first install compiles native modules (argon2, kerberos, …); it took ~3 min here. */
export const INSTALL_TIMEOUT_MS = 20 * 60_000;
/** Per-test timeout inside the extension host: UI round trips plus a local server start. */
export const MOCHA_TEST_TIMEOUT_MS = 20_000;

/** Printed by the test entry around mocha's output so the runner can relay just that part. */
export const SUITES_BEGIN_MARKER = '[test-inbox-it] suites begin';
export const SUITES_END_MARKER = '[test-inbox-it] suites end';
/**
 * Starts every line of mocha's own output (its reporter). Between the markers the runner relays
 * only these: what the workbench and the extension host log meanwhile (VS Code logs each error a
 * language-model tool throws, with its stack, when a test provokes one on purpose) goes to the
 * workbench log, kept when the run fails, and never reads as a failure on the terminal.
 */
export const SUITE_LINE_PREFIX = '[test-inbox-it] | ';

/** Environment variables read by the runner (R) and by the test entry in the host (H). */
export const ENV = {
  /** R: `code-server`, `electron` or `auto` (default). */
  runner: 'TEST_INBOX_IT_RUNNER',
  /** R: path of a desktop VS Code executable; selects @vscode/test-electron. */
  vscodeExecutable: 'VSCODE_EXECUTABLE',
  /** R: path of the Chromium binary for the code-server runner. */
  chromium: 'CHROMIUM_PATH',
  /** R: whole-run timeout in milliseconds. */
  timeout: 'TEST_INBOX_IT_TIMEOUT_MS',
  /** R: cache root instead of ${XDG_CACHE_HOME:-~/.cache}/test-inbox. */
  cacheDir: 'TEST_INBOX_IT_CACHE',
  /** R+H: mocha grep: only tests whose full title contains this text (taken literally). */
  grep: 'TEST_INBOX_IT_GREP',
  /** R+H: comma-separated substrings; only suite files whose path contains one are loaded. */
  files: 'TEST_INBOX_IT_FILES',
  /** R: compile the suites from this folder instead of test/integration (the runner's self-test uses it). */
  suitesDir: 'TEST_INBOX_IT_SUITES_DIR',
  /** R: keep logs of failed runs here instead of .test-output/integration. */
  outputDir: 'TEST_INBOX_IT_OUTPUT_DIR',
  /** H: where the test entry writes its `{passes, failures, pending, total}` backup. */
  resultsFile: 'TEST_INBOX_IT_RESULTS',
  /** H: which runner launched the host (`code-server` or `electron`), for the suites to log and check. */
  hostKind: 'TEST_INBOX_IT_HOST',
} as const;

/** The cache root: outside the clone, shared by every clone on the machine. */
export function cacheRoot(): string {
  const override = process.env[ENV.cacheDir];
  if (override) return path.resolve(override);
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(xdg, 'test-inbox');
}

/** The version-keyed code-server install folder. */
export function codeServerCacheDir(): string {
  return path.join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`);
}

/** Folder whose *.test.ts files are the suites of this run. */
export function suitesDir(): string {
  const override = process.env[ENV.suitesDir];
  return override ? path.resolve(override) : INTEGRATION_SRC;
}

/** Where logs of failed runs are kept. */
export function outputRoot(): string {
  const override = process.env[ENV.outputDir];
  return override ? path.resolve(override) : OUTPUT_ROOT;
}
