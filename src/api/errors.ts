// Typed errors of the API client. Every failure a caller can see is an ApiError with a
// `code` to branch on (never the message, never `instanceof` alone: a tag survives
// duplicated bundles) and a message a user can act on. Tokens never appear in one.

export type ApiErrorCode =
  | 'unauthorized'
  | 'not_found'
  | 'rate_limited'
  | 'server'
  | 'network'
  | 'timeout'
  | 'protocol'
  | 'cancelled'
  | 'bad_request'
  | 'invalid_input';

/** Registered symbol, so two copies of this module (two bundles) recognise each other's errors. */
const API_ERROR_TAG = Symbol.for('test-inbox.api.ApiError');

/** Longest server message quoted in an error: enough for any sensible JSON `message`, not a whole HTML page. */
const MAX_QUOTED_SERVER_MESSAGE = 300;

interface ApiErrorOptions {
  /** HTTP status, when the server answered. */
  status?: number;
  /** How long the server asked to wait (429 Retry-After), in ms. */
  retryAfterMs?: number;
  /**
   * For `protocol` and `invalid_input`: the field or argument at fault, e.g. `msgs[3].time`.
   * For `unauthorized`: the credential to fix, `apiToken` or `webhookToken`.
   */
  field?: string;
  /** The server's JSON `message`, when it sent one (already redacted). */
  serverMessage?: string;
  /** A sanitized summary of the underlying error (never the raw error object: it may carry request data). */
  cause?: { name?: string; code?: string; message: string };
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly field?: string;
  readonly serverMessage?: string;
  declare readonly cause?: { name?: string; code?: string; message: string };
  readonly [API_ERROR_TAG] = true;

  constructor(code: ApiErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.code = code;
    if (options.status !== undefined) this.status = options.status;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.field !== undefined) this.field = options.field;
    if (options.serverMessage !== undefined) this.serverMessage = options.serverMessage;
    if (options.cause !== undefined) Object.defineProperty(this, 'cause', { value: options.cause, enumerable: false });
  }

  /** True when `e` is an ApiError (from any copy of this module), optionally of the given code. */
  static is(e: unknown, code?: ApiErrorCode): e is ApiError {
    if (typeof e !== 'object' || e === null) return false;
    if ((e as Record<symbol, unknown>)[API_ERROR_TAG] !== true) return false;
    return code === undefined || (e as ApiError).code === code;
  }
}

/** Replaces every occurrence of each secret in `text` (secrets shorter than 4 characters are still replaced). */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length > 0) out = out.split(s).join('[redacted]');
  }
  return out;
}

/**
 * Parses a Retry-After header: delay-seconds or an HTTP date. Returns ms (≥ 0) or
 * undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const trimmed = v.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Picks a human message out of an error body: JSON `message` or `error`, else nothing (HTML pages are not quoted). */
