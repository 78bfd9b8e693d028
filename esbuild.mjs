// Bundles the separate entry points: the extension host side, the local server CLI
// (forked by the extension and run standalone as `test-inbox serve`), and the
// browser-side webview script.
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** @type {import('esbuild').BuildOptions[]} */
const builds = [
  {
    entryPoints: { extension: 'src/extension/extension.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    entryPoints: { cli: 'src/server/cli.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    entryPoints: { webview: 'src/webview/main.ts' },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
].filter((b) => Object.values(b.entryPoints).every((p) => existsSync(p)));

const common = {
  bundle: true,
  outdir: 'dist',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
};

if (watch) {
  for (const b of builds) await (await esbuild.context({ ...common, ...b })).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build({ ...common, ...b })));
}
