// MailDev 2.2.1 (and 3.0.0 beside it), the reference SMTP catcher: installed by the bench into a cache folder
// outside the repository (never a dependency of the project), started on loopback ports.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startWithSmtpProbe, type Started } from './procs';

/** The reference version the targets name; the cache folder is keyed by the version. */
export const MAILDEV_VERSION = '2.2.1';
/** The newer MailDev, printed beside the reference in the same run (issue 27). */
export const MAILDEV_NEXT_VERSION = '3.0.0';
/** npm install of MailDev (165 packages) should take well under this. */
const INSTALL_TIMEOUT_MS = 5 * 60_000;

export class MaildevUnavailableError extends Error {
  readonly code = 'MAILDEV_UNAVAILABLE';
  constructor(message: string) {
    super(message);
    this.name = 'MaildevUnavailableError';
  }
  static is(e: unknown): e is MaildevUnavailableError {
    return e instanceof MaildevUnavailableError;
  }
}

/** `${XDG_CACHE_HOME:-~/.cache}/test-inbox/bench` */
export function benchCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'test-inbox', 'bench');
}

/** Major.minor.patch of this Node satisfies a simple `>=X.Y.Z` range. */
function satisfiesMin(range: string | undefined): boolean {
  const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range?.trim() ?? '');
  if (!m) return true;
  const want = [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
  const have = process.versions.node.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i];
  return true;
}

/**
 * Path of MailDev's bin script, installing it first when the cache lacks it.
 * Throws MaildevUnavailableError with the reason when it cannot be installed or run here.
 */
export async function ensureMaildev(log: (line: string) => void, version: string = MAILDEV_VERSION): Promise<string> {
  const dir = path.join(benchCacheDir(), `maildev-${version}`);
  const pkgJson = path.join(dir, 'node_modules', 'maildev', 'package.json');
  if (!existsSync(pkgJson)) {
    log(`installing maildev@${version} into ${dir} …`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'test-inbox-bench-maildev', private: true }, null, 2) + '\n');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    try {
      await promisify(execFile)(npm, ['install', `maildev@${version}`, '--no-audit', '--no-fund'], {
        cwd: dir,
        timeout: INSTALL_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new MaildevUnavailableError(`npm install maildev@${version} failed: ${(err.stderr || err.message).trim().split('\n').slice(-5).join(' | ')}`);
    }
  }
  let pkg: { version?: string; engines?: { node?: string }; bin?: Record<string, string> };
  try {
    pkg = JSON.parse(readFileSync(pkgJson, 'utf8'));
  } catch (e) {
    throw new MaildevUnavailableError(`cannot read ${pkgJson}: ${(e as Error).message}`);
  }
  if (pkg.version !== version) throw new MaildevUnavailableError(`cache holds maildev ${pkg.version}, not ${version}`);
  if (!satisfiesMin(pkg.engines?.node)) throw new MaildevUnavailableError(`maildev needs node ${pkg.engines?.node}, this is ${process.versions.node}`);
  const bin = path.join(dir, 'node_modules', 'maildev', pkg.bin?.maildev ?? 'bin/maildev');
  if (!existsSync(bin)) throw new MaildevUnavailableError(`maildev bin script missing at ${bin}`);
  return bin;
}

/** Starts MailDev with SMTP and web UI on free loopback ports, mails kept in `mailDir`. */
export async function startMaildev(bin: string, mailDir: string): Promise<Started<number>> {
  const smtpPort = await freePort();
  const webPort = await freePort();
  const args = [bin, '--smtp', String(smtpPort), '--web', String(webPort), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--mail-directory', mailDir, '--silent'];
  return startWithSmtpProbe(process.execPath, args, smtpPort);
}
