// One store per data dir: `<dir>/.lock` holds the process id of the server using it. Two
// servers on one folder (the extension's and one started in a terminal, say) would append
// to the same log and journal and remove each other's files; the second is refused with a
// message that names the first. A lock left by a process that is gone (a crash, SIGKILL, a
// restarted container) is taken over. A pid alone does not prove that: Windows reuses pids within
// seconds, so the holder also keeps the lock file's time fresh (its heartbeat), and contract.ts
// lockHolderLive is the one rule that tells a live holder from a stale lock.

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ownershipProblemOf } from '../../serverFiles';
import { PRIVATE_FILE_MODE } from '../../../shared/privateFile';
import { retryBusy } from '../../../shared/portableFs';
import { LOCK_FILE, LOCK_HEARTBEAT_MS, lockHolderLive, processAlive, readLockHolder, TOKENS_FILE } from '../../../shared/contract';
import { StoreError } from '../errors';

export { LOCK_FILE, processAlive };

/** Data dirs this process holds, so a second store in the same process is refused too. */
const held = new Set<string>();

async function holder(file: string): Promise<number | undefined> {
  try {
    const pid = Number((await fs.readFile(file, 'utf8')).trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function inUse(dir: string, file: string, pid: number | undefined): StoreError {
  const who = pid === undefined ? 'another process' : pid === process.pid ? 'this process' : `process ${pid}`;
  return new StoreError(
    'locked',
    `the data dir ${dir} is in use by another Test Inbox server (${who}); stop it, or choose another data dir (if no server runs, delete ${file})`,
  );
}

/** Takes the data dir's lock; resolves a function that releases it. Rejects with StoreError locked when a live process holds it. */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const file = path.join(dir, LOCK_FILE);
  if (held.has(dir)) throw inUse(dir, file, process.pid);
  // Before anything is written into it (this lock is the first write of every start): a data
  // folder or tokens file of another user, or one others can write, is refused, not used.
  const unsafe = (await ownershipProblemOf(dir, 'folder')) ?? (await ownershipProblemOf(path.join(dir, TOKENS_FILE), 'file'));
  if (unsafe !== undefined) throw new StoreError('unsafe', unsafe);
  const mine = `${process.pid}\n`;
  try {
    await fs.writeFile(file, mine, { flag: 'wx', mode: PRIVATE_FILE_MODE });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const was = await readLockHolder(dir);
    if (was !== undefined && was.pid !== process.pid && (await lockHolderLive(dir, was))) throw inUse(dir, file, was.pid);
    // Stale: replace it atomically, then check that a concurrent starter did not do the same after us.
    const tmp = `${file}.${process.pid}`;
    await fs.writeFile(tmp, mine, { mode: PRIVATE_FILE_MODE });
    await retryBusy(() => fs.rename(tmp, file));
    const now = await holder(file);
    if (now !== process.pid) throw inUse(dir, file, now);
  }
  held.add(dir);
  // The heartbeat: the lock's time stays within LOCK_STALE_MS while this store holds it. Unref'd:
  // it keeps no process alive.
  const beat = setInterval(() => {
    const t = new Date();
    fs.utimes(file, t, t).catch(() => undefined);
  }, LOCK_HEARTBEAT_MS);
  beat.unref();
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(beat);
    held.delete(dir);
    // Only our own lock: never one a later server took over.
    if ((await holder(file).catch(() => undefined)) === process.pid) await retryBusy(() => fs.rm(file, { force: true }));
  };
}
