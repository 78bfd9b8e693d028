// The library's connection: src/api/node/connect.ts finds the server and the token (the one
// discovery every surface shares); here its failures become the library's TestInboxError, and
// the library's own options (the wait's timeout) are read.
import { splitInbox as splitAddress } from '../api/connection';
import { failureOf } from '../api/errors';
import { connect as connectApi, type Connection, type DataDirDefaults, DEFAULT_SERVER_URL } from '../api/node/connect';
import { parseDuration } from '../core/duration';
import { type ConnectionOptions, TestInboxError } from './types';

export { DOMAIN_ENV, SERVER_ENV, SMTP_ENV } from '../api/connection';
export { type Connection, type DataDirDefaults, DEFAULT_SERVER_URL } from '../api/node/connect';

/** How long a wait lasts when no timeout is given: as long as the server holds one long poll. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Longest wait accepted: an hour; a test that waits longer for a mail has failed. */
export const MAX_TIMEOUT_MS = 3_600_000;

/** The connection of a call (api/node/connect.ts), failing with a TestInboxError. */
export async function connect(o: ConnectionOptions, env: NodeJS.ProcessEnv = process.env, fallbackUrl = DEFAULT_SERVER_URL, where: DataDirDefaults = {}): Promise<Connection> {
  try {
    return await connectApi(o, env, fallbackUrl, where);
  } catch (e) {
    throw toTestInboxError(e);
  }
}

/** `name` or `name@domain` → the inbox and the domain (api/connection.ts), failing with a TestInboxError `bad_input`. */
export function splitInbox(address: string, fallback: string): { inbox: string; domain: string } {
  try {
    return splitAddress(address, fallback);
  } catch (e) {
    throw toTestInboxError(e);
  }
}

/**
 * A timeout option in ms (a number of ms, or a duration string), default DEFAULT_TIMEOUT_MS.
 * `name`: what a refusal calls it (the CLI's `--wait`).
 */
export function timeoutMs(v: number | string | undefined, name = 'timeout'): number {
  if (v === undefined) return DEFAULT_TIMEOUT_MS;
  const ms = typeof v === 'number' ? v : parseDuration(v);
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > MAX_TIMEOUT_MS) {
    throw new TestInboxError('bad_input', `${name} must be ms or a duration such as 30s or 2m, at most ${MAX_TIMEOUT_MS / 60_000} minutes (got ${JSON.stringify(v)})`);
  }
  return ms;
}

/** Every failure as a TestInboxError: the client's typed errors mapped by code (api/errors.ts failureOf). */
export function toTestInboxError(e: unknown): TestInboxError {
  if (TestInboxError.is(e)) return e;
  const f = failureOf(e);
  return new TestInboxError(f.code, f.message);
}
