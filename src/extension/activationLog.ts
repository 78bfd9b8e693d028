// The log line that reports how long activate() took; `npm run bench` reads it from the
// extension's log file (bench/install.ts). No vscode import, so the bench can import it.

/** Start of the line; the time in milliseconds and " ms." follow. */
export const ACTIVATED_LOG_PREFIX = 'Activated in ';
