// Exit codes of `test-inbox serve`, shared with what starts it (the extension, `npm start`).
// A module of its own, with no imports, so importing it pulls nothing of the server in.

/** Any other failure to start. */
export const EXIT_FAILURE = 1;
/** A port is taken (the extension then attaches to a Test Inbox server on it). */
export const EXIT_PORT_IN_USE = 2;
/** Another server uses the data dir (the extension then waits for it to answer and attaches). */
export const EXIT_DATA_DIR_IN_USE = 3;
/** A bad command line (sysexits EX_USAGE). */
export const EXIT_USAGE = 64;
