// The file-system rules that differ by platform, written once for the server's store, its own
// files and the extension's: where modes mean anything, and how long a rename or an unlink waits
// for a file that another handle holds for a moment. Each takes the platform as a parameter, so
// its Windows and macOS branches are unit-tested on Linux (test/unit/portableFs.test.ts).
// docs/architecture.md ("Storage and recovery", "Windows and macOS") lists what each handles.
import { sleep } from '../core/sleep';

type Platform = NodeJS.Platform;

/**
 * Whether POSIX modes protect a file here. On Windows they are ACLs: chmod only toggles the
 * read-only attribute and stat reports 0666/0444, so a mode check would fail every file and a
 * chmod would change nothing. There the folder's inherited ACL (a profile folder is its user's
 * alone) is what keeps the data private.
 */
export function modesApply(platform: Platform = process.platform): boolean {
  return platform !== 'win32';
}

/**
 * What Windows answers for a moment while another handle holds a file without sharing its
 * delete access (an antivirus scanner, the search indexer, a backup agent): a rename or unlink
 * fails with one of these, then works. On POSIX they are final (a permission denied is real).
 */
const BUSY_ON_WINDOWS: ReadonlySet<string> = new Set(['EPERM', 'EBUSY', 'EACCES']);

/** Waits between the tries of a busy rename or unlink: doubling from 10 ms, about 3.5 s in all (graceful-fs waits longer, but a store's caller is waiting). */
export const BUSY_RETRY_DELAYS_MS: readonly number[] = [10, 20, 40, 80, 160, 320, 640, 1000, 1200];

/** Whether `e` is worth another try: a Windows sharing violation, not a real refusal. */
export function isBusy(e: unknown, platform: Platform = process.platform): boolean {
  return platform === 'win32' && BUSY_ON_WINDOWS.has((e as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/**
 * Runs `op` (a rename, an unlink, an rm), trying again after BUSY_RETRY_DELAYS_MS while it fails
 * with a Windows sharing violation; any other error, or the last try's, is thrown. Never blocks
 * the event loop: the waits are timers.
 */
export async function retryBusy<T>(op: () => Promise<T>, platform: Platform = process.platform, wait: (ms: number) => Promise<void> = sleep): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (attempt >= BUSY_RETRY_DELAYS_MS.length || !isBusy(e, platform)) throw e;
      await wait(BUSY_RETRY_DELAYS_MS[attempt]);
    }
  }
}

/**
 * retryBusy for synchronous calls, for a worker thread only (the store's file-writing thread):
 * its waits block the calling thread (Atomics.wait), which on the main thread would be the event
 * loop's. The main thread's synchronous writes do not retry: a failure refuses that delivery
 * before its acknowledgement, and the sender tries again.
 */
export function retryBusySync<T>(op: () => T, platform: Platform = process.platform): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return op();
    } catch (e) {
      if (attempt >= BUSY_RETRY_DELAYS_MS.length || !isBusy(e, platform)) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, BUSY_RETRY_DELAYS_MS[attempt]);
    }
  }
}

/**
 * The flags to open a file with so that fsync works on it: Windows flushes only a handle opened
 * for writing (FlushFileBuffers needs GENERIC_WRITE; read-only gives EPERM, and Wine does the
 * same), POSIX any handle. `r+` opens an existing file for writing without creating or
 * truncating it. Directories open read-only (`r`): POSIX refuses to open them for writing, and
 * Windows opens none (fsyncDir skips them there).
 */
export function fsyncOpenFlags(kind: 'file' | 'dir'): 'r+' | 'r' {
  return kind === 'file' ? 'r+' : 'r';
}
