// Sessions of the web UI (docs/api.md "Web UI"). Stateless, so that every process of a team
// server accepts a session another issued: a session is an id and an expiry, MAC'd with a key
// derived from the API token (a token change voids every session). The browser holds two
// halves, and a UI request needs both:
//  - the cookie `id.expiry.mac` (HttpOnly, SameSite=Strict, the path of `/ui`, a lifetime), which a page
//    script cannot read;
//  - the page token, a MAC of the id the page keeps in memory and sends in a header. A cookie for
//    127.0.0.1 reaches every port of the host, including the app under test: the cookie alone
//    opens nothing.
// Sign-out records the id as revoked until its expiry (Revocations); a revoked id is refused.
// A sign-in ticket ("Open in Browser" in the editor) is the same kind of MAC'd id and expiry,
// seconds long, asked for with the API token and spent on first use: spending it records its id
// in the same Revocations, so a second use on any process of a team server is refused.
// A ticket may carry a declared origin (the page's address behind a proxy that rewrites Host,
// ../origin.ts): it is MAC'd into the ticket and into the session spent from it, as a fourth
// part `id.expiry.origin.mac` (the origin base64url-encoded); values without it read as before.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'test_inbox_ui';
/** The header the page sends its page token in. */
export const PAGE_TOKEN_HEADER = 'x-test-inbox-session';
/** A session lasts this long from sign-in. */
const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

/** A sign-in ticket lasts this long: the editor opens the browser with it at once. */
const TICKET_LIFETIME_MS = 30 * 1000;

/**
 * Ids spent before their expiry: signed-out sessions and used sign-in tickets. One process's
 * memory for the Maildir store; the team server's PostgreSQL for every process of it.
 */
export interface Revocations {
  /**
   * Records the id until `expires`; false when it was recorded already (a ticket used twice).
   * `now` is the server's clock, the one the expiries were made with (SessionKeys): an id is
   * forgotten only once that clock passed its expiry, so it is never both valid and forgotten.
   */
  revoke(id: string, expires: number, now: number): Promise<boolean>;
  isRevoked(id: string): Promise<boolean>;
}

