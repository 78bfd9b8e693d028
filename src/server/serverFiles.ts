// The server's own files in the data folder: the reserve that keeps room for them on a full
// disk, their writes (through src/shared/privateFile.ts), and who may own them.
import { readFileSync, promises as fs, type Stats } from 'node:fs';
import * as path from 'node:path';
import { ownershipProblem } from '../shared/contract';
import { writePrivateFile } from '../shared/privateFile';

/**
 * Room the data folder keeps for the server's own small files (RESERVE_FILE): on a disk that
 * mail filled, a start still writes its server file (docs/architecture.md, "Storage and recovery", the full-disk item).
 */
const RESERVE_FILE = '.reserve';
const RESERVE_BYTES = 256 * 1024;

/** Keeps `<dir>/RESERVE_FILE` (RESERVE_BYTES of real blocks) when there is room; resolves whether it is there. */
export async function keepReserve(dir: string): Promise<boolean> {
  const file = path.join(dir, RESERVE_FILE);
  const have = await fs.stat(file).then((s) => s.size === RESERVE_BYTES, () => false);
  if (have) return true;
  try {
    await writePrivateFile(file, Buffer.alloc(RESERVE_BYTES));
    return true;
  } catch {
    await fs.rm(file, { force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * writePrivateFile for the server's own files in a data folder that keeps a reserve: when the
 * disk is full (ENOSPC, EDQUOT) the reserve is given up and the write tried once more.
 */
export async function writeServerFile(dir: string, file: string, text: string): Promise<'written' | 'used the reserve'> {
  try {
    await writePrivateFile(file, text);
    return 'written';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw e;
    await fs.rm(path.join(dir, RESERVE_FILE), { force: true });
    await writePrivateFile(file, text);
    return 'used the reserve';
  }
}

/** The name of a user id in /etc/passwd, or undefined (no such file, no such user, Windows). */
function userName(uid: number): string | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (id !== undefined && Number(id) === uid) return name;
    }
  } catch {
    // No passwd file: the uid alone is named.
  }
  return undefined;
}

/**
 * Why the data folder (`kind` 'folder', stat'ed through a symlink: where it lives is the user's
 * choice) or a file of it ('file', lstat'ed: never a link) must not be used: contract.ts's
 * ownershipProblem. Undefined when it may, when it does not exist, and on Windows.
 */
export async function ownershipProblemOf(p: string, kind: 'folder' | 'file'): Promise<string | undefined> {
  if (typeof process.getuid !== 'function') return undefined;
  let st: Stats;
  try {
    st = kind === 'folder' ? await fs.stat(p) : await fs.lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return ownershipProblem(p, st, process.getuid(), userName);
}
