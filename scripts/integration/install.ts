// Installs code-server (and the Node 24 it needs) into a version-keyed cache folder outside
// the clone, on first use. The install happens in a staging folder that is renamed into
// place only when complete, so an interrupted install never leaves a half-built cache.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CODE_SERVER_VERSION, DEBIAN_PACKAGES, INSTALL_TIMEOUT_MS, NODE24_VERSION, codeServerCacheDir } from './config';
import { IntegrationError } from './errors';
import { runLogged, tail } from './proc';

export interface CodeServerInstall {
  /** The cache folder. */
  dir: string;
  /** Node 24 binary that runs code-server. */
  node: string;
  /** code-server's `out/node/entry.js`. */
  entry: string;
}

/** Written last; its presence (with matching versions) means the cache is complete. */
const MARKER = 'test-inbox-install.json';

interface Marker {
  codeServer: string;
  node: string;
  platform: string;
  arch: string;
}

function expectedMarker(): Marker {
  return { codeServer: CODE_SERVER_VERSION, node: NODE24_VERSION, platform: process.platform, arch: process.arch };
}

function layout(dir: string): CodeServerInstall {
  return {
    dir,
    node: path.join(nodeHome(dir), 'bin', 'node'),
    entry: path.join(dir, 'server', 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
  };
}

/**
 * The unpacked Node 24 distribution inside an install folder. Node and code-server live in
 * separate npm projects: installing code-server next to `node` makes npm re-run node's
 * preinstall, which replaces the distribution (and the headers) while native modules build.
 */
function nodeHome(dir: string): string {
  return path.join(dir, 'node', 'node_modules', 'node', 'node_modules', `node-${process.platform}-${process.arch}`);
}

/** The cached install when complete, otherwise undefined. */
export function findCodeServer(): CodeServerInstall | undefined {
  const dir = codeServerCacheDir();
  try {
    const marker = JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8')) as Marker;
    const want = expectedMarker();
    if (marker.codeServer !== want.codeServer || marker.node !== want.node || marker.platform !== want.platform || marker.arch !== want.arch) {
      return undefined;
    }
  } catch {
    return undefined;
  }
  const found = layout(dir);
  return fs.existsSync(found.node) && fs.existsSync(found.entry) ? found : undefined;
}

/** Returns the cached install, building it first when missing. */
export async function ensureCodeServer(log: (line: string) => void): Promise<CodeServerInstall> {
  const cached = findCodeServer();
  if (cached) return cached;
  if (process.platform !== 'linux') {
    throw new IntegrationError(
      'NO_RUNNER',
      `The code-server runner is set up for Linux only; on ${process.platform} set VSCODE_EXECUTABLE to a VS Code build (or let @vscode/test-electron download one).`,
    );
  }
  checkBuildPrerequisites();

  const final = codeServerCacheDir();
  fs.mkdirSync(path.dirname(final), { recursive: true });
  const staging = fs.mkdtempSync(`${final}.partial-`);
  const logFile = path.join(staging, 'install.log');
  const started = Date.now();
  log(`First run only: building code-server ${CODE_SERVER_VERSION} (with Node ${NODE24_VERSION}) into ${final}. It takes a few minutes, once; later runs start at once. Log: ${logFile}`);
  try {
    for (const [folder, description] of [
      ['node', `Node ${NODE24_VERSION} for code-server`],
      ['server', `code-server ${CODE_SERVER_VERSION}`],
    ]) {
      fs.mkdirSync(path.join(staging, folder));
      const manifest = { name: `test-inbox-cache-${folder}`, private: true, description: `${description}; cache made by scripts/integration (test-inbox).` };
      fs.writeFileSync(path.join(staging, folder, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
    }
    const npmArgs = ['install', '--no-audit', '--no-fund', '--save-exact', '--loglevel=warn'];
    const baseEnv = cleanNpmEnv();
    await withProgress(`Step 1 of 2: downloading Node ${NODE24_VERSION} for code-server`, log, started, () => npm([...npmArgs, `node@${NODE24_VERSION}`], path.join(staging, 'node'), baseEnv, logFile));

    // node-gyp looks for common.gypi and config.gypi at the root of npm_config_nodedir,
    // while the npm package keeps them under include/node.
    const home = nodeHome(staging);
    for (const name of ['common.gypi', 'config.gypi']) {
      const target = path.join(home, name);
      if (!fs.existsSync(target)) fs.symlinkSync(path.join('include', 'node', name), target);
    }
    const env: NodeJS.ProcessEnv = {
      ...baseEnv,
      PATH: `${path.join(home, 'bin')}${path.delimiter}${baseEnv.PATH ?? ''}`,
      npm_config_nodedir: home,
      // node-gyp compiles each native module with make -j<cores> instead of one job.
      JOBS: 'max',
    };
    await withProgress(`Step 2 of 2: downloading code-server ${CODE_SERVER_VERSION} and compiling its native modules (the long part)`, log, started, () => npm([...npmArgs, `code-server@${CODE_SERVER_VERSION}`], path.join(staging, 'server'), env, logFile));

    const built = layout(staging);
    // code-server writes a default config file under XDG_CONFIG_HOME: keep it in the staging folder.
    const probeEnv = { ...baseEnv, XDG_CONFIG_HOME: path.join(staging, 'probe-config'), XDG_DATA_HOME: path.join(staging, 'probe-data') };
    const output = execFileSync(built.node, [built.entry, '--version'], { encoding: 'utf8', timeout: 60_000, env: probeEnv });
    fs.rmSync(probeEnv.XDG_CONFIG_HOME, { recursive: true, force: true });
    fs.rmSync(probeEnv.XDG_DATA_HOME, { recursive: true, force: true });
    const version = output.trim().split('\n').pop() ?? '';
    if (!version.startsWith(`${CODE_SERVER_VERSION} `)) {
      throw new IntegrationError('INSTALL_FAILED', `code-server in ${staging} reports version "${version}", expected ${CODE_SERVER_VERSION}.`);
    }
    fs.writeFileSync(path.join(staging, MARKER), JSON.stringify(expectedMarker(), null, 2) + '\n');
    try {
      fs.renameSync(staging, final);
    } catch {
      // Another run finished its install first, or an incomplete old cache is in the way.
      if (findCodeServer()) {
        fs.rmSync(staging, { recursive: true, force: true });
      } else {
        fs.rmSync(final, { recursive: true, force: true });
        fs.renameSync(staging, final);
      }
    }
  } catch (err) {
    const kept = `${staging} (log: ${logFile})`;
    if (IntegrationError.is(err)) throw new IntegrationError(err.code, `${err.message}\nPartial install kept for inspection: ${kept}`);
    throw new IntegrationError('INSTALL_FAILED', `Installing code-server failed: ${(err as Error).message}\nPartial install kept: ${kept}`, { cause: err });
  }
  log(`code-server ${CODE_SERVER_VERSION} built in ${elapsed(Date.now() - started)}; the next runs use it from ${final}.`);
  const installed = findCodeServer();
  if (!installed) throw new IntegrationError('INSTALL_FAILED', `code-server was installed but ${final} is not complete.`);
  return installed;
}

/** How often a long install step says it is still working. */
export const PROGRESS_EVERY_MS = 20_000;

/** `ms` as people read a duration: "45 s", "2 min 5 s". */
function elapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * Runs one step of the install, saying what it does when it starts and, every `everyMs` while
 * it runs, that it is still at it and for how long the install has run: npm prints nothing
 * for minutes while it compiles, and silence reads as a hang.
 */
export async function withProgress<T>(what: string, log: (line: string) => void, since: number, step: () => Promise<T>, everyMs = PROGRESS_EVERY_MS, now: () => number = Date.now): Promise<T> {
  log(`${what}…`);
  const timer = setInterval(() => log(`  still working (${elapsed(now() - since)} so far)…`), everyMs);
  try {
    return await step();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The environment without npm's own variables: under `npm test` they carry the outer
 * npm's settings, among them `npm_config_user_agent` naming Node 20, which code-server's
 * postinstall reads to refuse anything but Node 24.
 */
function cleanNpmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_') || KEPT_NPM_SETTINGS.has(key.toLowerCase())),
  );
}

/** npm settings that describe how to reach the registry, kept when given through the environment. */
const KEPT_NPM_SETTINGS = new Set(
  ['registry', 'cafile', 'ca', 'proxy', 'https_proxy', 'noproxy', 'strict_ssl', 'cache'].map((name) => `npm_config_${name}`),
);

async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv, logFile: string): Promise<void> {
  const code = await runLogged('npm', args, { cwd, env, logFile, timeoutMs: INSTALL_TIMEOUT_MS });
  if (code !== 0) {
    const why = code === -1 ? `timed out after ${INSTALL_TIMEOUT_MS / 60_000} min` : `exited with code ${code}`;
    throw new IntegrationError('INSTALL_FAILED', `npm ${args.join(' ')} ${why}. Last lines of ${logFile}:\n${tail(logFile)}`);
  }
}

/** code-server's native modules build against these; fail early with the packages to install. */
function checkBuildPrerequisites(): void {
  const modules = ['krb5-gssapi', 'xkbfile', 'libsecret-1'];
  let ok = true;
  try {
    execFileSync('pkg-config', ['--exists', ...modules], { stdio: 'ignore' });
  } catch {
    ok = false;
  }
  for (const tool of ['make', 'g++', 'python3']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      ok = false;
    }
  }
  if (!ok) {
    throw new IntegrationError(
      'NO_RUNNER',
      'code-server cannot be built here: its native modules need a C++ toolchain (make, g++, python3) and the ' +
        `development packages of Kerberos, libxkbfile and libsecret. On Debian: apt-get install ${DEBIAN_PACKAGES.join(' ')} build-essential python3. ` +
        'Or set VSCODE_EXECUTABLE to a desktop VS Code build.',
    );
  }
}
