// `/mcp`: the MCP tools (src/mcp/tools.ts) over streamable HTTP, in this process. Stateless:
// every POST is a whole exchange (no session id), so any process of a team server answers any
// request. The SDK's own Host and Origin lists are not used: the server's Host check (421) has
// run, the one Origin check (./origin.ts) runs here, then the API token (as
// `Authorization: Bearer <token>` or the raw header), then the body is read within the size
// limit and the byte budget (body.ts). The tools' API calls then run through the router after
// its auth step, in this process (./inject.ts): no request to the server's own port, no second
// token check, so one /mcp request costs one connection whatever its batch size; at most
// MCP_MAX_CONCURRENT_TOOL_CALLS of its tool calls run at once, the rest queued. The SDK is
// loaded on the first request only (src/mcp/load.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createClient } from '../../api/client';
import { PRIVATE_DOMAIN } from '../../core/ids';
import { loadMcpSdk } from '../../mcp/load';
import { mcpToolSet, type ToolContext } from '../../mcp/tools';
import type { Connection } from '../../api/node/connect';
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
  /** The domain `private` stands for on this server (its --domain). */
  defaultDomain: string;
  /** The in-process transport (inject.ts, httpApi.ts inProcessFetch) the tools' API calls run through, after the auth step this request passed. */
  inProcess: typeof fetch;
}

/** Tool calls of one /mcp request (a JSON-RPC batch) run at once; the rest wait their turn. */
export const MCP_MAX_CONCURRENT_TOOL_CALLS = 8;

/** Runs at most `n` calls at once, in order of arrival; a call whose signal ends while it waits leaves the queue. */
function limiter(n: number): <T>(run: () => Promise<T>, signal: AbortSignal) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (run, signal) => {
    if (running >= n && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const go = (): void => {
          signal.removeEventListener('abort', leave);
          resolve();
        };
        // It runs at once, cancelled: the tool answers `cancelled` without a call to the API.
        const leave = (): void => {
          const i = waiting.indexOf(go);
          if (i >= 0) waiting.splice(i, 1);
          resolve();
        };
        waiting.push(go);
        signal.addEventListener('abort', leave, { once: true });
      });
    }
    running++;
    try {
      return await run();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** The base URL of the in-process client: never dialled, it only names the paths. */
const IN_PROCESS_URL = 'http://in-process.invalid';

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
  // No token: the calls enter the router after the auth step this request passed.
  const api = createClient({ baseUrl: IN_PROCESS_URL, retries: 0, timeoutMs: 120_000, fetch: o.inProcess });
  const conn: Connection = {
    api,
    baseUrl: api.baseUrl,
    domain: PRIVATE_DOMAIN,
    dataDir: '',
    savedTokens: {},
    isTestInbox: () => Promise.resolve(true),
    close: () => api.dispose(),
  };
  const ctx: ToolContext = { connection: () => Promise.resolve(conn), serverNow: () => Promise.resolve(Date.now()), serverDomain: () => Promise.resolve(o.defaultDomain) };
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const url = new URL(MCP_PATH, `http://${req.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
  const tools = mcpToolSet(ctx, o.version);
  const oneAtATurn = limiter(MCP_MAX_CONCURRENT_TOOL_CALLS);
  // A call ends when the SDK cancels it or when this request's client goes away: its in-process
  // API calls (a long-poll) end with it, as a socket's would.
  const capped: typeof tools = {
    ...tools,
    call: (name, args, signal) => {
      const ended = AbortSignal.any([signal, gone.signal]);
      return oneAtATurn(() => tools.call(name, args, ended), ended);
    },
  };
  let answer: Response;
  try {
    answer = await sdk.answerHttp(capped, new Request(url, { method: 'POST', headers }), body, gone.signal);
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
