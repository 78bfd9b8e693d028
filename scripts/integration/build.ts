// Compiles test/integration/**/*.ts into CommonJS the extension host can load
// (out/test/integration/, gitignored): one bundle per suite plus the test entry, with
// `vscode` (provided by the host) and mocha (resolved from the clone's node_modules)
// left external. The output folder is emptied first so removed suites never linger.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INTEGRATION_ENTRY, INTEGRATION_OUT, INTEGRATION_SRC } from './config';
import { IntegrationError } from './errors';

/** Builds the suites; returns the suite sources that were compiled (relative to test/integration). */
export async function buildIntegrationTests(): Promise<string[]> {
  const suites = fs
    .readdirSync(INTEGRATION_SRC, { recursive: true, encoding: 'utf8' })
    .filter((rel) => rel.endsWith('.test.ts'))
    .sort();
  const entry = path.join(INTEGRATION_SRC, 'index.ts');
  if (!fs.existsSync(entry)) throw new IntegrationError('NOT_BUILT', `The test entry ${entry} is missing.`);
  fs.rmSync(INTEGRATION_OUT, { recursive: true, force: true });
  try {
    await esbuild.build({
      entryPoints: [entry, ...suites.map((rel) => path.join(INTEGRATION_SRC, rel))],
      outbase: INTEGRATION_SRC,
      outdir: INTEGRATION_OUT,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode', 'mocha'],
      sourcemap: 'inline',
      logLevel: 'silent',
    });
  } catch (err) {
    const failure = err as esbuild.BuildFailure;
    const detail = failure.errors
      ? (await esbuild.formatMessages(failure.errors, { kind: 'error', color: false })).join('\n')
      : String(err);
    throw new IntegrationError('NOT_BUILT', `Compiling the integration suites failed:\n${detail}`, { cause: err });
  }
  if (!fs.existsSync(INTEGRATION_ENTRY)) throw new IntegrationError('NOT_BUILT', `esbuild did not produce ${INTEGRATION_ENTRY}.`);
  return suites;
}
