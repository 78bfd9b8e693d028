// Where a surface connects: the options and environment names every surface reads its server
// from (node/connect.ts finds the server with them), and the split of `name@domain`. No Node import.
import { ApiError } from './errors';
import { readAddress } from '../core/ids';

/** The server URL, when not given. */
export const SERVER_ENV = 'TEST_INBOX_SERVER';
/** The domain, when not given. */
export const DOMAIN_ENV = 'TEST_INBOX_DOMAIN';
/** The SMTP address `host:port` of send-mail, when not given. */
export const SMTP_ENV = 'TEST_INBOX_SMTP';

/** Where a surface connects (the library's ConnectionOptions has the same fields). Each has an environment twin. */
export interface ConnectOptions {
  /** Base URL of the server (env TEST_INBOX_SERVER). */
  server?: string;
  /** API token (env TEST_INBOX_API_TOKEN). */
  token?: string;
  /** Domain of the inboxes (env TEST_INBOX_DOMAIN), default `private`. */
  domain?: string;
  /** Data dir of the local server (env TEST_INBOX_DATA_DIR). */
  dataDir?: string;
  signal?: AbortSignal;
}

/** `name` or `name@domain` → the inbox and the domain (the address's, else `fallback`). A bad one rejects `invalid_input`. */
export function splitInbox(address: string, fallback: string): { inbox: string; domain: string } {
  const read = readAddress(address, { defaultDomain: fallback, allowAll: true });
  if (!('problem' in read)) return read;
  const field = read.part === 'domain' ? 'domain' : 'inbox';
  throw new ApiError('invalid_input', `${field === 'domain' ? 'domain of' : 'inbox'} ${JSON.stringify(address)}: ${read.problem}`, { field });
}
