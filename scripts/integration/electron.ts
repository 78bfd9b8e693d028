// Runs the suites in desktop VS Code through @vscode/test-electron: the executable from
// VSCODE_EXECUTABLE, or a build it downloads (cached outside the clone) when it can reach
// the update server.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { ENV, EXTENSION_PATH, cacheRoot } from './config';
import { IntegrationError } from './errors';

/** Where test-electron's VS Code downloads are kept (not in the clone's .vscode-test). */
export function vscodeDownloadCache(): string {
  return path.join(cacheRoot(), 'vscode-test');
}

/** The reachability probe of the download server gives up after this; offline machines answer nothing at all. */
const PROBE_TIMEOUT_MS = 5_000;
/** VS Code's update service, which @vscode/test-electron downloads from. */
const UPDATE_SERVER = 'https://update.code.visualstudio.com/api/releases/stable';

/** True when @vscode/test-electron could download VS Code from here. */
export async function canDownloadVSCode(): Promise<boolean> {
  try {
    const res = await fetch(UPDATE_SERVER, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** Desktop VS Code on Linux needs a display (e.g. under xvfb-run). */
export function hasDisplay(): boolean {
  return process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

export interface ElectronRunOptions {
  /** The compiled test entry. */
  entry: string;
  env: Record<string, string>;
  timeoutMs: number;
}

/** Runs the compiled test entry in desktop VS Code; resolves with the host's exit code. */
export async function runInElectron(options: ElectronRunOptions): Promise<number> {
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-it-electron-'));
  const workspace = path.join(tmpDir, 'workspace');
  fs.mkdirSync(workspace);
  let timer: NodeJS.Timeout | undefined;
  try {
    const run = runTests({
      vscodeExecutablePath: process.env[ENV.vscodeExecutable] || undefined,
      cachePath: vscodeDownloadCache(),
      extensionDevelopmentPath: EXTENSION_PATH,
      extensionTestsPath: options.entry,
      extensionTestsEnv: options.env,
      launchArgs: [
        workspace,
        `--user-data-dir=${path.join(tmpDir, 'data')}`,
        `--extensions-dir=${path.join(tmpDir, 'extensions')}`,
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        '--disable-updates',
        '--disable-telemetry',
        '--disable-gpu',
        '--no-sandbox',
      ],
    }).then(
      () => 0,
      (err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (typeof code === 'number') return code;
        throw new IntegrationError(
          'NO_RUNNER',
          `Desktop VS Code could not run the tests: ${(err as Error).message}. ` +
            `Set ${ENV.vscodeExecutable} to an installed VS Code, or use ${ENV.runner}=code-server (needs the Debian packages listed in .ci/run).`,
          { cause: err },
        );
      },
    );
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new IntegrationError('TIMEOUT', `The VS Code run did not finish within ${options.timeoutMs / 1000} s.`)),
        options.timeoutMs,
      );
    });
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}