export class MemoryRevocations implements Revocations {
  readonly #ids = new Map<string, number>();
  async revoke(id: string, expires: number, now: number): Promise<boolean> {
    for (const [k, exp] of this.#ids) if (exp <= now) this.#ids.delete(k);
    if (this.#ids.has(id)) return false;
    this.#ids.set(id, expires);
    return true;
  }
  async isRevoked(id: string): Promise<boolean> {
    return this.#ids.has(id);
  }
}

interface IssuedSession {
  cookie: string;
  pageToken: string;
  expires: number;
}

interface OpenSession {
  id: string;
  expires: number;
  /** The origin declared with the ticket this session was spent from (../origin.ts), if any. */
  origin?: string;
}

type SessionProblem = 'missing' | 'invalid' | 'expired' | 'revoked' | 'no_page_token';

interface IssuedTicket {
  ticket: string;
  expires: number;
}

const ID = /^[A-Za-z0-9_-]{22}$/;

export class SessionKeys {
  readonly #key: Buffer;
  constructor(
    apiToken: string,
    readonly now: () => number = Date.now,
    readonly lifetimeMs = SESSION_LIFETIME_MS,
    readonly ticketLifetimeMs = TICKET_LIFETIME_MS,
  ) {
    this.#key = createHmac('sha256', apiToken).update('test-inbox web UI session v1').digest();
  }

  #mac(what: string): string {
    return createHmac('sha256', this.#key).update(what).digest('base64url');
  }

  /** A new session; `origin` is the one its ticket declared. */
  issue(origin?: string): IssuedSession {
    const id = randomBytes(16).toString('base64url');
    const expires = this.now() + this.lifetimeMs;
    return { cookie: this.#sign('cookie', id, expires, origin), pageToken: this.#mac(`page:${id}`), expires };
  }

  /** A one-time sign-in ticket (spending it is the caller's: Revocations.revoke), with the origin the asker declared. */
  issueTicket(origin?: string): IssuedTicket {
    const id = randomBytes(16).toString('base64url');
    const expires = this.now() + this.ticketLifetimeMs;
    return { ticket: this.#sign('ticket', id, expires, origin), expires };
  }

  /** The origin the request's session cookie (pick()) declares (whether the session is open is open()'s). */
  declaredOrigin(cookies: readonly string[], pageToken: string | undefined): string | undefined {
    return this.#pick(cookies, pageToken)?.origin;
  }

  #sign(label: 'cookie' | 'ticket', id: string, expires: number, origin: string | undefined): string {
    const body = origin === undefined ? `${id}.${expires}` : `${id}.${expires}.${Buffer.from(origin).toString('base64url')}`;
    return `${body}.${this.#mac(`${label}:${body}`)}`;
  }

  /** The ticket's id when its MAC holds and it has not expired (whether it was used is the caller's). */
  openTicket(ticket: string): OpenSession | 'invalid' | 'expired' {
    const signed = this.#signed(ticket, 'ticket');
    if (signed === undefined) return 'invalid';
    return signed.expires <= this.now() ? 'expired' : signed;
  }

  /**
   * The session of the request's cookies when one's MAC holds and it has not expired (revocation
   * is the caller's). Every value of the cookie's name is tried (pick()): a page on another port
   * of the same host (the app under test) can set a cookie of this name for the host, and the
   * browser sends both.
   */
  open(cookies: readonly string[], pageToken: string | undefined): OpenSession | SessionProblem {
    if (!cookies.some((c) => c !== '')) return 'missing';
    const signed = this.#pick(cookies, pageToken);
    if (signed === undefined) return 'invalid';
    if (signed.expires <= this.now()) return 'expired';
    if (pageToken === undefined || pageToken === '') return 'no_page_token';
    if (!same(pageToken, this.#mac(`page:${signed.id}`))) return 'invalid';
    return signed;
  }

  /**
   * Of the cookie values given, the session whose MAC holds: the one the page token belongs to,
   * else the first. A value another page set never holds a MAC, so it is passed over.
   */
  #pick(cookies: readonly string[], pageToken: string | undefined): OpenSession | undefined {
    let first: OpenSession | undefined;
    for (const c of cookies) {
      const signed = this.#signed(c, 'cookie');
      if (signed === undefined) continue;
      if (pageToken !== undefined && same(pageToken, this.#mac(`page:${signed.id}`))) return signed;
      first ??= signed;
    }
    return first;
  }

  /** `id.expiry.mac` or `id.expiry.origin.mac` whose MAC under `label` holds. */
  #signed(value: string, label: 'cookie' | 'ticket'): OpenSession | undefined {
    const parts = value.split('.');
    if ((parts.length !== 3 && parts.length !== 4) || !ID.test(parts[0]) || !/^[0-9]{1,16}$/.test(parts[1])) return undefined;
    const mac = parts.pop() as string;
    if (!same(mac, this.#mac(`${label}:${parts.join('.')}`))) return undefined;
    const [id, exp, origin] = parts;
    return { id, expires: Number(exp), ...(origin !== undefined ? { origin: Buffer.from(origin, 'base64url').toString() } : {}) };
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Every value of the cookie `name` in a Cookie header, in the order sent (a browser may send several under one name). */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * The Set-Cookie value of a session (or of its removal, when `value` is empty). It has no Path
 * attribute on purpose: it is only ever set by `/ui/session`, so the browser's default path
 * (RFC 6265 §5.1.4, the request path up to its last `/`) is `/ui` when the page is at `/`, and
 * `/proxy/<port>/ui` behind a proxy that serves it under a prefix, where a fixed `Path=/ui`
 * would never be sent back.
 */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}
