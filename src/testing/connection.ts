// Where the library and the CLI's test commands connect: the server URL, the API token and the
// domain, from the caller's options, then the environment, then the local server's data dir
// (its server.json and tokens.json, read with the contract's readers). And whether the server
// is a Test Inbox server (code and link routes, SMTP, Twilio API) or a hosted Mailinator-
// compatible service (list and fetch only).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ApiError, createClient, type InboxApi } from '../api';
import { domainProblem, inboxNameProblem, normalizeInbox, PRIVATE_DOMAIN } from '../core/ids';
import { parseDuration } from '../core/duration';
import { API_TOKEN_ENV, DEFAULT_HOST, DEFAULT_HTTP_PORT, checkHealthProof, readServerFile, readTokensFile, SERVER_FILE, type ServerFile, ServerFileProblem, type SavedTokens, TOKENS_FILE, TokensFileProblem } from '../server/contract';
import { DATA_DIR_ENV, defaultDataDir } from '../server/dataDir';
import { type ConnectionOptions, TestInboxError } from './types';

/** The server URL, when not given. */
export const SERVER_ENV = 'TEST_INBOX_SERVER';
/** The domain, when not given. */
export const DOMAIN_ENV = 'TEST_INBOX_DOMAIN';
/** The SMTP address `host:port` of send-mail, when not given. */
export const SMTP_ENV = 'TEST_INBOX_SMTP';
/** How long a wait lasts when no timeout is given: as long as the server holds one long poll. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Longest wait accepted: an hour; a test that waits longer for a mail has failed. */
export const MAX_TIMEOUT_MS = 3_600_000;

export interface Connection {
  api: InboxApi;
  baseUrl: string;
  domain: string;
  dataDir: string;
  /** The running local server's file, when the URL is that server's. */
  serverFile?: ServerFile;
  /** The data dir's tokens, used only once the server proved it is the data dir's running server. */
  savedTokens: SavedTokens;
  /** Is the server Test Inbox (true) or a hosted service (false)? Asked once, by /healthz. */
  isTestInbox(): Promise<boolean>;
  close(): Promise<void>;
}

const readText = (f: string): Promise<string> => fs.readFile(f, 'utf8');

/** A host that is this machine: only then does the data dir's token go with a request. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

export async function connect(o: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const dataDir = path.resolve(o.dataDir || env[DATA_DIR_ENV] || defaultDataDir(env));
  const sf = await readServerFile(path.join(dataDir, SERVER_FILE), readText);
  const running = ServerFileProblem.is(sf) ? undefined : sf;
  const baseUrl = (o.server || env[SERVER_ENV] || running?.http || `http://${DEFAULT_HOST}:${DEFAULT_HTTP_PORT}`).replace(/\/+$/, '');
  const local = isLoopbackUrl(baseUrl);
  const given = o.token || env[API_TOKEN_ENV];
  // The data dir's tokens go only to the server that proves it serves that data dir (as the
  // extension attaches): another program on a local port gets none.
  let savedTokens: SavedTokens = {};
  let unproven: string | undefined;
  if (local && running) {
    const t = await readTokensFile(path.join(dataDir, TOKENS_FILE), readText);
    if (!TokensFileProblem.is(t)) {
      unproven = await proofProblem(baseUrl, running, path.join(dataDir, SERVER_FILE), o.signal);
      if (unproven === undefined) savedTokens = t;
    }
  }
  const token = given || savedTokens.apiToken;
  const domain = (o.domain || env[DOMAIN_ENV] || PRIVATE_DOMAIN).toLowerCase();
  const dp = domain === PRIVATE_DOMAIN ? undefined : domainProblem(domain);
  if (dp) throw new TestInboxError('badInput', `domain ${JSON.stringify(domain)}: ${dp}`);
  if (!token) {
    throw new TestInboxError(
      'unauthorized',
      `no API token for ${baseUrl}: pass --token (token option) or set ${API_TOKEN_ENV}` +
        (unproven ? `; the data dir's ${TOKENS_FILE} was not used: ${unproven}` : local ? `, or run the server with the data dir ${dataDir}, whose ${TOKENS_FILE} holds it` : ''),
    );
  }
  let api: InboxApi;
  try {
    api = createClient({ baseUrl, apiToken: token, retries: 1 });
  } catch (e) {
    throw toTestInboxError(e);
  }
  let kind: Promise<boolean> | undefined;
  return {
    api,
    baseUrl,
    domain,
    dataDir,
    serverFile: running && running.http.replace(/\/+$/, '') === baseUrl ? running : undefined,
    savedTokens,
    isTestInbox: () =>
      // A Test Inbox server proves it takes the token before the token is sent; the hosted
      // service has no /healthz of ours. A refused token or no answer at all is an error.
      (kind ??= api.identify({ signal: o.signal }).then(
        (id) => id.kind === 'test-inbox',
        (e: unknown) => {
          throw toTestInboxError(e);
        },
      )),
    close: () => api.dispose(),
  };
}

/** Longest wait for the identity check of a local server. */
const PROOF_TIMEOUT_MS = 5_000;

