// The router's table: every route the HTTP server answers, each with the credential that gates
// it and what it may cost a client that has proven nothing. httpApi.ts dispatches by this table
// alone (classify() names the entry a request reaches, and the entry's declaration is what the
// body reader enforces, exchange.ts), and test/server/route-caps.test.ts walks it: a route added
// here without its caps fails that test, and one added elsewhere is not reachable.
//
// Caps of a request that has proven no credential:
//  - bytes: body bytes read before the credential holds (`unprovenBytes`; 0 for every route
//    whose credential is in its headers or path, which is checked before any body is read).
//    Those bytes come from a pool of their own (UNPROVEN_POOL_BYTES), never the shared byte
//    budget that SMTP and HTTP intake share; past the route's bytes the answer is 413.
//  - time: the server's request timeout (408, and the socket ends; budget.ts ends every grant
//    with its socket).
//  - connections: the server's connection cap, and for a route that reads an unproven body,
//    as many at once as the pool holds of its bytes (503 past that).
import { TWILIO_API_PREFIX } from '../../shared/contract';
import { matchMailosaurRoute, type MailosaurRoute } from './compat/mailosaur';
import { COMPAT_BODY_MAX_BYTES, type CompatRoute, matchCompatRoute } from './compat/routes';
import { isOAuthProbe, MCP_PATH } from './mcp';
import { matchProviderRoute } from './providers/index';
import { matchRoute, type ParsedUrl, type Route } from './routes';
import { isUiPath } from './ui/index';

/** What proves a request on a route. */
export type Credential =
  /** Nothing: the route answers anyone (reading no body). */
  | 'none'
  /** The API token (Authorization header or ?token=), checked before any body is read. */
  | 'api-token'
  /** A web UI session (cookie and page token), checked before any body is read. */
  | 'session'
  /** The webhook token (path or ?whtoken=), checked before any body is read. */
  | 'webhook-token'
  /** Twilio's HTTP Basic auth (Account SID and the Twilio auth token), checked before any body is read. */
  | 'twilio-basic'
  /** The provider key in the provider's auth header, checked before any body is read. */
  | 'provider-key'
  /** AWS Signature V4: before the body when it signs the body's hash (the AWS SDKs do), else after reading `unprovenBytes`. */
  | 'sigv4'
  /** A credential inside the body (web UI sign-in: the API token or a one-time ticket). */
  | 'in-body'
  /**
   * The drop-in APIs (`--compat`, docs/compat.md): none while the server listens on loopback
   * alone or with `--compat-open`, else HTTP Basic with the API token as the password, checked
   * before any body is read. Their small bodies are always read from the unproven pool.
   */
  | 'compat';

export interface RouteDecl {
  /** The paths it answers, as docs/api.md writes them. */
  readonly path: string;
  readonly credential: Credential;
  /** Body bytes read before the credential is proven, from the pool of unproven bodies (0: none). */
  readonly unprovenBytes: number;
  /** A request that reaches it, for the route-table test. */
  readonly probe: { readonly method: string; readonly target: string };
}

/** Web UI sign-in: `{"token": …}` or `{"ticket": …}` is a few hundred bytes. */
export const SIGN_IN_MAX_BYTES = 8 * 1024;
/** An SES request that does not sign its body's hash is read this far before its signature can be checked. */
export const SES_UNSIGNED_HASH_MAX_BYTES = 64 * 1024;
/** Bytes of not-yet-proven bodies held at once, across all connections: a pool of their own, apart from the shared byte budget. */
export const UNPROVEN_POOL_BYTES = 512 * 1024;

const SID = '0'.repeat(32);

