// Compiles test/integration/**/*.ts into CommonJS the extension host can load
// (out/test/integration/run-<pid>-<time>/, gitignored): one bundle per suite plus the test
// entry, with `vscode` (provided by the host) and mocha (resolved from the clone's
// node_modules) left external. Every run gets a fresh folder, removed when it ends.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { processAlive } from '../../src/server/store/maildir/lock';
import { INTEGRATION_OUT, INTEGRATION_SRC, REPO_ROOT, suitesDir } from './config';
import { IntegrationError } from './errors';

export interface IntegrationBuild {
  /** This run's output folder. */
  outDir: string;
  /** The compiled test entry (extensionTestsPath). */
  entry: string;
  /** Suite sources that were compiled, relative to test/integration. */
  suites: string[];
  /** Removes outDir. */
  dispose(): void;
}

/** Builds the suites into a folder of their own. */
export async function buildIntegrationTests(): Promise<IntegrationBuild> {
  const suitesRoot = suitesDir();
  const suites = fs
    .readdirSync(suitesRoot, { recursive: true, encoding: 'utf8' })
    .filter((rel) => rel.endsWith('.test.ts'))
    .sort();
  const source = path.join(INTEGRATION_SRC, 'index.ts');
  if (!fs.existsSync(source)) throw new IntegrationError('NOT_BUILT', `The test entry ${source} is missing.`);
  pruneAbandonedBuilds();
  const outDir = path.join(INTEGRATION_OUT, `run-${process.pid}-${Date.now()}`);
  const entry = path.join(outDir, 'index.js');
  const dispose = () => fs.rmSync(outDir, { recursive: true, force: true });
  try {
    await esbuild.build({
      // Output names mirror the suites' paths: foo/bar.test.ts → <outDir>/foo/bar.test.js.
      entryPoints: [
        { in: source, out: 'index' },
        ...suites.map((rel) => ({ in: path.join(suitesRoot, rel), out: rel.replace(/\.ts$/, '') })),
        // Suites that start the server in the host run its MIME worker threads from here (workers/pool.ts).
        { in: path.join(REPO_ROOT, 'src', 'server', 'workers', 'workerMain.ts'), out: 'mimeWorker' },
      ],
      outdir: outDir,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      // pg-native: node-postgres's optional binding, never loaded (the team-server suite uses plain pg).
      external: ['vscode', 'mocha', 'pg-native'],
      sourcemap: 'inline',
      logLevel: 'silent',
    });
  } catch (err) {
    dispose();
    const failure = err as esbuild.BuildFailure;
    const detail = failure.errors
      ? (await esbuild.formatMessages(failure.errors, { kind: 'error', color: false })).join('\n')
      : String(err);
    throw new IntegrationError('NOT_BUILT', `Compiling the integration suites failed:\n${detail}`, { cause: err });
  }
  if (!fs.existsSync(entry)) {
    dispose();
    throw new IntegrationError('NOT_BUILT', `esbuild did not produce ${entry}.`);
  }
  return { outDir, entry, suites, dispose };
}

/** Removes build folders left by runs that were killed (their process is gone), and files of the older flat layout. */
function pruneAbandonedBuilds(): void {
  let names: string[];
  try {
    names = fs.readdirSync(INTEGRATION_OUT);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^run-(\d+)-\d+$/.exec(name)?.[1];
    if (pid !== undefined && processAlive(Number(pid))) continue;
    fs.rmSync(path.join(INTEGRATION_OUT, name), { recursive: true, force: true });
  }
}
