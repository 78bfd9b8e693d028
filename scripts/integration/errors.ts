// Typed failures of the integration runner. The CLI prints `message` and exits non-zero;
// callers branch on `code`, never on the message text.

export type IntegrationErrorCode =
  /** Neither a VS Code build nor code-server + Chromium can run here. */
  | 'NO_RUNNER'
  /** dist/extension.js or the compiled test entry is missing. */
  | 'NOT_BUILT'
  /** Installing code-server into the cache failed. */
  | 'INSTALL_FAILED'
  /** code-server did not start or exited early. */
  | 'SERVER_FAILED'
  /** Chromium could not be launched or the workbench did not load. */
  | 'BROWSER_FAILED'
  /** The whole run exceeded its outer timeout. */
  | 'TIMEOUT'
  /** The host finished but no test ran (wrong filter, broken entry). */
  | 'NO_TESTS'
  /** At least one test failed. */
  | 'TESTS_FAILED'
  /** The extension host reported a failure without a result (e.g. the entry threw while loading). */
  | 'HOST_FAILED';

export class IntegrationError extends Error {
  readonly code: IntegrationErrorCode;

  constructor(code: IntegrationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IntegrationError';
    this.code = code;
  }

  static is(value: unknown, code?: IntegrationErrorCode): value is IntegrationError {
    return value instanceof IntegrationError && (code === undefined || value.code === code);
  }
}
