// Connecting to a hosted server (a URL the user set): whether anything answers there, its API
// token from SecretStorage, and whether it is a Test Inbox server (which proves it takes the
// token before it is sent) or the hosted service. No vscode import.
import { ApiError, networkError } from '../../api/errors';
import type { InboxApi, ServerIdentity } from '../../api/types';
import type { TokenStore } from '../config/secrets';
import type { Logger } from '../log';

/** A server that answers at all answers a bare GET within this. */
const REACHABILITY_TIMEOUT_MS = 5000;

/** Whether a failure means that nothing answers at the server's address (as opposed to an answer we did not like). */
export function isNetworkFailure(e: unknown): boolean {
  return ApiError.is(e, 'network');
}

/**
 * Whether anything answers HTTP at `baseUrl`: a bare GET with no token (it goes only to a URL
 * the user chose and confirmed). Any answer counts; undefined when it answered, else why not.
 */
export async function unreachableReason(baseUrl: string, timeoutMs = REACHABILITY_TIMEOUT_MS): Promise<ApiError | undefined> {
  try {
    const res = await fetch(`${baseUrl}/`, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return undefined;
  } catch (e) {
    if ((e as { name?: string }).name === 'TimeoutError') return new ApiError('timeout', `The server at ${baseUrl} did not answer within ${Math.round(timeoutMs / 1000)} s.`);
    return networkError(e, baseUrl, []);
  }
}

export function noTokenError(baseUrl: string): ApiError {
  return new ApiError('unauthorized', `No API token is set for ${baseUrl}. Set the API token to see its inboxes.`);
}

/** A connected hosted server: its client, and whether it proved to be a Test Inbox server. */
interface RemoteServer {
  api: InboxApi;
  testInbox: boolean;
  defaultDomain?: string;
}

/**
 * Connects to the confirmed URL `baseUrl`: checks that something answers before a token is read
 * or sent (a missing token must not hide that nothing listens), reads its API token, and asks it
 * who it is.
 */
export async function connectRemote(baseUrl: string, deps: { tokens: TokenStore; log: Logger; createApi(opts: { baseUrl: string; apiToken?: string }): InboxApi }): Promise<RemoteServer> {
  const away = await unreachableReason(baseUrl);
  if (away) throw away;
  const apiToken = await deps.tokens.get('api', baseUrl);
  deps.log.addSecret(apiToken);
  deps.log.addSecret(await deps.tokens.get('webhook', baseUrl));
  if (!apiToken) {
    throw noTokenError(baseUrl);
  }
  const api = deps.createApi({ baseUrl, apiToken });
  // Before the token goes anywhere: a Test Inbox server proves it takes it (a wrong one is refused
  // here, unsent); anything else is the hosted service, which gets the token the user set for it.
  let id: ServerIdentity;
  try {
    id = await api.identify();
  } catch (e) {
    // A client that proved nothing is closed before the failure is told.
    await api.dispose().catch(() => undefined);
    throw e;
  }
  if (id.kind === 'test-inbox') {
    deps.log.info(`Using the Test Inbox server ${baseUrl} (version ${id.health.version}); it proved it takes this API token. Its push stream and domain list are used.`);
    return { api, testInbox: true, defaultDomain: id.health.defaultDomain };
  }
  deps.log.info(`Using the hosted server ${baseUrl}.`);
  return { api, testInbox: false };
}
