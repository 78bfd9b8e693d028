// A real VS Code workbench in headless Chromium, served by code-server, with this
// extension loaded from the clone. Used by the integration runner (with extensionTestsPath,
// the host runs the suites and reports back) and usable on its own for browser-level
// checks and screenshots:
//
//   import { startWorkbench } from '../../scripts/integration/workbench';
//   const wb = await startWorkbench({ workspace: '/some/folder' });
//   try {
//     await wb.page.click('.activitybar [aria-label^="Test Inbox"]');
//     await wb.page.screenshot({ path: 'shot.png' });
//   } finally {
//     await wb.stop();
//   }
//
// startCodeServer() is the same without the browser: it returns the workbench URL to open
// (npm start uses it). `settings` are seeded as User and Machine settings.
//
// Every session gets fresh user-data, extensions, XDG and TMPDIR folders in a temp dir, a
// free port and a fresh Chromium profile; stop() ends code-server's whole process group and
// removes the temp dir (after copying its logs when `keepLogsIn` is given).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as util from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEBIAN_PACKAGES, DEFAULT_CHROMIUM, ENV, EXTENSION_MAIN, EXTENSION_PATH, SERVER_READY_TIMEOUT_MS } from './config';
import { IntegrationError } from './errors';
import { ensureCodeServer } from './install';
import { killGroup, stopGroup, tail } from './proc';

/** code-server prints this line once its HTTP server accepts connections. */
const READY_LINE = 'HTTP server listening on';
/** Loading the workbench page (not the extension host) is quick; this covers a busy machine. */
const PAGE_LOAD_TIMEOUT_MS = 60_000;
/** A free port can be taken between probing and code-server binding it; try again this often. */
const PORT_ATTEMPTS = 3;
/** Default browser window: large enough for the side bar, a tree and an editor in screenshots. */
const DEFAULT_VIEWPORT = { width: 1280, height: 800 };

/** Chromium flags for a quiet, offline, container-friendly headless run. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** User settings seeded into every session: quiet, deterministic, nothing fetched from the network. */
const SEED_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'chat.disableAIFeatures': true,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'git.enabled': false,
  'security.workspace.trust.enabled': false,
};

export interface WorkbenchOptions {
  /**
   * Whether an interrupt (SIGINT/SIGTERM) of this process ends the session and the process
   * (default true: the test runner). `npm start` says false: it stops the session itself, in
   * order, with the inbox server, and then exits.
   */
  handleSignals?: boolean;
  /** Folder opened in the workbench; a fresh empty temp folder when omitted. */
  workspace?: string;
  /** Folder with the extension's package.json; the clone by default. Ignored with `vsix`. */
  extensionPath?: string;
  /**
   * A packaged extension to install into the session's fresh extensions folder with
   * code-server's `--install-extension`, as a user installs it; the workbench then runs that
   * installed copy and no development path is loaded.
   */
  vsix?: string;
  /**
   * The smoke-test driver that the test payload (extensionTestsPath) needs; it also
   * suppresses every notification toast. On by default for the harness; `npm start` turns it
   * off so that people see notifications.
   */
  smokeTestDriver?: boolean;
  /**
   * Links the extension folder (the clone) into the session's extensions folder, so that the
   * workbench loads it as an installed extension without the test payload (which needs the
   * smoke-test driver). A rebuild and a window reload pick up changes. For `npm start`.
   */
  linkExtension?: boolean;
  /** Compiled test entry; when set the extension host runs it and the session ends with it. */
  extensionTestsPath?: string;
  /** Extra environment for code-server and therefore the extension host. */
  env?: Record<string, string>;
  /** Extra user settings on top of the quiet defaults. */
  settings?: Record<string, unknown>;
  /** Renderer and extension-host log lines (the workbench's codeAutomationLog) with their level. */
  onLog?: (line: string, level: string) => void;
  /** Called when the test entry's run() settles: 0 resolved, non-zero rejected. */
  onExit?: (code: number) => void;
  /** Progress messages (install, start). */
  onProgress?: (message: string) => void;
  /** When starting fails, the session's logs are copied here before the temp dir is removed. */
  failureLogDir?: string;
  /** Browser viewport. */
  viewport?: { width: number; height: number };
}

