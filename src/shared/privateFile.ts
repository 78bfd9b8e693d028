// Files that hold secrets (tokens.json, server.json, the SMTP key): written whole, owner
// read/write only, fsynced, then renamed into place so that no reader sees half a file. The
// server and the extension both write the data folder's files through here.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { retryBusy } from './portableFs';

/** Owner read/write only: the files hold secrets. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Writes `file` whole, owner-only. `exclusive`: only when no file is there (the write fails with
 * EEXIST otherwise): written in place with O_EXCL, so a file that appeared meanwhile (another
 * process's) is never replaced.
 */
export async function writePrivateFile(file: string, text: string | Buffer, options: { exclusive?: boolean } = {}): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const target = options.exclusive ? file : `${file}.${process.pid}.tmp`;
  let created = false;
  try {
    const fh = await fs.open(target, options.exclusive ? 'wx' : 'w', PRIVATE_FILE_MODE);
    created = true;
    try {
      await fh.chmod(PRIVATE_FILE_MODE); // in case the umask or an old tmp file widened it
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (!options.exclusive) await retryBusy(() => fs.rename(target, file));
  } catch (e) {
    if (created || !options.exclusive) await fs.rm(target, { force: true }).catch(() => undefined);
    throw e;
  }
}
