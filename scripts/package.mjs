// `npm run package`: the two release artifacts, written at the repository root.
//
//   test-inbox-<version>.vsix   the extension, packaged by @vscode/vsce from a staging folder
//                               (out/package/vsix) that holds production bundles, the manifest,
//                               a README for the extension's details page, CHANGELOG, LICENSE
//                               and media; .vscodeignore decides what of it ships.
//   test-inbox-<version>.tgz    the server as an npm package (bin `test-inbox`, and the test
//                               library `require('test-inbox')` with its .d.ts), staged from
//                               packages/server/ with the bundled CLI and library; no runtime
//                               dependencies.
//   test-inbox-<version>-sourcemaps/   the production bundles' source maps, kept beside the
//                               artifacts for debugging and shipped in neither.
//
// Prints what was written with the sizes (the figures of `npm run size`). Fails when vsce
// fails or prints a warning. `--vsix-only` / `--server-only` write one artifact.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBundles } from '../esbuild.mjs';
import { packagedMarkdown } from './packagedMarkdown.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAGE = path.join(ROOT, 'out', 'package');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const { name, version } = manifest;

/** Paths of the artifacts for this version (tests import these). */
export const ARTIFACTS = {
  vsix: path.join(ROOT, `${name}-${version}.vsix`),
  tarball: path.join(ROOT, `${name}-${version}.tgz`),
  sourcemaps: path.join(ROOT, `${name}-${version}-sourcemaps`),
  vsixStage: path.join(STAGE, 'vsix'),
  serverStage: path.join(STAGE, 'server'),
};

function fail(message) {
  process.stderr.write(`npm run package: ${message}\n`);
  process.exit(1);
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** Runs a Node CLI script (vsce, npm's) synchronously; returns its combined output or fails. */
function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  if (r.error) fail(`${command} ${args.join(' ')} could not run: ${r.error.message}`);
  if (r.status !== 0) fail(`${path.basename(command)} ${args.join(' ')} exited with ${r.status}:\n${output}`);
  return output;
}

/** Moves `*.map` files out of `dir` into the source-map folder. */
function moveMaps(dir, target) {
  fs.mkdirSync(target, { recursive: true });
  for (const f of fs.readdirSync(dir)) {
    if (f.endsWith('.map')) fs.renameSync(path.join(dir, f), path.join(target, f));
  }
}

async function packageVsix() {
  const stage = ARTIFACTS.vsixStage;
  fs.mkdirSync(stage, { recursive: true });
  await buildBundles({ production: true, outdir: path.join(stage, 'dist'), only: ['extension', 'cli', 'mcp', 'webview', 'webui', 'webuiCss'] });
  // The maps stay in the stage so that .vscodeignore is what keeps them out (as it must for
  // anyone running vsce at the root); copies go beside the artifacts.
  fs.mkdirSync(ARTIFACTS.sourcemaps, { recursive: true });
  for (const f of fs.readdirSync(path.join(stage, 'dist'))) {
    if (f.endsWith('.map')) fs.copyFileSync(path.join(stage, 'dist', f), path.join(ARTIFACTS.sourcemaps, f));
  }
  // The manifest without what only the repository uses: no scripts (vsce would run a
  // vscode:prepublish in the stage), no dependency lists (everything is bundled), no bin.
  const { scripts: _s, devDependencies: _d, dependencies: _p, bin: _b, ...shipped } = manifest;
  fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(shipped, null, 2) + '\n');
  for (const doc of ['README.md', 'CHANGELOG.md']) {
    fs.writeFileSync(path.join(stage, doc), packagedMarkdown(fs.readFileSync(path.join(ROOT, doc), 'utf8')));
  }
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(stage, 'LICENSE'));
  fs.copyFileSync(path.join(ROOT, '.vscodeignore'), path.join(stage, '.vscodeignore'));
  fs.cpSync(path.join(ROOT, 'media'), path.join(stage, 'media'), { recursive: true });

  const vsce = path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  const out = run(process.execPath, [vsce, 'package', '--out', ARTIFACTS.vsix], stage);
  if (/warn/i.test(out)) fail(`vsce printed a warning:\n${out}`);
  const listed = run(process.execPath, [vsce, 'ls'], stage).trim().split('\n').filter(Boolean);
  return listed;
}

