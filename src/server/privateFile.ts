// Files in the data folder that hold secrets (tokens.json, server.json): written whole, owner
// read/write only, fsynced, then renamed into place so that no reader sees half a file.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** Owner read/write only: the files hold secrets. */
export const PRIVATE_FILE_MODE = 0o600;

export async function writePrivateFile(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const fh = await fs.open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      await fh.chmod(PRIVATE_FILE_MODE); // in case the umask or an old tmp file widened it
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}
