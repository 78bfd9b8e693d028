// The web UI's routes (docs/api.md "Web UI"): the page at `/`, everything else under `/ui/`.
//  - `GET /`                 the page: a nonce-based CSP, no inline script, its script and
//                            style from `ui/` (the bundles beside the server's, esbuild.mjs).
//                            Every URL of the page is relative to its own address, so it works
//                            under a proxy's path prefix (code-server's `/proxy/<port>/`) too.
//  - `POST /ui/session`      sign in with the API token, or with a one-time ticket;
//                            `DELETE /ui/session` signs out.
//  - `POST /ui/ticket`       a one-time sign-in ticket, for the API token (the editor's Open in
//                            Browser): the browser opens `/#ticket=…`, and the page spends it.
//                            It may declare the page's origin behind a proxy (`{origin}`,
//                            ../origin.ts), which its session's Origin check then accepts.
//  - `/ui/api/v2/…`          the API's own handlers for the routes the page uses, opened by a
//                            session (cookie + page token, ./session.ts) instead of the token.
// A session opens nothing outside `/ui/`; every `/ui/` request passes the one Origin check
// (sign-in once it knows the ticket's declared origin, before the credential is used).
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { type TokenCheck, checkToken } from '../auth';
import { parseJsonObject, readBody, type BodyLimits } from '../body';
import { HttpError, notFound } from '../errors';
import { checkOrigin, parseDeclaredOrigin } from '../origin';
import { prove } from '../exchange';
import { sendJson } from '../respond';
import { allowedMethods, matchRoute, type ParsedUrl, type Route } from '../routes';
import { PAGE_TOKEN_HEADER, SESSION_COOKIE, type Revocations, type SessionKeys, cookieValues, sessionCookie } from './session';
import { viewCsp } from '../../../core/csp';

/** The route kinds a session opens, with their methods: what the page does, nothing else. */
const UI_ROUTES: Partial<Record<Route['kind'], readonly string[]>> = {
  domains: ['GET'],
  inbox: ['GET', 'DELETE'],
  message: ['GET', 'DELETE'],
  stream: ['GET'],
  search: ['GET'],
};

/** The bundles the page loads, by their name under `/ui/`. */
const ASSETS: Record<string, string> = {
  'webui.js': 'application/javascript; charset=utf-8',
  'webui.css': 'text/css; charset=utf-8',
};

export interface UiDeps {
  apiToken: TokenCheck;
  /** The API's own token check of a request (Authorization header): the ticket route's credential. */
  requireApiToken(req: IncomingMessage, query: URLSearchParams): void;
  sessions: SessionKeys;
  revocations: Revocations;
  limits: BodyLimits;
  /** The cookie gets `Secure` (a public https URL in front). */
  secure: boolean;
  /** The public origin behind a proxy (--public-url): the Origin check accepts it. */
  publicOrigin?: string;
  /** The push streams open under each session: they end when the session does. */
  streams: SessionStreams;
  /** Runs an API route with the API's own handler. */
  dispatch(route: Route, method: string, req: IncomingMessage, res: ServerResponse, url: ParsedUrl): Promise<void>;
}

/** True for the paths the web UI owns. */
export function isUiPath(segments: string[]): boolean {
  return (segments.length === 1 && segments[0] === '') || segments[0] === 'ui';
}

/** The folder of the web UI's bundles: beside the server's bundle, or dist/ when running from source. */
function assetDir(): string {
  return __filename.endsWith('.ts') ? path.join(__dirname, '..', '..', '..', '..', 'dist') : __dirname;
}

const assetCache = new Map<string, Promise<Buffer>>();