/**
 * The library's type declarations: tsc emits them for src/testing/index.ts, and the two files
 * of its public surface ship (lib.d.ts, types.d.ts). They must import nothing else: a
 * reference to another module of the project would dangle in the package.
 */
function emitLibraryTypes(stage) {
  const out = path.join(STAGE, 'dts');
  const config = path.join(STAGE, 'tsconfig.dts.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      extends: path.join(ROOT, 'tsconfig.json'),
      compilerOptions: { noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: out, rootDir: path.join(ROOT, 'src'), types: ['node'] },
      include: [],
      files: [path.join(ROOT, 'src', 'testing', 'index.ts')],
    }),
  );
  run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], ROOT);
  const shipped = { 'lib.d.ts': 'index.d.ts', 'types.d.ts': 'types.d.ts' };
  for (const [to, from] of Object.entries(shipped)) {
    const text = fs.readFileSync(path.join(out, 'testing', from), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      if (m[1] !== './types') fail(`${from} of the library's declarations imports ${m[1]}: its public types must be declared in src/testing/types.ts`);
    }
    fs.writeFileSync(path.join(stage, to), text);
  }
  fs.rmSync(out, { recursive: true, force: true });
  fs.rmSync(config, { force: true });
}

async function packageServer() {
  const stage = ARTIFACTS.serverStage;
  fs.mkdirSync(stage, { recursive: true });
  await buildBundles({ production: true, outdir: stage, only: ['cli', 'mcp', 'lib', 'webui', 'webuiCss'] });
  moveMaps(stage, ARTIFACTS.sourcemaps);
  fs.chmodSync(path.join(stage, 'cli.js'), 0o755);
  emitLibraryTypes(stage);
  const template = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages', 'server', 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify({ ...template, version }, null, 2) + '\n');
  fs.copyFileSync(path.join(ROOT, 'packages', 'server', 'README.md'), path.join(stage, 'README.md'));
  fs.copyFileSync(path.join(ROOT, 'LICENSE'), path.join(stage, 'LICENSE'));
  const npmCli = process.env.npm_execpath && fs.existsSync(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const [cmd, ...pre] = npmCli;
  run(cmd, [...pre, 'pack', '--silent', '--pack-destination', ROOT], stage);
  if (!fs.existsSync(ARTIFACTS.tarball)) fail(`npm pack did not write ${ARTIFACTS.tarball}`);
}

async function main() {
  const only = process.argv.includes('--vsix-only') ? 'vsix' : process.argv.includes('--server-only') ? 'server' : undefined;
  fs.rmSync(STAGE, { recursive: true, force: true });
  fs.rmSync(ARTIFACTS.sourcemaps, { recursive: true, force: true });
  const lines = [];
  if (only !== 'server') {
    const listed = await packageVsix();
    const ext = fs.statSync(path.join(ARTIFACTS.vsixStage, 'dist', 'extension.js')).size;
    lines.push(`${path.basename(ARTIFACTS.vsix)}  ${kb(fs.statSync(ARTIFACTS.vsix).size)}  (${listed.length} files; dist/extension.js ${kb(ext)})`);
    for (const f of listed) lines.push(`  ${f}  ${kb(fs.statSync(path.join(ARTIFACTS.vsixStage, f)).size)}`);
  }
  if (only !== 'vsix') {
    await packageServer();
    const size = (f) => kb(fs.statSync(path.join(ARTIFACTS.serverStage, f)).size);
    lines.push(`${path.basename(ARTIFACTS.tarball)}  ${kb(fs.statSync(ARTIFACTS.tarball).size)}  (cli.js ${size('cli.js')}, lib.js ${size('lib.js')})`);
  }
  lines.push(`source maps: ${path.relative(ROOT, ARTIFACTS.sourcemaps)}/`);
  process.stdout.write(lines.join('\n') + '\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
