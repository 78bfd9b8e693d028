// What a failure of the PostgreSQL store's database means to its callers: unreachable now
// (db_unreachable, retry later), a refused login (db_auth), or a failed statement (IO). Messages
// name the database by its URL without the password.
import { StoreError } from '../errors';

/** SQLSTATE classes and socket errors that mean "the database is not reachable now", not "the query is wrong". */
export function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    // 57014: a statement cancelled by statement_timeout (the query bound).
    if (/^(08|57P|53)/.test(code) || code === '57014') return true;
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EPIPE|EHOSTUNREACH|ENETUNREACH)$/.test(code)) return true;
  }
  const msg = e instanceof Error ? e.message : '';
  // 'timeout exceeded when trying to connect': every pooled connection stayed busy (pg-pool);
  // 'Query read timeout': a statement past its bound (query_timeout).
  return /Connection terminated|connection timeout|timeout expired|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(msg);
}

/** The URL without its password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the database URL';
  }
}

/** Why the store at `where` could not open. */
export function openFailure(e: unknown, where: string): StoreError {
  if (StoreError.is(e)) return e;
  const code = (e as { code?: unknown }).code;
  const why = (e as Error).message;
  if (code === '28P01' || code === '28000') return new StoreError('db_auth', `the database at ${where} refused the login: ${why}`, { cause: e });
  if (code === '3D000') return new StoreError('db_unreachable', `the database at ${where} does not exist: ${why}`, { cause: e });
  if (isUnavailable(e)) return new StoreError('db_unreachable', `cannot reach the database at ${where}: ${why || String(code)}`, { cause: e });
  return new StoreError('io', `cannot open the store at ${where}: ${why}`, { cause: e });
}

/** A failed statement of an open store, as the StoreError its callers branch on. */
export function queryFailure(e: unknown, where: string): StoreError {
  if (StoreError.is(e)) return e;
  if (isUnavailable(e)) return new StoreError('db_unreachable', `the database at ${where} is unreachable: ${(e as Error).message}`, { cause: e });
  return new StoreError('io', `the database at ${where} failed: ${(e as Error).message}`, { cause: e });
}