export async function handleUi(deps: UiDeps, req: IncomingMessage, res: ServerResponse, url: ParsedUrl, method: string): Promise<void> {
  const s = url.segments;
  if (s.length === 1 && s[0] === '') {
    if (method !== 'GET') throw new HttpError(405, 'method_not_allowed', `method ${req.method ?? method} is not allowed here; use GET or HEAD`, { allow: 'GET, HEAD' });
    return sendPage(res);
  }
  const signingIn = s.length === 2 && s[1] === 'session' && method === 'POST';
  // Sign-in checks the Origin itself: a ticket may declare the page's origin.
  if (!signingIn) checkOrigin(req, deps.publicOrigin, deps.sessions.declaredOrigin(cookieValues(req.headers.cookie, SESSION_COOKIE), pageTokenOf(req)));
  if (s.length === 2 && ASSETS[s[1]] !== undefined) {
    if (method !== 'GET') throw new HttpError(405, 'method_not_allowed', 'use GET or HEAD', { allow: 'GET, HEAD' });
    return sendAsset(res, s[1]);
  }
  if (s.length === 2 && s[1] === 'session') {
    if (method === 'POST') return signIn(deps, req, res);
    if (method === 'DELETE') return signOut(deps, req, res);
    throw new HttpError(405, 'method_not_allowed', 'use POST to sign in or DELETE to sign out', { allow: 'POST, DELETE' });
  }
  if (s.length === 2 && s[1] === 'ticket') {
    if (method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'use POST to get a sign-in ticket', { allow: 'POST' });
    deps.requireApiToken(req, url.query);
    const body = await readBody(req, res, deps.limits);
    const origin = parseDeclaredOrigin(body.length === 0 ? undefined : parseJsonObject(body).origin);
    const ticket = deps.sessions.issueTicket(origin);
    return sendJson(res, 201, { ticket: ticket.ticket, expires: ticket.expires }, { 'cache-control': 'no-store' });
  }
  if (s[1] === 'api') {
    const route = matchRoute(s.slice(1));
    const methods = route ? UI_ROUTES[route.kind]?.filter((m) => allowedMethods(route).includes(m)) : undefined;
    if (!route || !methods) throw notFound(`unknown route ${method} ${url.path}`);
    const session = await requireSession(deps, req);
    if (!methods.includes(method)) throw new HttpError(405, 'method_not_allowed', `method ${method} is not allowed here`, { allow: methods.join(', ') });
    if (route.kind === 'stream') deps.streams.hold(session, res, deps);
    return deps.dispatch(route, method, req, res, url);
  }
  throw notFound(`unknown route ${method} ${url.path}`);
}

function pageTokenOf(req: IncomingMessage): string | undefined {
  const page = req.headers[PAGE_TOKEN_HEADER];
  return typeof page === 'string' ? page : undefined;
}

async function requireSession(deps: UiDeps, req: IncomingMessage): Promise<{ id: string; expires: number }> {
  const opened = deps.sessions.open(cookieValues(req.headers.cookie, SESSION_COOKIE), pageTokenOf(req));
  if (typeof opened === 'string') {
    const why = {
      missing: 'not signed in: sign in with the API token',
      invalid: 'the session is not valid (signed out, or the API token changed): sign in again',
      expired: 'the session has expired: sign in again',
      revoked: 'the session was signed out: sign in again',
      no_page_token: `the request has no page token (${PAGE_TOKEN_HEADER}): the session cookie alone opens nothing`,
    }[opened];
    throw new HttpError(401, 'unauthorized', why);
  }
  if (await deps.revocations.isRevoked(opened.id)) throw new HttpError(401, 'unauthorized', 'the session was signed out: sign in again');
  prove(req);
  return opened;
}

/** Signs in with `{token}` (the API token) or `{ticket}` (a one-time ticket, spent here on any process). */
async function signIn(deps: UiDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseJsonObject(await readBody(req, res, deps.limits));
  let origin: string | undefined;
  if (body.ticket !== undefined) {
    if (typeof body.ticket !== 'string' || body.ticket === '') throw new HttpError(400, 'bad_field', 'ticket must be the string the sign-in link carries');
    const ticket = deps.sessions.openTicket(body.ticket);
    checkOrigin(req, deps.publicOrigin, typeof ticket === 'string' ? undefined : ticket.origin);
    if (ticket === 'invalid') throw new HttpError(401, 'unauthorized', 'this sign-in link is not valid (or the API token changed): open the web UI again from the editor, or sign in with the API token');
    if (ticket === 'expired') throw new HttpError(401, 'unauthorized', 'this sign-in link has expired (it lasts seconds): open the web UI again from the editor, or sign in with the API token');
    if (!(await deps.revocations.revoke(ticket.id, ticket.expires, deps.sessions.now()))) {
      throw new HttpError(401, 'unauthorized', 'this sign-in link was used already (it works once): open the web UI again from the editor, or sign in with the API token');
    }
    origin = ticket.origin;
  } else {
    checkOrigin(req, deps.publicOrigin);
    const token = typeof body.token === 'string' ? body.token : undefined;
    const outcome = checkToken(deps.apiToken, token);
    if (outcome === 'missing') throw new HttpError(400, 'bad_field', 'enter the API token');
    if (outcome === 'wrong') throw new HttpError(403, 'forbidden', 'wrong API token');
  }
  const session = deps.sessions.issue(origin);
  sendJson(res, 201, { pageToken: session.pageToken, expires: session.expires }, { 'set-cookie': sessionCookie(session.cookie, Math.floor(deps.sessions.lifetimeMs / 1000), deps.secure) });
}

