// The file-system operations of the Maildir store's files (files.ts), checkpoints
// (checkpoints.ts) and recovery (recovery.ts): flushing a set of files durably, removing,
// listing and writing, each with the error handling the store needs.
import { promises as fs, rmSync, type Dirent } from 'node:fs';
import * as path from 'node:path';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { errnoCode } from '../errors';
import { fsyncDir, fsyncPath, mapLimit, type SyncFd } from './layout';

/** Files read or directories listed at once on open: enough to overlap I/O without exhausting file descriptors. */
export const OPEN_CONCURRENCY = 32;
/** Files fsynced at once by a checkpoint: enough to keep the disk's queue full, few enough to leave file descriptors and threads to the rest. */
export const FLUSH_CONCURRENCY = 16;

/** Makes the given files and their directory entries durable: only the store's own files, FLUSH_CONCURRENCY at a time (portable; no syncfs of the whole file system). */
export async function flushFiles(files: string[], sync?: SyncFd): Promise<void> {
  await mapLimit(files, FLUSH_CONCURRENCY, (f) => fsyncFile(f, sync));
  await flushDirs(new Set(files.map((f) => path.dirname(f))), sync);
}

/** Makes the entries of the given folders durable (renames and unlinks in them); one removed since has nothing to flush. */
export async function flushDirs(dirs: Iterable<string>, sync?: SyncFd): Promise<void> {
  await mapLimit([...dirs], FLUSH_CONCURRENCY, (d) => fsyncDir(d, sync).catch((e: unknown) => (errnoCode(e) === 'ENOENT' ? undefined : Promise.reject(e))));
}

/** A file removed since it was listed has nothing to flush. */
const FILE_OPEN_SKIP: ReadonlySet<string> = new Set(['ENOENT']);
const NOTHING: ReadonlySet<string> = new Set();

export function fsyncFile(file: string, sync?: SyncFd): Promise<void> {
  return fsyncPath(file, 'file', FILE_OPEN_SKIP, NOTHING, sync);
}

/** Removes a file if it is there; used to undo a delivery that failed, where a second failure changes nothing. */
export function rmQuietly(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // the error already being reported is the one that matters
  }
}

/** The names in a folder; none when it or a parent is gone. */
export async function namesOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw e;
  }
}

/** The entries of a folder; none when it or a parent is gone. */
export async function readdirOrEmpty(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw e;
  }
}

/** Writes a new file whose mtime records the receipt time (not flushed: the caller flushes a batch of them). */
export async function writeWithTime(file: string, data: Buffer, time: number): Promise<void> {
  const fh = await fs.open(file, 'wx', PRIVATE_FILE_MODE);
  try {
    await fh.writeFile(data);
    await fh.utimes(time / 1000, time / 1000);
  } finally {
    await fh.close();
  }
}