/** code-server alone (no browser): open `url` in any browser to get the workbench. */
export interface CodeServerSession {
  /** The workbench URL, with the extension (and tests, when given) in its payload. */
  url: string;
  port: number;
  workspace: string;
  /** Session temp dir (user data, extensions, logs). Removed by stop(). */
  tmpDir: string;
  /** code-server's stdout and stderr. */
  serverLog: string;
  /** Renderer log lines received through codeAutomationLog (empty for code-server alone). */
  workbenchLog: string;
  /** Rejects when code-server exits before stop() was called. */
  serverExited: Promise<never>;
  /**
   * Sets settings while the workbench runs, as a person editing settings.json does: merged into
   * the User settings and, where the session was started with settings, the Machine ones. The
   * workbench and the extension apply them live (a colour theme, a testInbox.* setting).
   */
  updateSettings(settings: Record<string, unknown>): void;
  /** Ends code-server (and the browser of a Workbench); copies logs to keepLogsIn first when given. */
  stop(options?: { keepLogsIn?: string }): Promise<void>;
}

/** A code-server session with Chromium showing its workbench; stop() ends the browser too. */
export interface Workbench extends CodeServerSession {
  page: Page;
  browser: Browser;
}

/**
 * code-server runs in its own process group, so Ctrl-C in the terminal does not reach it;
 * while any session is live, an interrupt or exit of this process ends those groups too.
 */
const liveServers = new Map<ChildProcess, string>();
/** Live sessions whose owner asked for the interrupt handlers (handleSignals). */
const signalOwners = new Set<ChildProcess>();
/** Folders a session leaves: processes that are being killed may still write into them, so removal retries. */
const RM_RETRIES = { recursive: true, force: true, maxRetries: 10, retryDelay: 100 } as const;
const onSignal = (signal: NodeJS.Signals) => {
  process.stderr.write(`Interrupted (${signal}); stopping code-server.\n`);
  process.exit(signal === 'SIGINT' ? 130 : 143);
};
const onExit = () => {
  for (const [child, tmpDir] of liveServers) {
    killGroup(child, 'SIGKILL');
    try {
      fs.rmSync(tmpDir, RM_RETRIES);
    } catch (e) {
      // An exit handler never throws: the other sessions' folders are removed too.
      process.stderr.write(`Could not remove ${tmpDir}: ${(e as Error).message}\n`);
    }
  }
};

/** Registers a running code-server and its session temp dir for cleanup on exit (and on interrupt, when `signals`). */
function track(child: ChildProcess, tmpDir: string, signals: boolean): void {
  if (liveServers.size === 0) process.on('exit', onExit);
  if (signals && signalOwners.size === 0) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  liveServers.set(child, tmpDir);
  if (signals) signalOwners.add(child);
}

