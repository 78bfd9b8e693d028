// The local server's data folder when `testInbox.local.dataFolder` is not set: the one per
// user that `test-inbox serve` uses too (contract.ts defaultDataDir), so that a server started
// in a terminal and the editor's serve the same mail. Releases up to 0.2.0 kept it in the
// extension's global storage (`<globalStorage>/server`): that folder is MOVED to the shared one
// once, when the shared one holds nothing yet, so no mail is lost. No vscode import.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { lockHolderLive, readLockHolder } from '../shared/contract';
import type { Logger } from './log';

/** Owner only, as the server makes it. */
const DATA_DIR_MODE = 0o700;

/** Whether `dir` exists and holds anything. */
async function holdsData(dir: string): Promise<boolean> {
  try {
    return (await fs.readdir(dir)).length > 0;
  } catch {
    return false;
  }
}

/** Whether a live server holds the data folder's lock (a window of an older release runs a server on it): contract.ts's one rule. */
async function inUse(dir: string): Promise<boolean> {
  try {
    const holder = await readLockHolder(dir);
    return holder !== undefined && (await lockHolderLive(dir, holder));
  } catch {
    return false;
  }
}

/**
 * The data folder to use by default: `shared` (the per-user default), after moving `legacy`
 * (the old default in the extension's storage) there when it holds data and `shared` does not.
 * Where the move cannot be made now, `legacy` is used as it is (read, never lost): while a
 * server of an older window runs on it, or where the rename fails (another file system). When
 * both hold data, `shared` is used and the log names the old folder.
 */
export async function defaultLocalDataDir(legacy: string | undefined, shared: string, log: Logger): Promise<string> {
  if (legacy === undefined || path.resolve(legacy) === path.resolve(shared) || !(await holdsData(legacy))) return shared;
  if (await holdsData(shared)) {
    log.warn(`The local server uses ${shared}, shared with test-inbox serve. Mail of earlier versions stays in ${legacy}: set testInbox.local.dataFolder to it to read it there.`);
    return shared;
  }
  if (await inUse(legacy)) {
    log.info(`A server of another window still runs on ${legacy}; using that folder until it stops, then its mail moves to ${shared}.`);
    return legacy;
  }
  try {
    await fs.mkdir(path.dirname(shared), { recursive: true, mode: DATA_DIR_MODE });
    // An empty folder (made by `serve --help`? by hand) is replaced; rename refuses a full one.
    await fs.rmdir(shared).catch(() => undefined);
    await fs.rename(legacy, shared);
  } catch (e) {
    log.warn(`Could not move the local server's mail from ${legacy} to ${shared} (${(e as Error).message}); using ${legacy}.`);
    return legacy;
  }
  log.info(`Moved the local server's mail from ${legacy} to ${shared}, the data folder test-inbox serve uses too: one local inbox per user.`);
  return shared;
}
