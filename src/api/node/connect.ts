// Where the library, the CLI's test commands and `test-inbox mcp` connect: the server URL, the
// API token and the domain, from the caller's options, then the environment, then the local
// server's data dir (its server.json and tokens.json, read with the contract's readers). And
// whether the server is a Test Inbox server (code and link routes, SMTP, Twilio API) or a hosted
// Mailinator-compatible service (list and fetch only). Every failure is an ApiError
// (errors.ts failureOf says what it is to a user); the library maps it to its TestInboxError.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createClient } from '../client';
import { type ConnectOptions, DOMAIN_ENV, SERVER_ENV } from '../connection';
import { ApiError } from '../errors';
import type { InboxApi } from '../types';
import { domainProblem, PRIVATE_DOMAIN } from '../../core/ids';
import { API_TOKEN_ENV, DATA_DIR_ENV, DEFAULT_HOST, DEFAULT_HTTP_PORT, discoveryDataDirs, checkHealthProof, ownershipProblem, readServerFile, readTokensFile, secretFileProblem, SERVER_FILE, type ServerFile, ServerFileProblem, type SavedTokens, TOKENS_FILE, TokensFileProblem } from '../../shared/contract';
import { isLoopbackHost } from '../../core/urls';

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

/** Where the library looks when neither the caller nor server.json names a server. */
export const DEFAULT_SERVER_URL = `http://${DEFAULT_HOST}:${DEFAULT_HTTP_PORT}`;

/** A URL whose host is this machine (core/urls.ts's one loopback check). */
function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** The platform and home directory the default data folder is derived from (tests give others). */
export interface DataDirDefaults {
  platform?: NodeJS.Platform;
  home?: string;
}

/**
 * The first of `dirs` whose server.json exists, with what was read there (the file's fields or
 * why it cannot be used); else the first of `dirs`, with its `server_file_missing`. Several only
 * when no data folder is given: the default and the earlier versions' default (contract.ts
 * discoveryDataDirs), so old and new versions find each other's running server.
 */
async function findServerFile(dirs: string[]): Promise<{ dataDir: string; sf: ServerFile | ServerFileProblem }> {
  const first = { dataDir: dirs[0], sf: await readServerFile(path.join(dirs[0], SERVER_FILE), readText) };
  if (!ServerFileProblem.is(first.sf, 'server_file_missing')) return first;
  for (const dataDir of dirs.slice(1)) {
    const sf = await readServerFile(path.join(dataDir, SERVER_FILE), readText);
    if (!ServerFileProblem.is(sf, 'server_file_missing')) return { dataDir, sf };
  }
  return first;
}

/** The domain a connection reads a bare inbox name in: the caller's, else TEST_INBOX_DOMAIN, else PRIVATE_DOMAIN (every domain). */
export function connectionDomain(o: { domain?: string }, env: NodeJS.ProcessEnv = process.env): string {
  const domain = (o.domain || env[DOMAIN_ENV] || PRIVATE_DOMAIN).toLowerCase();
  const dp = domainProblem(domain);
  if (dp) throw new ApiError('invalid_input', `domain ${JSON.stringify(domain)}: ${dp}`, { field: 'domain' });
  return domain;
}

/**
 * The connection of a call. Which server, and whether it may have a token:
 * - a URL the caller names (option, TEST_INBOX_SERVER) is used as named; a token the caller
 *   gives goes to it (that is how a hosted service is reached);
 * - else the URL of the data dir's server.json, only once that server proves it serves the data
 *   dir (HMAC of the file's key; then tokens.json may be used too). A URL that fails its proof is
 *   not used at all (a stale file, another program on the port);
 * - else `fallbackUrl` (127.0.0.1:2580), which gets a token only if it proves it is a Test Inbox
 *   server that takes that token (the identity check's tokenProof, which sends no token).
 * With no token at all, a server that does not answer is `unreachable`, not `unauthorized`.
 * The data dir: the caller's, else TEST_INBOX_DATA_DIR, else the per-user default, where
 * server.json is looked for in resolveDefaultDataDir's folder, then in the earlier versions'
 * (findServerFile). `where` is for tests: another platform and home than this machine's.
 */