export function serverMessageOf(bodyText: string): string | undefined {
  const t = bodyText.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(t);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const rec = parsed as Record<string, unknown>;
    for (const key of ['message', 'error', 'msg']) {
      const m = rec[key];
      if (typeof m === 'string' && m.trim() !== '') return truncate(m.trim(), MAX_QUOTED_SERVER_MESSAGE);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

function truncate(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The hosted service answers a bad token with 400 and a message like "invalid token" instead of 401. */
const TOKEN_COMPLAINT_RE =
  /\b(?:invalid|bad|missing|unknown|expired|wrong|incorrect|no)\s+(?:api[ _-]?)?(?:token|key)\b|\b(?:token|api[ _-]?key)\b[^.]{0,80}?\b(?:invalid|not valid|required|missing|expired|incorrect|rejected)\b|\b(?:unauthori[sz]ed|not authori[sz]ed|forbidden)\b/i;
/** JSON parser messages mention "token" too; they are never about credentials. */
const JSON_TOKEN_RE = /unexpected token|json/i;

/** Whether a 400 message is really a complaint about the credential. */
export function isTokenComplaint(message: string): boolean {
  return TOKEN_COMPLAINT_RE.test(message) && !JSON_TOKEN_RE.test(message);
}

interface StatusContext {
  /** What was asked for, for 404 messages: e.g. `message joe-1763776000-1`. */
  what: string;
  /** Which credential the request used: the API token, the webhook token, or none. */
  credential: 'api' | 'webhook' | 'none';
  /** Whether an API token is configured at all. */
  hasToken: boolean;
  /** Where the server is, for messages (no credentials in it). */
  origin: string;
}

/** Maps an HTTP error status (and the body's message) to an ApiError with an actionable message. */
export function errorFromStatus(status: number, serverMessage: string | undefined, retryAfterMs: number | undefined, ctx: StatusContext): ApiError {
  const said = serverMessage ? ` The server said: "${serverMessage}".` : '';
  const base = { status, serverMessage };
  const tokenName = ctx.credential === 'webhook' ? 'webhook token' : 'API token';
  const unauthorized = (): ApiError => {
    // `field` says which credential to fix, so the UI can offer the right action.
    const field = ctx.credential === 'webhook' ? 'webhookToken' : 'apiToken';
    if (ctx.credential === 'api' && !ctx.hasToken) {
      return new ApiError('unauthorized', `The server at ${ctx.origin} requires an API token. Set the API token.${said}`, { ...base, field });
    }
    const fix = ctx.credential === 'webhook' ? 'Copy the webhook URL again from the server settings.' : 'Set a valid token.';
    return new ApiError('unauthorized', `The server rejected the ${tokenName}. ${fix}${said}`, { ...base, field });
  };
  if (status === 401 || status === 403) return unauthorized();
  if (status === 400 && serverMessage !== undefined && isTokenComplaint(serverMessage)) return unauthorized();
  // Mailinator documents HTTP 400 as "Invalid API Token" and sends it without a reason; the
  // local server always says why it refuses a request, so a bare 400 to a call made with the
  // API token is that token.
  if (status === 400 && serverMessage === undefined && ctx.credential === 'api') return unauthorized();
  if (status === 404) return new ApiError('not_found', `The server has no ${ctx.what}. It may have been deleted; refresh and try again.${said}`, base);
  if (status === 429) {
    const wait = retryAfterMs !== undefined ? ` It asks to wait ${Math.ceil(retryAfterMs / 1000)} s.` : '';
    return new ApiError('rate_limited', `The server is rate limiting requests.${wait} Try again later.${said}`, { ...base, retryAfterMs });
  }
  if (status === 408 || status === 504) return new ApiError('timeout', `The server timed out (HTTP ${status}). Try again.${said}`, base);
  if (status >= 500) return new ApiError('server', `The server failed (HTTP ${status}). Try again, or check the server's log.${said}`, base);
  return new ApiError('bad_request', `The server refused the request (HTTP ${status}).${said || ' Check the input and the server URL.'}`, base);
}

/**
 * `fetch` refuses the Fetch standard's "bad ports" (ports of other protocols: 25, 6000, 10080…)
 * with this message and no code; the client names it with a code of its own.
 */
const FETCH_BAD_PORT_MESSAGE = 'bad port';
const BAD_PORT = 'BAD_PORT';

/** Network error codes worth naming to the user, with what they usually mean. */
const NETWORK_HINTS: Record<string, string> = {
  ECONNREFUSED: 'nothing is listening there. Check that the server is running and the URL is right',
  ENOTFOUND: 'the host name does not resolve. Check the server URL',
  EAI_AGAIN: 'the host name could not be resolved right now. Check the network',
  ECONNRESET: 'the connection was reset. Try again',
  EPIPE: 'the connection was closed while sending. Try again',
  EHOSTUNREACH: 'the host is unreachable. Check the network',
  ENETUNREACH: 'the network is unreachable. Check the network',
  UND_ERR_SOCKET: 'the connection was closed unexpectedly. Try again',
  UND_ERR_CLOSED: 'the connection was closed. Try again',
  UND_ERR_CONNECT_TIMEOUT: 'the connection could not be opened in time. Check the network and the server URL',
  UND_ERR_HEADERS_TIMEOUT: 'the server took too long to answer. Try again',
  UND_ERR_BODY_TIMEOUT: 'the server stopped sending. Try again',
  [BAD_PORT]: 'fetch refuses this port, reserved for another protocol (such as 6000 or 10080). Run the server on another port',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate cannot be verified',
};

/**
 * The error of the chain (`err`, `err.cause`, …) that names the failure, and its code.
 * `fetch` rejects with `TypeError('fetch failed')` (or `'terminated'` when a body breaks)
 * whose `cause` is the system error (ECONNREFUSED…) or an undici error (UND_ERR_SOCKET…),
 * itself sometimes wrapping the system error: the system code is preferred.
 */
function networkSourceOf(err: unknown): { code?: string; error: unknown } {
  let e: unknown = err;
  let undiciFound: { code: string; error: unknown } | undefined;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') {
      if (code.startsWith('UND_ERR')) undiciFound ??= { code, error: e };
      else if (NETWORK_HINTS[code] || /^E[A-Z]+$/.test(code)) return { code, error: e };
    } else if (code === undefined && (e as { message?: unknown }).message === FETCH_BAD_PORT_MESSAGE) {
      return { code: BAD_PORT, error: e };
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undiciFound ?? { error: err };
}

export function networkError(err: unknown, origin: string, secrets: ReadonlyArray<string | undefined>): ApiError {
  const { code, error } = networkSourceOf(err);
  const hint = code ? NETWORK_HINTS[code] ?? `the connection failed (${code})` : 'the connection failed';
  const raw = error instanceof Error ? error : err instanceof Error ? err : new Error(String(err));
  return new ApiError('network', `Could not reach the server at ${origin}: ${hint}.`, {
    cause: { name: raw.name, code, message: redact(raw.message, secrets) },
  });
}

/** What a surface tells its user a failure was: the test library's error codes, the CLI's exit codes and the MCP tools' error codes are these. */
export type FailureCode = 'timeout' | 'bad_input' | 'unauthorized' | 'unreachable' | 'unsupported' | 'server' | 'cancelled';

/** A failure as a code and a message: an ApiError mapped by its code; anything else is `server`. */
export function failureOf(e: unknown): { code: FailureCode; message: string } {
  if (ApiError.is(e)) {
    switch (e.code) {
      case 'unauthorized':
        return { code: 'unauthorized', message: e.message };
      case 'network':
      case 'timeout':
        return { code: 'unreachable', message: e.message };
      case 'invalid_input':
      case 'bad_request':
        return { code: 'bad_input', message: e.message };
      case 'cancelled':
        return { code: 'cancelled', message: e.message };
      default:
        return { code: 'server', message: e.message };
    }
  }
  return { code: 'server', message: e instanceof Error ? e.message : String(e) };
}
