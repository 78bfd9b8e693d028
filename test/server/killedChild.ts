// A store run cut short: `script` runs in a child (TypeScript through tsx, from the repository
// root) and writes one JSON line once it has done what it must; the child is then killed with
// SIGKILL, as a power cut or the OOM killer would, and the test opens what it left behind.
import * as path from 'node:path';
import { spawnChild } from './cliProcess';

const REPO = path.resolve(__dirname, '..', '..');

/**
 * The first stdout line of `script`, parsed as JSON; the child is SIGKILLed and gone when this
 * resolves. `fileSizeLimit`: the child runs under that RLIMIT_FSIZE (util-linux `prlimit`), so a
 * write past that many bytes in any one file fails with EFBIG (Node ignores SIGXFSZ).
 */
export async function firstLineThenSigkill<T>(script: string, options: { fileSizeLimit?: number } = {}): Promise<T> {
  const node = [process.execPath, '-r', 'tsx/cjs', '-e', script];
  const argv = options.fileSizeLimit === undefined ? node : ['prlimit', `--fsize=${options.fileSizeLimit}`, ...node];
  const child = spawnChild(argv[0], argv.slice(1), { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    return await new Promise<T>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(JSON.parse(out) as T);
      });
      child.on('exit', (code) => reject(new Error(`child exited with ${code}`)));
    });
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
  }
}