export const ROUTES = {
  providerResend: { path: '/emails, /emails/batch', credential: 'provider-key', unprovenBytes: 0, probe: { method: 'POST', target: '/emails' } },
  providerPostmark: { path: '/email, /email/batch, /email/withTemplate, /email/batchWithTemplates', credential: 'provider-key', unprovenBytes: 0, probe: { method: 'POST', target: '/email' } },
  providerSendgrid: { path: '/v3/mail/send', credential: 'provider-key', unprovenBytes: 0, probe: { method: 'POST', target: '/v3/mail/send' } },
  providerMailgun: { path: '/v3/{domain}/messages, /v3/{domain}/messages.mime', credential: 'provider-key', unprovenBytes: 0, probe: { method: 'POST', target: '/v3/inbox.test/messages' } },
  providerSes: { path: '/v2/email/outbound-emails', credential: 'sigv4', unprovenBytes: SES_UNSIGNED_HASH_MAX_BYTES, probe: { method: 'POST', target: '/v2/email/outbound-emails' } },
  providerVerify: { path: '/v2/Services/…', credential: 'twilio-basic', unprovenBytes: 0, probe: { method: 'POST', target: `/v2/Services/VA${SID}/Verifications` } },
  providerUnknown: { path: 'the rest of each provider prefix (404 in its shape)', credential: 'none', unprovenBytes: 0, probe: { method: 'POST', target: '/emails/unknown' } },
  mcp: { path: MCP_PATH, credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: MCP_PATH } },
  oauthProbe: { path: '/.well-known/oauth-*, /.well-known/openid-configuration (404)', credential: 'none', unprovenBytes: 0, probe: { method: 'GET', target: '/.well-known/oauth-protected-resource' } },
  uiPage: { path: '/', credential: 'none', unprovenBytes: 0, probe: { method: 'GET', target: '/' } },
  uiAsset: { path: '/ui/webui.js, /ui/webui.css', credential: 'none', unprovenBytes: 0, probe: { method: 'GET', target: '/ui/webui.css' } },
  uiSession: { path: '/ui/session', credential: 'in-body', unprovenBytes: SIGN_IN_MAX_BYTES, probe: { method: 'POST', target: '/ui/session' } },
  uiTicket: { path: '/ui/ticket', credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: '/ui/ticket' } },
  uiApi: { path: '/ui/api/v2/…', credential: 'session', unprovenBytes: 0, probe: { method: 'DELETE', target: '/ui/api/v2/domains/private/inboxes/x' } },
  uiUnknown: { path: 'any other /ui/ path (404)', credential: 'none', unprovenBytes: 0, probe: { method: 'POST', target: '/ui/unknown' } },
  health: { path: '/healthz', credential: 'none', unprovenBytes: 0, probe: { method: 'POST', target: '/healthz' } },
  webhook: { path: '/api/v2/domains/{token}/webhook[/{inbox}], …?whtoken=', credential: 'webhook-token', unprovenBytes: 0, probe: { method: 'POST', target: '/api/v2/domains/private/webhook/x?whtoken=' } },
  twilioMessages: { path: `${TWILIO_API_PREFIX}/Accounts/{sid}/Messages.json`, credential: 'twilio-basic', unprovenBytes: 0, probe: { method: 'POST', target: `${TWILIO_API_PREFIX}/Accounts/AC${SID}/Messages.json` } },
  twilioMessage: { path: `${TWILIO_API_PREFIX}/Accounts/{sid}/Messages/{sid}.json`, credential: 'twilio-basic', unprovenBytes: 0, probe: { method: 'GET', target: `${TWILIO_API_PREFIX}/Accounts/AC${SID}/Messages/SM${SID}.json` } },
  twilioUnknown: { path: `the rest of ${TWILIO_API_PREFIX}/ (404 in Twilio's shape)`, credential: 'none', unprovenBytes: 0, probe: { method: 'GET', target: `${TWILIO_API_PREFIX}/Unknown` } },
  domains: { path: '/api/v2/domains', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/domains' } },
  inbox: { path: '/api/v2/domains/{domain}/inboxes/{inbox}', credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: '/api/v2/domains/private/inboxes/x' } },
  allInboxes: { path: '/api/v2/domains/{domain}/inboxes', credential: 'api-token', unprovenBytes: 0, probe: { method: 'DELETE', target: '/api/v2/domains/private/inboxes' } },
  inboxMessages: { path: '/api/v2/domains/{domain}/inboxes/{inbox}/messages', credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: '/api/v2/domains/private/inboxes/x/messages' } },
  message: { path: '/api/v2/domains/{domain}[/inboxes/{inbox}]/messages/{id}[/links|/raw|/attachments[/{n}]]', credential: 'api-token', unprovenBytes: 0, probe: { method: 'DELETE', target: '/api/v2/domains/private/messages/x-1-1' } },
  stream: { path: '/api/v2/domains/{domain}/stream[/{inbox}]', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/domains/private/stream' } },
  latest: { path: '/api/v2/domains/{domain}/inboxes/{inbox}/code|link', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/domains/private/inboxes/x/code?wait=60' } },
  search: { path: '/api/v2/search', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/search?q=x' } },
  totp: { path: '/api/v2/totp/{secret}', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/totp/JBSWY3DPEHPK3PXP' } },
  chaos: { path: '/api/v2/chaos', credential: 'api-token', unprovenBytes: 0, probe: { method: 'PUT', target: '/api/v2/chaos' } },
  chaosRules: { path: '/api/v2/chaos/rules', credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: '/api/v2/chaos/rules' } },
  chaosRule: { path: '/api/v2/chaos/rules/{id}', credential: 'api-token', unprovenBytes: 0, probe: { method: 'DELETE', target: '/api/v2/chaos/rules/r1' } },
  // Mailosaur's API (`--compat` only; off: 404): the key is the API token as the Basic user name, checked before any body is read.
  mailosaurSearch: { path: '/api/messages/search', credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: '/api/messages/search?server=abcd1234' } },
  mailosaurMessages: { path: '/api/messages?server=', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/messages?server=abcd1234' } },
  mailosaurMessage: { path: '/api/messages/{id}', credential: 'api-token', unprovenBytes: 0, probe: { method: 'DELETE', target: '/api/messages/x-1-1' } },
  mailosaurOtp: { path: '/api/devices/otp', credential: 'api-token', unprovenBytes: 0, probe: { method: 'POST', target: '/api/devices/otp' } },
  mailosaurUnknown: { path: 'the rest of /api/{devices,files,servers,analysis,usage,screenshots,previews} (404 in Mailosaur\'s shape)', credential: 'api-token', unprovenBytes: 0, probe: { method: 'GET', target: '/api/servers' } },
  compatMessages: { path: '/api/v1/messages (Mailpit GET, PUT, DELETE; MailHog DELETE)', credential: 'compat', unprovenBytes: COMPAT_BODY_MAX_BYTES, probe: { method: 'DELETE', target: '/api/v1/messages' } },
  compatSearch: { path: '/api/v1/search?query= (Mailpit GET, DELETE)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v1/search?query=x' } },
  compatMessage: { path: '/api/v1/message/{ID|latest}[/headers|/raw|/part/{PartID}] (Mailpit)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v1/message/latest' } },
  compatView: { path: '/view/{ID}.html, /view/{ID}.txt (Mailpit)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/view/latest.txt' } },
  compatInfo: { path: '/api/v1/info (Mailpit)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v1/info' } },
  mailhogMessages: { path: '/api/v2/messages (MailHog)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/messages' } },
  mailhogSearch: { path: '/api/v2/search?kind=from|to|containing&query= (MailHog)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v2/search?kind=to&query=x' } },
  mailhogMessage: { path: '/api/v1/messages/{ID} (MailHog DELETE)', credential: 'compat', unprovenBytes: 0, probe: { method: 'DELETE', target: '/api/v1/messages/x-1-1' } },
  inbucketMailbox: { path: '/api/v1/mailbox/{name}[/{id}[/source]] (Inbucket)', credential: 'compat', unprovenBytes: 0, probe: { method: 'GET', target: '/api/v1/mailbox/x' } },
  unknown: { path: 'any other path (404)', credential: 'none', unprovenBytes: 0, probe: { method: 'POST', target: '/nothing/here' } },
} as const satisfies Record<string, RouteDecl>;

