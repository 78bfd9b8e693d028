// The one log of the extension, with every known token redacted. No vscode import: the sink
// is a LogOutputChannel in the host and an array in tests.
import { redact } from '../core/redact';

interface LogSink {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export class Logger implements LogSink {
  private readonly secrets = new Set<string>();

  constructor(private readonly sink: LogSink) {}

  /** Every later line has this value replaced by ***. */
  addSecret(secret: string | undefined): void {
    if (secret) this.secrets.add(secret);
  }

  private clean(message: string): string {
    return redact(message, this.secrets);
  }

  trace(message: string): void {
    this.sink.trace(this.clean(message));
  }
  debug(message: string): void {
    this.sink.debug(this.clean(message));
  }
  info(message: string): void {
    this.sink.info(this.clean(message));
  }
  warn(message: string): void {
    this.sink.warn(this.clean(message));
  }
  error(message: string): void {
    this.sink.error(this.clean(message));
  }
}

/** A short description of anything thrown, for the log. */
export function errorText(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${e.message} [${code}]` : e.message;
  }
  return String(e);
}
