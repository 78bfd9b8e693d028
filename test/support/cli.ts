// How the Node suites run `test-inbox`, and which of the environment is the test run's own.
//
// `npm test` builds once and sets TEST_INBOX_CLI_BUNDLE to dist/cli.js: every child server and
// command then starts from the bundle users get (a third of the CPU of a start through tsx, and
// the only way under Windows' Node, where tsx's esbuild binary is Linux's). `npx mocha` alone
// runs the TypeScript source through tsx.
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
/** The CLI's source entry. */
export const CLI_SOURCE = path.join(REPO, 'src', 'cli', 'cli.ts');

/**
 * The test run's own variables: which CLI to start, which store the suites use. They share the
 * product's TEST_INBOX_ prefix but configure no server or client, so a suite that clears the
 * product's variables keeps them (one suite clearing them for the rest of its worker once sent
 * every later child server back to tsx).
 */
export const HARNESS_ENV: readonly string[] = ['TEST_INBOX_CLI_BUNDLE', 'TEST_INBOX_TEST_STORE'];

/** Whether `name` is one of the product's settings (TEST_INBOX_*) rather than the run's own. */
export function isProductEnv(name: string): boolean {
  return name.startsWith('TEST_INBOX_') && !HARNESS_ENV.includes(name);
}

/**
 * Removes the product's TEST_INBOX_* settings from this process's environment (the run's own
 * stay), so a suite sees none that the shell or another suite left; returns what puts them back.
 */
export function clearProductEnv(): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const k of Object.keys(process.env)) {
    if (!isProductEnv(k)) continue;
    saved[k] = process.env[k];
    delete process.env[k];
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
  };
}

/**
 * The environment of a child command or server: this process's, without the product's
 * TEST_INBOX_* settings (a shell's or another suite's), then `extra`. Every value is a string
 * (what StdioClientTransport takes as well as child_process).
 */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isProductEnv(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Node's arguments that run the CLI: the bundle when the run built one, else the source through tsx. */
export function cliArgv(): string[] {
  const { cliPath, execArgv } = cliEntry();
  return [...execArgv, cliPath];
}

/** The CLI's entry file and the Node flags it needs, as the extension's local server takes them (cliPath, execArgv). */
export function cliEntry(): { cliPath: string; execArgv: string[] } {
  const bundle = process.env.TEST_INBOX_CLI_BUNDLE;
  return bundle ? { cliPath: bundle, execArgv: [] } : { cliPath: CLI_SOURCE, execArgv: ['--require', 'tsx/cjs'] };
}