/**
 * Why the server at `baseUrl` is not proven to be the data dir's running server, or
 * undefined when it is: server.json names this URL, is private to its owner, and the server
 * answers a random challenge with the HMAC of the file's key (docs/architecture.md).
 */
async function proofProblem(baseUrl: string, sf: ServerFile, file: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  if (sf.http.replace(/\/+$/, '') !== baseUrl) return `its server listens at ${sf.http}, not ${baseUrl}`;
  try {
    const st = await fs.stat(file);
    if ((st.mode & 0o077) !== 0 || (typeof process.getuid === 'function' && st.uid !== process.getuid())) return `${SERVER_FILE} is readable by other users or not yours`;
  } catch (e) {
    return `cannot read ${SERVER_FILE}: ${(e as Error).message}`;
  }
  const timeout = AbortSignal.timeout(PROOF_TIMEOUT_MS);
  const check = await checkHealthProof(baseUrl, sf.key, signal ? AbortSignal.any([signal, timeout]) : timeout);
  if (check.unanswered !== undefined) return `the server at ${baseUrl} did not answer the identity check (${check.unanswered})`;
  return check.proven ? undefined : `the server at ${baseUrl} could not prove it serves that data dir`;
}

/** `name` or `name@domain` → the inbox and the domain (the address's, else `fallback`). */
export function splitInbox(address: string, fallback: string): { inbox: string; domain: string } {
  const at = address.lastIndexOf('@');
  const inbox = normalizeInbox(at < 0 ? address : address.slice(0, at));
  const domain = at < 0 ? fallback : address.slice(at + 1).toLowerCase();
  const ip = inboxNameProblem(inbox);
  if (ip) throw new TestInboxError('badInput', `inbox ${JSON.stringify(address)}: ${ip}`);
  const dp = domain === PRIVATE_DOMAIN ? undefined : domainProblem(domain);
  if (dp) throw new TestInboxError('badInput', `domain of ${JSON.stringify(address)}: ${dp}`);
  return { inbox, domain };
}

/** A timeout option in ms (a number of ms, or a duration string), default DEFAULT_TIMEOUT_MS. */
export function timeoutMs(v: number | string | undefined): number {
  if (v === undefined) return DEFAULT_TIMEOUT_MS;
  const ms = typeof v === 'number' ? v : parseDuration(v);
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > MAX_TIMEOUT_MS) {
    throw new TestInboxError('badInput', `timeout must be ms or a duration such as 30s or 2m, at most ${MAX_TIMEOUT_MS / 60_000} minutes (got ${JSON.stringify(v)})`);
  }
  return ms;
}

/** Every failure as a TestInboxError: the client's typed errors mapped by code. */
export function toTestInboxError(e: unknown): TestInboxError {
  if (TestInboxError.is(e)) return e;
  if (ApiError.is(e)) {
    switch (e.code) {
      case 'unauthorized':
        return new TestInboxError('unauthorized', e.message);
      case 'network':
      case 'timeout':
        return new TestInboxError('unreachable', e.message);
      case 'invalidInput':
      case 'badRequest':
        return new TestInboxError('badInput', e.message);
      case 'cancelled':
        return new TestInboxError('cancelled', e.message);
      default:
        return new TestInboxError('server', e.message);
    }
  }
  return new TestInboxError('server', e instanceof Error ? e.message : String(e));
}
