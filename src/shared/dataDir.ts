// Where `test-inbox` keeps its data when no --data-dir is given: `serve` writes there, and
// the test commands and the library read its tokens and server files from there.
import * as os from 'node:os';
import * as path from 'node:path';

/** The data dir flag's environment twin, for the test commands and the library. */
export const DATA_DIR_ENV = 'TEST_INBOX_DATA_DIR';

/** `$XDG_DATA_HOME/test-inbox`, else `~/.local/share/test-inbox`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  return xdg && path.isAbsolute(xdg) ? path.join(xdg, 'test-inbox') : path.join(os.homedir(), '.local', 'share', 'test-inbox');
}