export async function connect(o: ConnectOptions, env: NodeJS.ProcessEnv = process.env, fallbackUrl = DEFAULT_SERVER_URL, where: DataDirDefaults = {}): Promise<Connection> {
  const given = o.dataDir || env[DATA_DIR_ENV];
  const domain = connectionDomain(o, env);
  const named = trimUrl(o.server || env[SERVER_ENV] || undefined);
  const { dataDir, sf } = await findServerFile(given ? [path.resolve(given)] : discoveryDataDirs(env, where.platform, where.home));
  const serverFile = path.join(dataDir, SERVER_FILE);
  const running = ServerFileProblem.is(sf) ? undefined : sf;
  const runningUrl = trimUrl(running?.http);
  let baseUrl = named ?? runningUrl ?? trimUrl(fallbackUrl)!;
  // Why the data dir's server was not proven at baseUrl (then its tokens are not used).
  let unproven: string | undefined;
  let proven = false;
  if (running) {
    unproven = baseUrl === runningUrl ? await proofProblem(baseUrl, running, serverFile, o.signal) : `its server listens at ${running.http}, not ${baseUrl}`;
    proven = unproven === undefined;
    // A URL taken from server.json that fails its proof is not used at all.
    if (!proven && named === undefined) baseUrl = trimUrl(fallbackUrl)!;
  }
  let savedTokens: SavedTokens = {};
  if (proven) {
    const tokensFile = path.join(dataDir, TOKENS_FILE);
    unproven = await tokensFileProblem(tokensFile);
    const t = unproven === undefined ? await readTokensFile(tokensFile, readText) : undefined;
    if (t !== undefined && !TokensFileProblem.is(t)) savedTokens = t;
  }
  const token = o.token || env[API_TOKEN_ENV] || savedTokens.apiToken;
  const notUsed = unproven && !proven && named === undefined ? `the server named in ${serverFile} was not used: ${unproven}` : unproven ? `the data dir's ${TOKENS_FILE} was not used: ${unproven}` : '';
  // The one place a "cannot reach" of a server nobody named is said: where the server was looked
  // for, and how to look elsewhere (a server started with another data folder writes its server.json there).
  const lookedIn = named === undefined && !proven ? `looked for a running server in ${dataDir}: for a server started with another data folder, pass --data-dir (dataDir option) or set ${DATA_DIR_ENV}` : '';
  const unreachableNote = [notUsed, lookedIn].filter(Boolean).join('; ');
  if (!token) {
    // Nothing answering is the first thing to fix: it is said before the missing token.
    await answers(baseUrl, o.signal, unreachableNote);
    throw new ApiError(
      'unauthorized',
      `no API token for ${baseUrl}: pass --token (token option) or set ${API_TOKEN_ENV}` +
        (notUsed ? `; ${notUsed}` : isLoopbackUrl(baseUrl) ? `, or run the server with the data dir ${dataDir}, whose ${TOKENS_FILE} holds it` : ''),
      { field: 'apiToken' },
    );
  }
  const api = createClient({ baseUrl, apiToken: token, retries: 1 });
  const identify = (): Promise<boolean> =>
    // A Test Inbox server proves it takes the token before the token is sent; the hosted
    // service has no /healthz of ours. A refused token or no answer at all is an error.
    api.identify({ signal: o.signal }).then(
      (id) => id.kind === 'test-inbox',
      (e: unknown) => {
        throw withNote(e, unreachableNote);
      },
    );
  let kind: Promise<boolean> | undefined;
  if (named === undefined && !proven) {
    // Nobody named this server and it proved nothing: the token goes to it only once it proves
    // it is a Test Inbox server that takes that token. Another program on the port gets none.
    kind = identify();
    try {
      if (!(await kind)) {
        throw new ApiError(
          'unauthorized',
          `the server at ${baseUrl} did not prove it is a Test Inbox server that takes this API token, so the token was not sent${notUsed ? ` (${notUsed})` : ''}. ` +
            `If it is the service you mean, name it: --server ${baseUrl} (${SERVER_ENV})`,
          { field: 'apiToken' },
        );
      }
    } catch (e) {
      await api.dispose();
      throw e;
    }
  }
  return {
    api,
    baseUrl,
    domain,
    dataDir,
    serverFile: proven ? running : undefined,
    savedTokens,
    isTestInbox: () => (kind ??= identify()),
    close: () => api.dispose(),
  };
}

/** A URL without its trailing slashes; undefined stays undefined. */
function trimUrl(url: string | undefined): string | undefined {
  return url?.replace(/\/+$/, '');
}

/** Resolves when something answers HTTP at `baseUrl` (no token sent); rejects `unreachable` otherwise. */
async function answers(baseUrl: string, signal: AbortSignal | undefined, note: string): Promise<void> {
  const api = createClient({ baseUrl, retries: 0 });
  try {
    await api.identify({ signal });
  } catch (e) {
    if (ApiError.is(e, 'network') || ApiError.is(e, 'timeout')) throw withNote(e, note);
    if (ApiError.is(e, 'cancelled')) throw e;
  } finally {
    await api.dispose();
  }
}

/** A `network` or `timeout` error (no answer) with `note` (why the data dir's server was not used, where it was looked for) added; any other error as it is. */
function withNote(err: unknown, note: string): unknown {
  if (!note || !(ApiError.is(err, 'network') || ApiError.is(err, 'timeout'))) return err;
  return new ApiError(err.code, `${err.message} (${note})`, { status: err.status, cause: err.cause });
}

/** Why tokens.json must not be used (contract.ts's ownershipProblem: another user's, writable by others, a link), or undefined. */
async function tokensFileProblem(file: string): Promise<string | undefined> {
  if (typeof process.getuid !== 'function') return undefined;
  try {
    return ownershipProblem(file, await fs.lstat(file), process.getuid());
  } catch {
    return undefined; // missing or unreadable: readTokensFile says so
  }
}

/** Longest wait for the identity check of a local server. */
const PROOF_TIMEOUT_MS = 5_000;

/**
 * Why the server at `baseUrl` is not proven to be the data dir's running server, or
 * undefined when it is: server.json is private to its owner, and the server at the URL it
 * names answers a random challenge with the HMAC of the file's key (docs/architecture.md).
 */
async function proofProblem(baseUrl: string, sf: ServerFile, file: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    const unsafe = await secretFileProblem(file);
    if (unsafe !== undefined) return `${SERVER_FILE} ${unsafe}`;
  } catch (e) {
    return `cannot read ${SERVER_FILE}: ${(e as Error).message}`;
  }
  const timeout = AbortSignal.timeout(PROOF_TIMEOUT_MS);
  const check = await checkHealthProof(baseUrl, sf.key, signal ? AbortSignal.any([signal, timeout]) : timeout);
  if (check.unanswered !== undefined) return `the server at ${baseUrl} did not answer the identity check (${check.unanswered})`;
  return check.proven ? undefined : `the server at ${baseUrl} could not prove it serves that data dir`;
}