async function signOut(deps: UiDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const session = await requireSession(deps, req);
  await deps.revocations.revoke(session.id, session.expires, deps.sessions.now());
  deps.streams.end(session.id);
  sendJson(res, 200, { status: 'ok' }, { 'set-cookie': sessionCookie('', 0, deps.secure) });
}

/** How often an open push stream checks that its session still holds (a sign-out on another process, its expiry). */
export const SESSION_STREAM_CHECK_MS = 10_000;

/**
 * A push stream stays open for as long as the client reads it: without this, a stream opened
 * under a session would go on delivering mail after the session ended. A sign-out on this
 * process ends its streams at once; every SESSION_STREAM_CHECK_MS each stream checks that its
 * session has not expired and was not signed out on another process of a team server.
 */
export class SessionStreams {
  readonly #open = new Map<string, Set<ServerResponse>>();
  constructor(
    private readonly now: () => number = Date.now,
    private readonly checkMs = SESSION_STREAM_CHECK_MS,
  ) {}

  hold(session: { id: string; expires: number }, res: ServerResponse, deps: Pick<UiDeps, 'revocations'>): void {
    let set = this.#open.get(session.id);
    if (!set) this.#open.set(session.id, (set = new Set()));
    set.add(res);
    const end = (): void => {
      if (!res.writableEnded) res.end();
    };
    const timer = setInterval(() => {
      if (this.now() >= session.expires) return end();
      deps.revocations.isRevoked(session.id).then((gone) => (gone ? end() : undefined), () => undefined);
    }, this.checkMs);
    timer.unref();
    res.once('close', () => {
      clearInterval(timer);
      set.delete(res);
      if (set.size === 0 && this.#open.get(session.id) === set) this.#open.delete(session.id);
    });
  }

  /** Ends the streams of a session that was signed out here. */
  end(id: string): void {
    for (const res of this.#open.get(id) ?? []) if (!res.writableEnded) res.end();
  }
}

async function sendAsset(res: ServerResponse, name: string): Promise<void> {
  let bytes = assetCache.get(name);
  if (!bytes) {
    bytes = readFile(path.join(assetDir(), name));
    assetCache.set(name, bytes);
    bytes.catch(() => assetCache.delete(name));
  }
  let body: Buffer;
  try {
    body = await bytes;
  } catch {
    throw new HttpError(500, 'internal', `the web UI's ${name} is missing beside the server's bundle; rebuild (node esbuild.mjs)`);
  }
  res.writeHead(200, { 'content-type': ASSETS[name], 'content-length': String(body.byteLength), 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  res.end(body);
}

/** The page's policy (core/csp.ts, the message panel's rule): one document for many messages, so each message's frame gates its remote images. */
function pageCsp(nonce: string): string {
  return viewCsp({ source: "'self'", nonce, remoteImages: true, connect: true, header: true });
}

function sendPage(res: ServerResponse): void {
  const nonce = randomBytes(18).toString('base64');
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="stylesheet" href="ui/webui.css">
<link rel="icon" href="data:,">
<title>Test Inbox</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="ui/webui.js"></script>
</body>
</html>
`;
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
    'cache-control': 'no-store',
    'content-security-policy': pageCsp(nonce),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  res.end(html);
}
