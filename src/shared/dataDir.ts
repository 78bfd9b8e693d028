// Where `test-inbox` keeps its data when no --data-dir is given: `serve` writes there, and
// the test commands and the library read its tokens and server files from there.
/** The data dir flag's environment twin, for the test commands and the library. */
export const DATA_DIR_ENV = 'TEST_INBOX_DATA_DIR';

/** `$XDG_DATA_HOME/test-inbox`, else `~/.local/share/test-inbox` (the contract's, shared with the extension). */
export { defaultDataDir } from './contract';
