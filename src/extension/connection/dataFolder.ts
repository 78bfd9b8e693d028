// The local server's data folder when `testInbox.local.dataFolder` is not set: the one per
// user that `test-inbox serve` uses too (contract.ts resolveDefaultDataDir), so that a server
// started in a terminal and the editor's serve the same mail. Releases up to 0.2.0 kept it in the
// extension's global storage (`<globalStorage>/server`): that folder is MOVED to the shared one
// once, when the shared one holds nothing yet, so no mail is lost. No vscode import.
//
// Two moves of the default, two rules, applied in this order:
// 1. The per-platform default (%LOCALAPPDATA%\test-inbox on Windows, ~/Library/Application
//    Support/test-inbox on macOS) replaced ~/.local/share/test-inbox there. That folder is
//    never moved: resolveDefaultDataDir keeps using it while the new one holds no data and it
//    does, because a `test-inbox serve` or a test library of an earlier version may still use
//    it (and on Linux the two are one folder). Its result is `shared` below.
// 2. Then the 0.2.0 folder in the extension's storage is moved into `shared`, as before, when
//    `shared` holds nothing. An upgrade from 0.2.0 on Windows or macOS thus lands in the
//    per-platform default, unless ~/.local/share/test-inbox already holds a terminal server's
//    mail (then `shared` is that folder, and the old storage folder stays where it is).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { holdsData, lockHolderLive, readLockHolder } from '../../shared/contract';
import type { Logger } from '../log';

/** Owner only, as the server makes it. */
const DATA_DIR_MODE = 0o700;

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
  if (legacy === undefined || path.resolve(legacy) === path.resolve(shared) || !(holdsData(legacy))) return shared;
  if (holdsData(shared)) {
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
