// The one Origin check of the HTTP server, for every route a browser page could call with the
// user's credentials or from inside the user's network (`/mcp`, and the web UI's routes): a
// request that carries an `Origin` must come from this server's own origin — the same host and
// port as its Host header — or it is refused with 403. A request without `Origin` (curl, an
// SDK, an agent's MCP client) is not a browser's cross-site call and passes; the Host check
// (421, ./auth.ts HostCheck) has already run. DNS rebinding is stopped by the Host check; a
// page of another site that calls this server is stopped here.
// One more origin passes for a web UI session: the one its sign-in ticket declared. A proxy that
// rewrites Host (a port forwarder such as a cloud editor's, an nginx `proxy_pass`) serves the page
// from an origin this server cannot see; the editor learns it from `asExternalUri` and declares it
// when it asks for the ticket, with the API token. The ticket and the session spent from it carry
// it under their MAC (./ui/session.ts), so it is accepted for that session only; a session
// without one accepts exactly what is above.
import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors';

/** Why the request's Origin is foreign, or undefined when it has none or is this server's own. */
function originProblem(req: IncomingMessage, publicOrigin?: string, declaredOrigin?: string): string | undefined {
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  // Behind a TLS proxy that rewrites Host, the page's origin is the public URL (--public-url).
  if (publicOrigin !== undefined && origin.toLowerCase() === publicOrigin.toLowerCase()) return undefined;
  if (declaredOrigin !== undefined && origin.toLowerCase() === declaredOrigin.toLowerCase()) return undefined;
  const host = (req.headers.host ?? '').trim().toLowerCase();
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `the request's Origin ${JSON.stringify(origin.slice(0, 100))} is not this server`;
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && url.host.toLowerCase() === host && host !== '') return undefined;
  return `the request's Origin ${JSON.stringify(origin.slice(0, 100))} is not this server (${host || 'no Host'}): pages of other sites may not call it`;
}

/** Throws 403 for a foreign Origin; `declaredOrigin` is the one a web UI ticket or session carries. */
export function checkOrigin(req: IncomingMessage, publicOrigin?: string, declaredOrigin?: string): void {
  const problem = originProblem(req, publicOrigin, declaredOrigin);
  if (problem !== undefined) throw new HttpError(403, 'forbidden', problem);
}

/** The longest origin a ticket may declare. */
const MAX_DECLARED_ORIGIN = 200;

/**
 * The origin a ticket request declares (`origin` of its JSON body), checked: an http(s) origin
 * alone, as `URL.origin` spells it (no path, no credentials). Throws 400 naming what is wrong.
 */
export function parseDeclaredOrigin(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const bad = (why: string): HttpError => new HttpError(400, 'bad_field', `origin ${why}: declare the page's origin, such as "https://editor.example.com"`);
  if (typeof value !== 'string') throw bad('must be a string');
  if (value.length > MAX_DECLARED_ORIGIN) throw bad(`is longer than ${MAX_DECLARED_ORIGIN} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad(`${JSON.stringify(value.slice(0, 100))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(`${JSON.stringify(value.slice(0, 100))} is not http or https`);
  if (url.origin !== value) throw bad(`${JSON.stringify(value.slice(0, 100))} is not an origin alone (write it as ${JSON.stringify(url.origin)})`);
  return url.origin;
}
