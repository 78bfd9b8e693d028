// `/mcp`: the MCP tools (src/mcp/tools.ts) over streamable HTTP, in this process. Stateless:
// every POST is a whole exchange (no session id), so any process of a team server answers any
// request. The SDK's own Host and Origin lists are not used: the server's Host check (421) has
// run, the one Origin check (./origin.ts) runs here, then the API token (as
// `Authorization: Bearer <token>` or the raw header), then the body is read within the size
// limit (its bytes were taken from the byte budget before routing, as for every body). The SDK
// is loaded on the first request only (src/mcp/load.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../../api/client';
import { PRIVATE_DOMAIN } from '../../core/ids';
import { loadMcpSdk } from '../../mcp/load';
import { mcpToolSet, type ToolContext } from '../../mcp/tools';
import type { Connection } from '../../testing/connection';
import { apiTokenOf, checkToken, type TokenCheck } from './auth';
import type { ByteBudget } from '../budget';
import { parseJsonObjectOrArray, readBody } from './body';
import { HttpError } from './errors';
import { checkOrigin } from './origin';
import { prove } from './exchange';
import { sendJson } from './respond';

/** The path of the MCP endpoint. */
export const MCP_PATH = '/mcp';

const BOTH_FORMS = 'send the API token as "Authorization: Bearer <token>" or as the raw "Authorization: <token>" header';

/** OAuth discovery (RFC 9728, RFC 8414) an MCP client tries on a 401: answered 404 with what to do instead. */
export function isOAuthProbe(path: string): boolean {
  return /^\/\.well-known\/oauth-(protected-resource|authorization-server)(\/|$)/.test(path) || /^\/\.well-known\/openid-configuration(\/|$)/.test(path);
}

export function answerOAuthProbe(res: ServerResponse): void {
  sendJson(res, 404, { status: 'error', message: `this server does not use OAuth: ${BOTH_FORMS}` });
}

interface McpRouteOptions {
  apiToken: TokenCheck;
  version: string;
  maxBody: number;
  /** The shared byte budget the request body is read under (body.ts). */
  budget: ByteBudget;
  server: import('node:http').Server;
}

/** Where this process's own API answers: its listening address, a wildcard bind read as loopback. */
function selfUrl(server: import('node:http').Server): string {
  const a = server.address() as AddressInfo;
  const host = a.address === '0.0.0.0' ? '127.0.0.1' : a.address === '::' ? '[::1]' : a.family === 'IPv6' || a.address.includes(':') ? `[${a.address}]` : a.address;
  return `http://${host}:${a.port}`;
}

export async function handleMcp(o: McpRouteOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  checkOrigin(req);
  const token = apiTokenOf(req.headers.authorization);
  const outcome = checkToken(o.apiToken, token);
  if (outcome === 'missing') throw new HttpError(401, 'unauthorized', `missing API token: ${BOTH_FORMS}`, { 'www-authenticate': 'Bearer realm="test-inbox"' });
  if (outcome === 'wrong') throw new HttpError(403, 'forbidden', `wrong API token: ${BOTH_FORMS}`);
  prove(req);
  if (req.method !== 'POST') {
    // Stateless: no server-sent stream to open (GET) and no session to end (DELETE).
    res.writeHead(405, { 'content-type': 'application/json; charset=utf-8', allow: 'POST', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: `method ${req.method ?? '?'} is not allowed: this MCP endpoint is stateless, POST each message` }, id: null }));
    return;
  }
  const body = parseJsonObjectOrArray(await readBody(req, res, o));
  const sdk = await loadMcpSdk();
  const api = createClient({ baseUrl: selfUrl(o.server), apiToken: token, retries: 0, timeoutMs: 120_000 });
  const conn: Connection = {
    api,
    baseUrl: api.baseUrl,
    domain: PRIVATE_DOMAIN,
    dataDir: '',
    savedTokens: {},
    isTestInbox: () => Promise.resolve(true),
    close: () => api.dispose(),
  };
  const ctx: ToolContext = { connection: () => Promise.resolve(conn), serverNow: () => Promise.resolve(Date.now()) };
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const url = new URL(MCP_PATH, `http://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  let answer: Response;
  try {
    answer = await sdk.answerHttp(mcpToolSet(ctx, o.version), new Request(url, { method: 'POST', headers }), body, gone.signal);
  } finally {
    void api.dispose();
  }
  const out = Buffer.from(await answer.arrayBuffer());
  const sent: Record<string, string> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  answer.headers.forEach((v, k) => (sent[k] = v));
  sent['content-length'] = String(out.length);
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(answer.status, sent);
  res.end(out);
}
