// The one Origin check of the HTTP server, for every route a browser page could call with the
// user's credentials or from inside the user's network (`/mcp`, and the web UI's routes): a
// request that carries an `Origin` must come from this server's own origin — the same host and
// port as its Host header — or it is refused with 403. A request without `Origin` (curl, an
// SDK, an agent's MCP client) is not a browser's cross-site call and passes; the Host check
// (421, ./auth.ts HostCheck) has already run. DNS rebinding is stopped by the Host check; a
// page of another site that calls this server is stopped here.
import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors';

/** Why the request's Origin is foreign, or undefined when it has none or is this server's own. */
function originProblem(req: IncomingMessage, publicOrigin?: string): string | undefined {
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  // Behind a TLS proxy that rewrites Host, the page's origin is the public URL (--public-url).
  if (publicOrigin !== undefined && origin.toLowerCase() === publicOrigin.toLowerCase()) return undefined;
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

/** Throws 403 for a foreign Origin. */
export function checkOrigin(req: IncomingMessage, publicOrigin?: string): void {
  const problem = originProblem(req, publicOrigin);
  if (problem !== undefined) throw new HttpError(403, 'forbidden', problem);
}