function untrack(child: ChildProcess): void {
  if (signalOwners.delete(child) && signalOwners.size === 0) {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (liveServers.delete(child) && liveServers.size === 0) process.off('exit', onExit);
}

/** Chromium to drive; throws NO_RUNNER with the packages to install when it is missing. */
export function chromiumPath(): string {
  const exe = process.env[ENV.chromium] || DEFAULT_CHROMIUM;
  if (!fs.existsSync(exe)) {
    throw new IntegrationError(
      'NO_RUNNER',
      `Chromium not found at ${exe}. The offline runner needs it: apt-get install ${DEBIAN_PACKAGES.join(' ')} ` +
        `(or set ${ENV.chromium}), or set ${ENV.vscodeExecutable} to a desktop VS Code build.`,
    );
  }
  return exe;
}

/**
 * Starts code-server only (no browser) with the extension in the workbench URL's payload;
 * `npm start` uses it when desktop VS Code is not on PATH. Options about the browser are ignored.
 */
export async function startCodeServer(options: WorkbenchOptions = {}): Promise<CodeServerSession> {
  const extensionPath = path.resolve(options.extensionPath ?? EXTENSION_PATH);
  if (options.vsix !== undefined && !fs.existsSync(options.vsix)) {
    throw new IntegrationError('NOT_BUILT', `${options.vsix} is missing; run \`npm run package\` first.`);
  }
  if (options.vsix === undefined && extensionPath === EXTENSION_PATH && !fs.existsSync(EXTENSION_MAIN)) {
    throw new IntegrationError('NOT_BUILT', `${path.relative(process.cwd(), EXTENSION_MAIN)} is missing; run \`npm run build\` first.`);
  }
  const install = await ensureCodeServer(options.onProgress ?? (() => {}));

  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-it-'));
  const dirs = {
    data: path.join(tmpDir, 'data'),
    exts: path.join(tmpDir, 'extensions'),
    config: path.join(tmpDir, 'xdg-config'),
    xdgData: path.join(tmpDir, 'xdg-data'),
    xdgCache: path.join(tmpDir, 'xdg-cache'),
    // The host's os.tmpdir(): whatever the suites leave there goes with the session.
    tmp: path.join(tmpDir, 'tmp'),
    logs: path.join(tmpDir, 'logs'),
  };
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  const workspace = path.resolve(options.workspace ?? path.join(tmpDir, 'workspace'));
  fs.mkdirSync(workspace, { recursive: true });
  fs.mkdirSync(path.join(dirs.data, 'User'), { recursive: true });
  fs.writeFileSync(path.join(dirs.data, 'User', 'settings.json'), JSON.stringify({ ...SEED_SETTINGS, ...options.settings }, null, 2) + '\n');
  if (options.settings) {
    // The workbench is a remote window: `machine`-scoped settings (e.g. testInbox.local.*) are
    // read from the remote's Machine settings; from User settings they apply only now and then.
    fs.mkdirSync(path.join(dirs.data, 'Machine'), { recursive: true });
    fs.writeFileSync(path.join(dirs.data, 'Machine', 'settings.json'), JSON.stringify(options.settings, null, 2) + '\n');
  }
  const serverLog = path.join(dirs.logs, 'code-server.log');
  const workbenchLog = path.join(dirs.logs, 'workbench.log');
  const updateSettings = (settings: Record<string, unknown>): void => {
    for (const scope of ['User', 'Machine']) {
      const file = path.join(dirs.data, scope, 'settings.json');
      if (!fs.existsSync(file)) continue;
      const merged = { ...(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>), ...settings };
      fs.writeFileSync(file, JSON.stringify(merged, null, 2) + '\n');
    }
  };

  let server: ChildProcess | undefined;
  let stopping = false;
  const stop = async (stopOptions: { keepLogsIn?: string } = {}): Promise<void> => {
    stopping = true;
    if (server) {
      await stopGroup(server);
      untrack(server);
    }
    if (stopOptions.keepLogsIn) keepLogs(tmpDir, dirs, stopOptions.keepLogsIn);
    await fs.promises.rm(tmpDir, RM_RETRIES);
  };

  try {
    const env: NodeJS.ProcessEnv = {
      ...hostEnvironment(),
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.xdgData,
      XDG_CACHE_HOME: dirs.xdgCache,
      TMPDIR: dirs.tmp,
      ...options.env,
    };
    const common = ['--user-data-dir', dirs.data, '--extensions-dir', dirs.exts];
    if (options.vsix !== undefined) {
      options.onProgress?.(`Installing ${path.basename(options.vsix)} into the session's extensions folder…`);
      await installVsix(install, path.resolve(options.vsix), common, { cwd: tmpDir, env, logFile: serverLog });
    }
    if (options.linkExtension && options.vsix === undefined) {
      const pkg = JSON.parse(fs.readFileSync(path.join(extensionPath, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };
      fs.symlinkSync(extensionPath, path.join(dirs.exts, `${pkg.publisher}.${pkg.name}-${pkg.version}`), 'dir');
    }
    const smokeDriver = options.smokeTestDriver ?? true;
    if (!smokeDriver && options.extensionTestsPath) {
      throw new IntegrationError('NO_TESTS', 'extensionTestsPath needs the smoke-test driver (smokeTestDriver: true).');
    }
    let started: { child: ChildProcess; port: number } | undefined;
    for (let attempt = 1; !started; attempt++) {
      const port = await freePort();
      const args = [
        install.entry,
        '--bind-addr', `127.0.0.1:${port}`,
        '--auth', 'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        '--ignore-last-opened',
        ...common,
        // Without it the built workbench silently ignores the test payload.
        ...(smokeDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
        workspace,
      ];
      options.onProgress?.(`Starting code-server on 127.0.0.1:${port}…`);
      const child = spawn(install.node, args, { cwd: tmpDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      server = child;
      track(child, tmpDir, options.handleSignals ?? true);
      try {
        await waitForReady(child, serverLog);
        started = { child, port };
      } catch (err) {
        await stopGroup(child);
        untrack(child);
        const portTaken = /EADDRINUSE/.test(tail(serverLog, 50));
        if (!portTaken || attempt >= PORT_ATTEMPTS) throw err;
      }
    }
    const { child, port } = started;
    const serverExited = new Promise<never>((_resolve, reject) => {
      child.once('exit', (code, signal) => {
        if (!stopping) {
          reject(new IntegrationError('SERVER_FAILED', `code-server exited unexpectedly (${code ?? signal}). Last lines:\n${tail(serverLog)}`));
        }
      });
    });
    serverExited.catch(() => {});

    // The remote authority must equal the page's host exactly.
    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${toPosix(p)}`;
    const installed = options.vsix !== undefined || options.linkExtension === true;
    const payload: [string, string][] = installed ? [] : [['extensionDevelopmentPath', remote(extensionPath)]];
    if (options.extensionTestsPath) payload.push(['extensionTestsPath', remote(path.resolve(options.extensionTestsPath))]);
    payload.push(['skipWelcome', 'true'], ['skipReleaseNotes', 'true']);
    const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(toPosix(workspace))}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    return { url, port, workspace, tmpDir, serverLog, workbenchLog, serverExited, updateSettings, stop };
  } catch (err) {
    await stop({ keepLogsIn: options.failureLogDir }).catch(() => {});
    throw err;
  }
}

/** Starts code-server and Chromium and opens the workbench with the extension loaded. */
export async function startWorkbench(options: WorkbenchOptions = {}): Promise<Workbench> {
  const executablePath = chromiumPath();
  let session: CodeServerSession;
  try {
    session = await startCodeServer(options);
  } catch (err) {
    throw withLogsNote(err, options.failureLogDir);
  }
  const { url, workbenchLog } = session;
  let browser: Browser | undefined;
  const stop = async (stopOptions: { keepLogsIn?: string } = {}): Promise<void> => {
    await browser?.close().catch(() => {});
    await session.stop(stopOptions);
  };

  try {
    options.onProgress?.('code-server is listening; starting Chromium…');
    browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS }).catch((err: Error) => {
      throw new IntegrationError('BROWSER_FAILED', `Chromium (${executablePath}) did not start: ${err.message}`, { cause: err });
    });
    // A context of its own (one browser profile): `page.context().newPage()` opens another
    // window of the same workbench, as a second tab of the user's browser does (same storage).
    const context = await browser.newContext({ viewport: options.viewport ?? DEFAULT_VIEWPORT });
    const logLine = (line: string) => fs.appendFileSync(workbenchLog, line + '\n');
    await context.exposeFunction('codeAutomationLog', (type: unknown, args: unknown) => {
      const line = util.format(...(Array.isArray(args) ? args : [args]));
      logLine(`[${String(type)}] ${line}`);
      options.onLog?.(line, String(type));
    });
    await context.exposeFunction('codeAutomationExit', (code: unknown) => {
      logLine(`[exit] ${String(code)}`);
      options.onExit?.(typeof code === 'number' ? code : Number(code) || 1);
    });
    context.on('page', (p) => p.on('pageerror', (err) => logLine(`[pageerror] ${err.stack ?? err.message}`)));
    const page = await context.newPage();

    options.onProgress?.('Opening the workbench…');
    await page.goto(url, { timeout: PAGE_LOAD_TIMEOUT_MS });
    await page.waitForSelector('.monaco-workbench', { timeout: PAGE_LOAD_TIMEOUT_MS }).catch((err: Error) => {
      throw new IntegrationError('BROWSER_FAILED', `The workbench did not load at ${url}: ${err.message}`, { cause: err });
    });

    options.onProgress?.('Workbench loaded.');
    const { port, workspace, tmpDir, serverLog, serverExited } = session;
    return { page, browser, url, port, workspace, tmpDir, serverLog, workbenchLog, serverExited, updateSettings: session.updateSettings, stop };
  } catch (err) {
    await stop({ keepLogsIn: options.failureLogDir }).catch(() => {});
    throw withLogsNote(err, options.failureLogDir);
  }
}

/** The error of a failed start, typed, with where its logs were kept. */
function withLogsNote(err: unknown, failureLogDir: string | undefined): IntegrationError {
  const kept = failureLogDir ? `\nLogs kept in ${failureLogDir}` : '';
  if (IntegrationError.is(err)) return new IntegrationError(err.code, `${err.message}${kept}`, { cause: err });
  return new IntegrationError('BROWSER_FAILED', `Starting the workbench failed: ${(err as Error).message}${kept}`, { cause: err });
}

/** Resolves when code-server prints its ready line; rejects when it exits or takes too long. */
function waitForReady(child: ChildProcess, logFile: string): Promise<void> {
  child.stderr?.on('data', (chunk: Buffer) => fs.appendFileSync(logFile, chunk));
  return new Promise((resolve, reject) => {
    let seen = '';
    let ready = false;
    const timer = setTimeout(() => {
      reject(new IntegrationError('SERVER_FAILED', `code-server did not report "${READY_LINE}" within ${SERVER_READY_TIMEOUT_MS / 1000} s. Last lines:\n${tail(logFile)}`));
    }, SERVER_READY_TIMEOUT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      fs.appendFileSync(logFile, chunk);
      if (ready) return;
      seen = (seen + chunk.toString('utf8')).slice(-4096);
      if (seen.includes(READY_LINE)) {
        ready = true;
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new IntegrationError('SERVER_FAILED', `code-server could not be started: ${err.message}`, { cause: err }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) {
        // Let the last output reach the log before quoting it.
        setTimeout(() => reject(new IntegrationError('SERVER_FAILED', `code-server exited (${code ?? signal}) before it was ready. Last lines:\n${tail(logFile)}`)), 100);
      }
    });
  });
}

/** Time for code-server's CLI to unpack and register a VSIX on a busy machine. */
const INSTALL_VSIX_TIMEOUT_MS = 120_000;

/** `code-server --install-extension <vsix>` into the session's folders; throws with its output on failure. */
async function installVsix(
  install: { node: string; entry: string },
  vsix: string,
  folders: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; logFile: string },
): Promise<void> {
  const child = spawn(install.node, [install.entry, ...folders, '--install-extension', vsix], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new IntegrationError('INSTALL_FAILED', `Installing ${vsix} took over ${INSTALL_VSIX_TIMEOUT_MS / 1000} s:\n${output}`));
    }, INSTALL_VSIX_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new IntegrationError('INSTALL_FAILED', `code-server --install-extension could not run: ${err.message}`, { cause: err }));
    });
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  fs.appendFileSync(opts.logFile, `--install-extension ${vsix}:\n${output}\n`);
  if (code !== 0 || !/successfully installed/i.test(output)) {
    throw new IntegrationError('INSTALL_FAILED', `code-server --install-extension ${vsix} failed (exit ${code}):\n${output}`);
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The runner's environment minus what would leak into code-server: npm's variables from
 * `npm test`, and VS Code's own when run from an integrated terminal (they would make the
 * extension host talk to the outer editor). code-server reads PORT and PASSWORD too.
 */
function hostEnvironment(): NodeJS.ProcessEnv {
  const drop = (key: string) =>
    /^npm_/i.test(key) || key.startsWith('VSCODE_') || key === 'ELECTRON_RUN_AS_NODE' || key === 'PORT' || key === 'PASSWORD' || key === 'HASHED_PASSWORD';
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !drop(key)));
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** Copies the session's logs (ours and VS Code's) into `target`. */
function keepLogs(tmpDir: string, dirs: { data: string; logs: string }, target: string): void {
  try {
    fs.mkdirSync(target, { recursive: true });
    fs.cpSync(dirs.logs, target, { recursive: true });
    const vscodeLogs = path.join(dirs.data, 'logs');
    if (fs.existsSync(vscodeLogs)) fs.cpSync(vscodeLogs, path.join(target, 'vscode-logs'), { recursive: true });
    const settings = path.join(dirs.data, 'User', 'settings.json');
    if (fs.existsSync(settings)) fs.copyFileSync(settings, path.join(target, 'settings.json'));
  } catch (err) {
    process.stderr.write(`Could not keep the logs of ${tmpDir}: ${(err as Error).message}\n`);
  }
}
