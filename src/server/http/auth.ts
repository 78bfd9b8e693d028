// Token and Host checks of the local HTTP API (docs/api.md §5, docs/architecture.md).
// - API token: `Authorization: Bearer <token>`, the raw `Authorization: <token>` header or `?token=`; webhook token: path segment
//   or `?whtoken=`. The two are checked by separate TokenChecks, so neither opens the other's
//   routes.
// - Comparison is constant-time: both sides are hashed to equal-length SHA-256 digests and
//   compared with crypto.timingSafeEqual, so neither content nor length leaks through timing.
// - Host header (DNS rebinding): loopback names with any port, plus configured extra hosts.
import { hash, timingSafeEqual } from 'node:crypto';
import { codedError, type CodedError } from '../../core/errors';

function digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

type AuthErrorCode = 'empty_token' | 'same_tokens';

/** A misconfiguration of the tokens, thrown when the API is created. */
export const AuthConfigError = codedError<AuthErrorCode>('AuthConfigError');
export type AuthConfigError = CodedError<AuthErrorCode>;

/** Holds the digest of one secret token; never keeps or logs the token itself. */
export class TokenCheck {
  readonly #digest: Buffer;

  constructor(token: string, what: string) {
    if (token.length === 0) throw new AuthConfigError('empty_token', `the ${what} must not be empty`);
    this.#digest = digest(token);
  }

  /** Constant-time comparison of `candidate` with the token. */
  matches(candidate: string): boolean {
    return timingSafeEqual(digest(candidate), this.#digest);
  }
}

/** Result of checking a request's credentials. */
export type AuthOutcome = 'ok' | 'missing' | 'wrong';

/**
 * The API token an Authorization header carries: `Bearer <token>` (what MCP clients and the
 * README's MCP configs send) or the raw token. The one reader of that header, for the API's
 * routes and /mcp alike; the token it yields still goes through checkToken.
 */
export function apiTokenOf(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const bearer = /^bearer\s+(.*)$/i.exec(header.trim());
  return bearer ? bearer[1].trim() : header;
}

export function checkToken(check: TokenCheck, candidate: string | undefined): AuthOutcome {
  if (candidate === undefined || candidate === '') return 'missing';
  return check.matches(candidate) ? 'ok' : 'wrong';
}

/**
 * Host header values always allowed: the loopback names the server binds to, exactly. Not a
 * test of "is this host this machine" (that is core/urls.ts isLoopbackHost): a Host check allows
 * the names it knows and nothing it would have to reason about (`127.0.0.2`, `app.localhost`).
 */
const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** A DNS name (letters, digits, hyphens, dots), an IPv4 address, or a bracketed IPv6 address; then an optional port. */
const ALLOWED_HOST = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;

/**
 * Why `entry` cannot be an allowed host, or undefined when it can: the one rule for every
 * allowed-host list (`--allowed-hosts`, TEST_INBOX_ALLOWED_HOSTS, HttpApiOptions.allowedHosts).
 * Each entry names one host exactly. No wildcard (`*`, `*.lan`, `.lan`, `all`): routes answer
 * without a token (`/healthz`, the web UI's sign-in, the webhook and provider routes), so the
 * Host check is what stops DNS rebinding, and a pattern would let a rebound name through.
 */
export function allowedHostProblem(entry: string): string | undefined {
  const e = entry.trim();
  const shown = JSON.stringify(e.slice(0, 100));
  if (e === '') return 'an entry is empty';
  if (/[*?]/.test(e) || e.startsWith('.') || /^(?:all|any)$/i.test(e)) {
    return `${shown} is a wildcard; each entry must name one host (such as testinbox, 192.168.1.20 or mail.lan:8025): routes answer without a token, so the Host check that stops DNS rebinding cannot be turned off`;
  }
  if (!ALLOWED_HOST.test(e)) return `${shown} is not a host name, IP address or host:port (write IPv6 in brackets: [fd00::5])`;
  return undefined;
}

/** Decides whether a Host header names this server. */
export class HostCheck {
  readonly #hosts: Set<string>;

  /** `allowedHosts` entries are host names (any port) or `host:port` (that port only); a wildcard or malformed entry throws (allowedHostProblem). */
  constructor(allowedHosts: readonly string[] = []) {
    for (const h of allowedHosts) {
      const problem = allowedHostProblem(h);
      if (problem !== undefined) throw new TypeError(`allowedHosts: ${problem}`);
    }
    this.#hosts = new Set([...LOOPBACK_HOSTS, ...allowedHosts.map((h) => h.trim().toLowerCase())]);
  }

  allows(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return false;
    const host = hostHeader.trim().toLowerCase();
    if (this.#hosts.has(host)) return true;
    const name = hostName(host);
    return name !== undefined && this.#hosts.has(name);
  }
}

/** The host part of `host[:port]` or `[v6][:port]`, or undefined when the port is malformed. */
function hostName(host: string): string | undefined {
  let name = host;
  let port = '';
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) return undefined;
    name = host.slice(0, end + 1);
    const rest = host.slice(end + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return undefined;
      port = rest.slice(1);
    }
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) {
      name = host.slice(0, colon);
      port = host.slice(colon + 1);
    }
  }
  if (port !== '' && !/^[0-9]{1,5}$/.test(port)) return undefined;
  return name;
}

/**
 * The user name of an HTTP Basic Authorization header (`Basic base64(user:password)`), or
 * undefined when the header is not Basic. The Mailosaur SDK sends its API key as the user name
 * (compat/mailosaur.ts); the name still goes through checkToken.
 */
export function basicUserOf(header: string | undefined): string | undefined {
  const m = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? decoded : decoded.slice(0, colon);
}