export type RouteName = keyof typeof ROUTES;

type ApiRouteName = Route['kind'] & RouteName;

/** The entry a request reaches, with what its handler needs. */
export type Classified =
  | { name: Extract<RouteName, `provider${string}`>; kind: 'provider'; provider: NonNullable<ReturnType<typeof matchProviderRoute>> }
  | { name: 'mcp' | 'oauthProbe'; kind: 'mcp' | 'oauthProbe' }
  | { name: Extract<RouteName, `ui${string}`>; kind: 'ui' }
  | { name: ApiRouteName | 'health' | 'webhook' | 'twilioMessages' | 'twilioMessage' | 'twilioUnknown'; kind: 'api'; route: Route }
  | { name: Extract<RouteName, `mailosaur${string}`>; kind: 'mailosaur'; route: MailosaurRoute }
  | { name: CompatRouteName; kind: 'compat'; route: CompatRoute }
  | { name: 'unknown'; kind: 'unknown' };

type CompatRouteName = 'compatMessages' | 'compatSearch' | 'compatMessage' | 'compatView' | 'compatInfo' | 'mailhogMessages' | 'mailhogSearch' | 'mailhogMessage' | 'inbucketMailbox';
const COMPAT_NAMES: Record<CompatRoute['kind'], CompatRouteName> = {
  mpMessages: 'compatMessages',
  mpSearch: 'compatSearch',
  mpMessage: 'compatMessage',
  mpView: 'compatView',
  mpInfo: 'compatInfo',
  mhMessages: 'mailhogMessages',
  mhSearch: 'mailhogSearch',
  mhMessage: 'mailhogMessage',
  ibMailbox: 'inbucketMailbox',
  ibMessage: 'inbucketMailbox',
};

