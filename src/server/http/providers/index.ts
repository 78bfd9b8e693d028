// The email provider APIs (docs/providers.md), each at its provider's own paths on the server's
// root URL so that an official SDK needs only its base URL changed:
//   Resend     POST /emails, POST /emails/batch
//   SendGrid   POST /v3/mail/send
//   Postmark   POST /email, /email/batch, /email/withTemplate, /email/batchWithTemplates
//   Mailgun    POST /v3/{domain}/messages, POST /v3/{domain}/messages.mime
//   SES v2     POST /v2/email/outbound-emails
//   Twilio Verify v2 (Twilio's auth token, not the provider key)  /v2/Services/…
// This file matches those paths, checks the provider's key, then reads the request body within the byte budget,
// and answers every failure in the route's provider's shape.
import type http from 'node:http';
import type { ByteBudget } from '../../budget';
import { StoreError } from '../../store/errors';
import { InjectedFailure } from '../fault';
import { readBody } from '../body';
import { prove } from '../exchange';
import { HttpError } from '../errors';
import { sendJson } from '../respond';
import { type FailureKind, type ProviderApiModule, type ProviderContext, ProviderError } from './context';
import { MailRefusal } from './mail';
import { mailgun, type MailgunRoute } from './mailgun';
import { postmark, type PostmarkRoute } from './postmark';
import { resend, type ResendRoute } from './resend';
import { sendgrid, type SendGridRoute } from './sendgrid';
import { ses, type SesRoute } from './ses';
import { verify, type VerifyRoute, verifyRoute } from './verify';

type ProviderRoute =
  /** A path under a provider's own prefix that names none of its implemented endpoints: 404 in that provider's shape. */
  | { api: Exclude<ProviderApi, 'verify'>; methods: readonly string[]; route: undefined; unknown: true }
  | { api: 'resend'; methods: readonly string[]; route: ResendRoute }
  | { api: 'sendgrid'; methods: readonly string[]; route: SendGridRoute }
  | { api: 'postmark'; methods: readonly string[]; route: PostmarkRoute }
  | { api: 'mailgun'; methods: readonly string[]; route: MailgunRoute }
  | { api: 'ses'; methods: readonly string[]; route: SesRoute }
  | { api: 'verify'; methods: readonly string[]; route: VerifyRoute };

const POST = ['POST'] as const;

/** The provider route a path names, or undefined (then the path is the server's own API's). */
export function matchProviderRoute(s: string[]): ProviderRoute | undefined {
  if (s[0] === 'emails' && (s.length === 1 || (s.length === 2 && s[1] === 'batch'))) return { api: 'resend', methods: POST, route: { kind: s.length === 1 ? 'send' : 'batch' } };
  if (s[0] === 'email' && s.length <= 2) {
    const kind = s.length === 1 ? 'send' : ({ batch: 'batch', withTemplate: 'template', batchWithTemplates: 'batchTemplate' } as const)[s[1]];
    return kind ? { api: 'postmark', methods: POST, route: { kind } } : undefined;
  }
  if (s[0] === 'v3' && s.length === 3 && s[1] === 'mail' && s[2] === 'send') return { api: 'sendgrid', methods: POST, route: { kind: 'send' } };
  if (s[0] === 'v2' && s[1] === 'Services') return { api: 'verify', ...verifyRoute(s) };
  if (s[0] === 'v2' && s.length === 3 && s[1] === 'email' && s[2] === 'outbound-emails') return { api: 'ses', methods: POST, route: { kind: 'send' } };
  if (s[0] === 'v3' && s.length === 3 && (s[2] === 'messages' || s[2] === 'messages.mime')) return { api: 'mailgun', methods: POST, route: { kind: s[2] === 'messages' ? 'send' : 'mime', domain: s[1] } };
  // The rest of each provider's own prefix (`GET /emails/<id>`, `/v3/<domain>/events`, …) is that
  // provider's, not the server's API: its 404 comes in the provider's shape.
  const prefix: Record<string, Exclude<ProviderApi, 'verify'>> = { emails: 'resend', email: 'postmark', v3: s[1] === 'mail' ? 'sendgrid' : 'mailgun' };
  if (prefix[s[0]]) return { api: prefix[s[0]], methods: [], route: undefined, unknown: true };
  if (s[0] === 'v2' && s[1] === 'email') return { api: 'ses', methods: [], route: undefined, unknown: true };
  return undefined;
}

type ProviderApi = 'resend' | 'sendgrid' | 'postmark' | 'mailgun' | 'ses' | 'verify';

const MODULES: { [K in ProviderRoute['api']]: ProviderApiModule<Extract<ProviderRoute, { api: K }>['route']> } = { resend, sendgrid, postmark, mailgun, ses, verify };

export async function handleProvider(ctx: ProviderContext, budget: ByteBudget, req: http.IncomingMessage, res: http.ServerResponse, match: ProviderRoute, what: string): Promise<void> {
  const mod = MODULES[match.api] as ProviderApiModule<ProviderRoute['route']>;
  try {
    if ('unknown' in match) throw mod.fail('not_found', `${req.method ?? 'GET'} ${what}: this endpoint is not implemented by Test Inbox (docs/providers.md)`, 404);
    if (!match.methods.includes(req.method ?? 'GET')) {
      throw mod.fail('method', `method ${req.method ?? ''} is not allowed here; use ${match.methods.join(' or ')}`, 405);
    }
    // The key first: the body then waits for its share of the budget (body.ts readBody). A
    // module whose credential may need the body (SES) proves the request itself when it can.
    await mod.authenticate(ctx, req);
    if (!mod.proofMayNeedBody) prove(req);
    const body = await readBody(req, res, { maxBody: mod.maxRequestBytes, budget });
    await mod.handle(ctx, req, res, match.route, body);
  } catch (err) {
    const e = ProviderError.is(err) ? err : toProviderError(ctx, mod, what, err);
    if (typeof e.body !== 'string') return sendJson(res, e.status, e.body, e.headers);
    // A plain-text answer (Mailgun's 401 `Forbidden`).
    if (res.headersSent) return void res.end();
    res.writeHead(e.status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-length': Buffer.byteLength(e.body), ...e.headers });
    res.end(e.body);
  }
}

function toProviderError(ctx: ProviderContext, mod: ProviderApiModule<unknown>, what: string, err: unknown): ProviderError {
  if (InjectedFailure.is(err)) {
    const e = mod.fail('injected', err.message, err.status, err.twilioCode);
    return new ProviderError(e.status, e.body, e.message, { ...e.headers, ...err.headers });
  }
  if (MailRefusal.is(err)) return err.code === 'too_large' ? mod.fail('too_large', err.message, 413) : mod.fail('unprocessable', err.message, 422);
  if (StoreError.is(err, 'bad_target')) return mod.fail('unprocessable', err.message, 422);
  const h = HttpError.is(err) ? err : ctx.toHttpError(what, err);
  const kinds: Record<number, FailureKind> = { 400: 'bad_request', 404: 'not_found', 405: 'method', 413: 'too_large', 415: 'unsupported_media_type', 503: 'unavailable' };
  const e = mod.fail(kinds[h.status] ?? (h.status >= 500 ? 'internal' : 'bad_request'), h.message, h.status);
  return h.headers ? new ProviderError(e.status, e.body, e.message, { ...h.headers, ...e.headers }) : e;
}
