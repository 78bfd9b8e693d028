// The drop-in APIs (docs/compat.md): Mailpit's v1, MailHog's and Inbucket's, answered on the
// main HTTP port when `--compat` is on. Who may read them: while the server listens on
// loopback alone, anyone who reaches it (no token, as the peers); on any other address HTTP
// Basic auth, any user name, the API token as the password (the one token check, http/auth.ts);
// with `--compat-open`, anyone. The Origin check of the existing API applies (a page of
// another site gets 403), and no route answers a CORS preflight (OPTIONS is 405). Errors are
// plain text, as the peers write them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkToken } from '../auth';
import { HttpError } from '../errors';
import { checkOrigin } from '../origin';
import { StoreError } from '../../store/errors';
import { type CompatDeps, CompatError, sendText } from './common';
import { inbucket } from './inbucket';
import { mailhog } from './mailhog';
import { mailpit } from './mailpit';
import type { CompatRoute } from './routes';

const BASIC_REALM = { 'www-authenticate': 'Basic realm="Test Inbox", charset="UTF-8"' };

/** The password of an HTTP Basic Authorization header, or undefined. */
function basicPassword(header: string | undefined): string | undefined {
  const m = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

function authorize(d: CompatDeps, req: IncomingMessage): void {
  if (d.open || d.loopbackOnly()) return;
  const outcome = checkToken(d.apiToken, basicPassword(req.headers.authorization));
  if (outcome === 'ok') return;
  throw new CompatError(401, outcome === 'missing' ? 'this server listens beyond loopback: send HTTP Basic auth with the API token as the password' : 'wrong API token', BASIC_REALM);
}

/** Answers a drop-in route. Its body (PUT/DELETE of IDs) is read from the pool of unproven bodies within its own small cap, never the shared budget: the handler never calls prove(). */
export async function handleCompat(d: CompatDeps, req: IncomingMessage, res: ServerResponse, route: CompatRoute, method: string, query: URLSearchParams): Promise<void> {
  try {
    checkOrigin(req);
    authorize(d, req);
    if (route.kind.startsWith('mp')) return await mailpit(d, req, res, route as Extract<CompatRoute, { kind: `mp${string}` }>, method, query);
    if (route.kind.startsWith('mh')) return await mailhog(d, req, res, route as Extract<CompatRoute, { kind: `mh${string}` }>, method, query);
    return await inbucket(d, req, res, route as Extract<CompatRoute, { kind: `ib${string}` }>, method);
  } catch (e) {
    if (CompatError.is(e)) return sendText(res, e.status, e.message, e.headers);
    if (HttpError.is(e) && e.status < 500) return sendText(res, e.status, e.message, e.headers);
    if (StoreError.is(e) && e.code === 'not_found') return sendText(res, 404, 'message not found');
    throw e;
  }
}

export { type CompatDeps } from './common';
export { ReadMarks } from './reads';
export { COMPAT_BODY_MAX_BYTES, matchCompatRoute, type CompatRoute } from './routes';