const PROVIDER_NAMES = { resend: 'providerResend', postmark: 'providerPostmark', sendgrid: 'providerSendgrid', mailgun: 'providerMailgun', ses: 'providerSes', verify: 'providerVerify' } as const;
const MAILOSAUR_NAMES = { search: 'mailosaurSearch', messages: 'mailosaurMessages', message: 'mailosaurMessage', otp: 'mailosaurOtp', unknown: 'mailosaurUnknown' } as const;
const UI_NAMES: Record<string, Extract<RouteName, `ui${string}`>> = { 'webui.js': 'uiAsset', 'webui.css': 'uiAsset', session: 'uiSession', ticket: 'uiTicket', api: 'uiApi' };

/** The table entry a request target reaches; the order is the router's. */
export function classify(url: ParsedUrl): Classified {
  const s = url.segments;
  const provider = matchProviderRoute(s);
  if (provider) return { name: 'unknown' in provider ? 'providerUnknown' : PROVIDER_NAMES[provider.api], kind: 'provider', provider };
  if (url.path === MCP_PATH || url.path === `${MCP_PATH}/`) return { name: 'mcp', kind: 'mcp' };
  if (isOAuthProbe(url.path)) return { name: 'oauthProbe', kind: 'oauthProbe' };
  if (isUiPath(s)) {
    if (s.length === 1) return { name: 'uiPage', kind: 'ui' };
    const name = UI_NAMES[s[1]];
    return { name: name !== undefined && (name === 'uiApi' || s.length === 2) ? name : 'uiUnknown', kind: 'ui' };
  }
  const mailosaur = matchMailosaurRoute(s);
  if (mailosaur) return { name: MAILOSAUR_NAMES[mailosaur.kind], kind: 'mailosaur', route: mailosaur };
  // The drop-in APIs' paths (compat/routes.ts): answered only with --compat, 404 otherwise (httpApi.ts).
  const compat = matchCompatRoute(s, url.query);
  if (compat) return { name: COMPAT_NAMES[compat.kind], kind: 'compat', route: compat };
  const route = matchRoute(s);
  if (!route) return { name: 'unknown', kind: 'unknown' };
  return { name: route.kind, kind: 'api', route };
}

/** The server-wide limits a route's caps derive from. */
export interface ServerLimits {
  /** The whole request (headers and body) must arrive within this (408 past it). */
  readonly requestTimeoutMs: number;
  /** Open connections served at once (503 past it). */
  readonly maxConnections: number;
  /** The pool of unproven bodies. */
  readonly unprovenPoolBytes: number;
}

/** What one client that has proven nothing can cost on a route. */
export interface RouteCaps {
  readonly credential: Credential;
  /** Body bytes read and held. */
  readonly bytes: number;
  /** How long its request may take to arrive. */
  readonly ms: number;
  /** Connections reading an unproven body on it at once (or the server's cap when it reads none). */
  readonly connections: number;
}

export function routeCaps(name: RouteName, limits: ServerLimits): RouteCaps {
  const d: RouteDecl = ROUTES[name];
  const connections = d.unprovenBytes > 0 ? Math.min(limits.maxConnections, Math.floor(limits.unprovenPoolBytes / d.unprovenBytes)) : limits.maxConnections;
  return { credential: d.credential, bytes: d.unprovenBytes, ms: limits.requestTimeoutMs, connections };
}
