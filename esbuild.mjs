// Bundles the separate entry points: the extension host side, the local server CLI
// (forked by the extension and run standalone as `test-inbox serve`), and the
// browser-side webview script.
//
//   node esbuild.mjs                 development bundles in dist/, with linked source maps
//   node esbuild.mjs --watch         the same, rebuilt on change
//   node esbuild.mjs --production    minified bundles; maps written beside them but not
//                                    linked (the packaging script moves them out of the VSIX)
//
// scripts/package.mjs imports buildBundles() for the VSIX and the server package.
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(fileURLToPath(import.meta.url));
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

/** @type {Record<string, import('esbuild').BuildOptions>} */
const ENTRIES = {
  extension: {
    entryPoints: { extension: 'src/extension/extension.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  cli: {
    entryPoints: { cli: 'src/cli/cli.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    // node-postgres (the team server's store) loads its optional native binding only when asked
    // for `pg.native`, which the server never does.
    external: ['pg-native'],
    plugins: [mcpApart()],
  },
  // The MCP protocol plumbing (src/mcp/sdk.ts, the MCP SDK), loaded by cli.js on the first
  // `/mcp` request or `test-inbox mcp` only (src/mcp/load.ts).
  mcp: {
    entryPoints: { mcp: 'src/mcp/sdk.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [noAjv()],
  },
  // The test library of the server's npm package (`require('test-inbox')`); not in the VSIX.
  lib: {
    entryPoints: { lib: 'src/testing/index.ts' },
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  webview: {
    entryPoints: { webview: 'src/webview-ui/main.ts' },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  // The web UI's page script and style (src/server/http/ui), served from beside cli.js.
  webui: {
    entryPoints: { webui: 'src/webview-ui/page.ts' },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  },
  webuiCss: {
    entryPoints: { webui: 'src/webview-ui/page.css' },
    loader: { '.ttf': 'file' },
  },
};

/** cli.js loads src/mcp/sdk.ts as the file beside it, dist/mcp.js, instead of bundling it. */
function mcpApart() {
  return {
    name: 'mcp-apart',
    setup(build) {
      build.onResolve({ filter: /^\.\/sdk$/ }, (args) => (args.importer.endsWith(join('src', 'mcp', 'load.ts')) ? { path: './mcp.js', external: true } : undefined));
    },
  };
}

/**
 * The MCP SDK's Server imports Ajv for one thing, checking an elicitation's answer against a
 * schema, which this server never asks for (it passes a validator of its own, src/mcp/sdk.ts):
 * that module is replaced by one that says so, which keeps ~230 KB of Ajv out of the bundle.
 */
function noAjv() {
  return {
    name: 'no-ajv',
    setup(build) {
      build.onResolve({ filter: /validation\/ajv-provider\.js$/ }, (args) => ({ path: args.path, namespace: 'no-ajv' }));
      build.onLoad({ filter: /.*/, namespace: 'no-ajv' }, () => ({
        contents: "export class AjvJsonSchemaValidator { constructor() { throw new Error('JSON Schema validation (Ajv) is not bundled: pass jsonSchemaValidator'); } }",
        loader: 'js',
      }));
    },
  };
}

/**
 * src/core/html.ts takes only htmlparser2's Parser. The package's index also re-exports its DOM
 * helpers (domhandler, domutils, dom-serializer and a second `entities`), which its namespace
 * re-exports keep in a bundle: every bundle gets the Parser module alone (the same class), which
 * keeps ~70 KB out of each bundle that reads HTML (the web UI page, the server, the extension).
 */
function htmlParserOnly() {
  return {
    name: 'htmlparser2-parser-only',
    setup(build) {
      build.onResolve({ filter: /^htmlparser2$/ }, () => ({ path: join(ROOT, 'node_modules', 'htmlparser2', 'dist', 'esm', 'Parser.js') }));
    },
  };
}

/**
 * Builds the named bundles (all by default) into `outdir`.
 * @param {{ production?: boolean, outdir?: string, only?: string[], watch?: boolean }} options
 */
export async function buildBundles({ production = false, outdir = 'dist', only, watch = false } = {}) {
  const builds = Object.entries(ENTRIES)
    .filter(([name]) => !only || only.includes(name))
    .map(([, b]) => b)
    .filter((b) => Object.values(b.entryPoints).every((p) => existsSync(join(ROOT, p))));
  const common = {
    absWorkingDir: ROOT,
    bundle: true,
    outdir,
    // Production: maps as separate files without a sourceMappingURL comment, so shipping the
    // bundle without its map leaves no dangling reference.
    sourcemap: production ? 'external' : 'linked',
    minify: production,
    logLevel: 'warning',
    legalComments: 'none',
    define: { __TEST_INBOX_VERSION__: JSON.stringify(VERSION) },
  };
  if (builds.includes(ENTRIES.cli)) writeMimeWorkerEntry(outdir);
  if (watch) {
    for (const b of builds) await (await esbuild.context({ ...common, ...b, plugins: [...(b.plugins ?? []), htmlParserOnly()] })).watch();
    return;
  }
  await Promise.all(builds.map((b) => esbuild.build({ ...common, ...b, plugins: [...(b.plugins ?? []), htmlParserOnly()] })));
}

/**
 * The server's MIME worker threads start `mimeWorker.js` beside the bundle that holds the
 * server (src/server/workers/pool.ts). Beside cli.js it is one line that loads cli.js, whose
 * top level serves MIME jobs in such a thread: the parser ships once, not twice.
 */
function writeMimeWorkerEntry(outdir) {
  const dir = resolve(ROOT, outdir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'mimeWorker.js'), "'use strict';\n// A MIME worker thread of the server in cli.js (src/server/workers/pool.ts).\nrequire('./cli.js');\n");
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await buildBundles({ production: process.argv.includes('--production'), watch: process.argv.includes('--watch') });
}
