// Twilio's Messages API on the local server (docs/twilio.md):
//   POST /2010-04-01/Accounts/{AccountSid}/Messages.json        send (stores the SMS)
//   GET  /2010-04-01/Accounts/{AccountSid}/Messages.json        list, with To/From/DateSent filters and paging
//   GET  /2010-04-01/Accounts/{AccountSid}/Messages/{Sid}.json  fetch
// HTTP Basic auth: any Account SID (`AC` + 32 hex, the one in the path) with the server's
// Twilio auth token. Every answer and error is in Twilio's JSON shape.
import type http from 'node:http';
import { isPhoneInbox } from '../../../core/ids';
import { phoneDigits, smsSegments } from '../../../core/sms';
import type { TokenCheck } from '../auth';
import { checkToken } from '../auth';
import { prove } from '../exchange';
import { requestFault } from '../fault';
import type { ChaosRules } from '../../chaos/rules';
import type { ByteBudget } from '../../budget';
import { type BodyLimits, readBody } from '../body';
import { sendJson, sendJsonList } from '../respond';
import { wholeNumberParam } from '../query';
import { StoreError } from '../../store/errors';
import { TWILIO_API_PREFIX } from '../../../shared/contract';
import { TWILIO_ERROR, TwilioApiError } from './errors';
import { FormError, type FormFields, field, isForm, parseForm } from './form';
import { ACCOUNT_SID_RE, SERVICE_SID_RE, type TwilioSidIndex, type TwilioRecord, newMessageSid } from './sidIndex';

/** Twilio's limit on a message body, in characters. */
export const MAX_BODY_CHARS = 1600;
/** Default page size of a listing (Twilio's). */
const DEFAULT_PAGE_SIZE = 50;
/** Largest page size (Twilio's). */
const MAX_PAGE_SIZE = 1000;
/** Longest `To` / `From` accepted: a phone number, a short code or a sender name is far shorter. */
const MAX_ADDRESS_LENGTH = 64;
const DAY_MS = 24 * 3600 * 1000;
/** The API version Twilio reports in `api_version`. */
const API_VERSION = '2010-04-01';

export interface TwilioContext {
  messages: TwilioSidIndex;
  /** Undefined: no Twilio auth token is configured and every request is refused. */
  authToken?: TokenCheck;
  defaultDomain: string;
  maxBody: number;
  /** The shared byte budget request bodies are read under (body.ts). */
  budget: ByteBudget;
  /** The fault rules of the `twilio` surface (docs/chaos.md). */
  chaos?: ChaosRules;
}

type TwilioRoute = { kind: 'twilioMessages'; accountSid: string } | { kind: 'twilioMessage'; accountSid: string; sid: string };

const authFailed = (): TwilioApiError => new TwilioApiError(401, TWILIO_ERROR.AUTHENTICATE, 'Authenticate', { 'www-authenticate': 'Basic realm="Twilio API"' });

/** The Account SID of a request whose Basic credentials are the path's Account SID and the Twilio auth token. */
function authenticate(ctx: TwilioContext, req: http.IncomingMessage, pathAccountSid: string): void {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m || !ctx.authToken) throw authFailed();
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw authFailed();
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  // The password is always compared, so a wrong SID and a wrong token take the same time.
  const tokenOk = checkToken(ctx.authToken, password) === 'ok';
  if (!tokenOk || !ACCOUNT_SID_RE.test(user) || user !== pathAccountSid) throw authFailed();
  prove(req);
}

export async function handleTwilio(ctx: TwilioContext, req: http.IncomingMessage, res: http.ServerResponse, route: TwilioRoute, query: URLSearchParams): Promise<void> {
  authenticate(ctx, req, route.accountSid);
  await ctx.messages.ready();
  if (route.kind === 'twilioMessage') {
    const rec = await ctx.messages.get(route.sid);
    if (!rec || rec.accountSid !== route.accountSid) {
      throw new TwilioApiError(404, TWILIO_ERROR.NOT_FOUND, `The requested resource ${req.url?.split('?')[0] ?? ''} was not found`);
    }
    sendJson(res, 200, resource(rec));
    return;
  }
  if (req.method === 'POST') return send(ctx, req, res, route.accountSid);
  return list(ctx, res, route.accountSid, query);
}

/** The form of a request to the API: Twilio answers 21604 (no `To`) to a body it cannot read as a form. */
async function readForm(req: http.IncomingMessage, res: http.ServerResponse, limits: BodyLimits): Promise<FormFields> {
  if (!isForm(req)) throw new TwilioApiError(400, TWILIO_ERROR.TO_REQUIRED, "A 'To' phone number is required: send the parameters as application/x-www-form-urlencoded");
  const body = await readBody(req, res, limits);
  try {
    return parseForm(body);
  } catch (e) {
    if (FormError.is(e)) throw new TwilioApiError(400, TWILIO_ERROR.TO_REQUIRED, `A 'To' phone number is required: ${e.message}`);
    throw e;
  }
}

/** Why a To/From value cannot be used, or undefined. */
export function addressProblem(v: string): string | undefined {
  if (v.length > MAX_ADDRESS_LENGTH) return `is longer than ${MAX_ADDRESS_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f]/.test(v)) return 'contains control characters';
  return undefined;
}

/** The phone inbox of a `To` number; 21211 when it names none. */
function inboxOfTo(to: string): string {
  const digits = phoneDigits(to);
  const problem = addressProblem(to);
  if (problem || !isPhoneInbox(digits)) {
    throw new TwilioApiError(400, TWILIO_ERROR.INVALID_TO, `The 'To' number ${to.slice(0, MAX_ADDRESS_LENGTH)} is not a valid phone number.${problem ? ` It ${problem}.` : ' It needs 3 to 20 digits.'}`);
  }
  return digits;
}

async function send(ctx: TwilioContext, req: http.IncomingMessage, res: http.ServerResponse, accountSid: string): Promise<void> {
  const form = await readForm(req, res, ctx);
  const to = field(form, 'To')?.trim();
  if (!to) throw new TwilioApiError(400, TWILIO_ERROR.TO_REQUIRED, "A 'To' phone number is required.");
  const inbox = inboxOfTo(to);
  const from = field(form, 'From')?.trim() || undefined;
  const service = field(form, 'MessagingServiceSid')?.trim() || undefined;
  if (!from && !service) throw new TwilioApiError(400, TWILIO_ERROR.FROM_REQUIRED, "A 'From' or 'MessagingServiceSid' parameter is required to send a message.");
  if (from && addressProblem(from)) throw new TwilioApiError(400, TWILIO_ERROR.FROM_REQUIRED, `The 'From' value ${addressProblem(from)}.`);
  if (service && !SERVICE_SID_RE.test(service)) throw new TwilioApiError(400, TWILIO_ERROR.FROM_REQUIRED, "The 'MessagingServiceSid' must be MG followed by 32 hexadecimal digits.");
  const body = field(form, 'Body') ?? '';
  if (body === '') throw new TwilioApiError(400, TWILIO_ERROR.BODY_REQUIRED, 'Message body is required.');
  if (Array.from(body).length > MAX_BODY_CHARS) {
    throw new TwilioApiError(400, TWILIO_ERROR.BODY_TOO_LONG, `The concatenated message body exceeds the ${MAX_BODY_CHARS} character limit.`);
  }
  // A fault rule matches the To number as sent or its phone inbox (its digits), and the From.
  await requestFault(ctx.chaos, 'twilio', () => ({ ...(from !== undefined ? { sender: from } : {}), recipients: [to, inbox] }), res);
  const input = { accountSid, to, from, messagingServiceSid: service, direction: 'outbound-api' as const, body, domain: ctx.defaultDomain, inbox };
  let rec: TwilioRecord;
  try {
    rec = await ctx.messages.add({ sid: newMessageSid(), ...input });
  } catch (e) {
    // 128 random bits met a SID stored already: another one.
    if (!StoreError.is(e, 'duplicate_key')) throw e;
    rec = await ctx.messages.add({ sid: newMessageSid(), ...input });
  }
  sendJson(res, 201, resource(rec, 'created'));
}

/** Twilio's date format (RFC 2822, in GMT): `Thu, 30 Jul 2015 20:12:31 +0000`. */
function rfc2822(time: number): string {
  return new Date(time).toUTCString().replace(/GMT$/, '+0000');
}

function messageUri(rec: TwilioRecord): string {
  return `${TWILIO_API_PREFIX}/Accounts/${rec.accountSid}/Messages/${rec.sid}`;
}

/** Twilio's Message resource. Just created: `queued`, not sent yet; read back: delivered (the inbox has it). */
function resource(rec: TwilioRecord, phase: 'created' | 'stored' = 'stored'): Record<string, unknown> {
  const body = rec.body;
  const date = rfc2822(rec.time);
  const inbound = rec.direction === 'inbound';
  return {
    account_sid: rec.accountSid,
    api_version: API_VERSION,
    body,
    date_created: date,
    date_sent: phase === 'created' && !inbound ? null : date,
    date_updated: date,
    direction: rec.direction,
    error_code: null,
    error_message: null,
    from: rec.from ?? null,
    messaging_service_sid: rec.messagingServiceSid ?? null,
    num_media: '0',
    num_segments: String(smsSegments(body).segments),
    price: null,
    price_unit: 'USD',
    sid: rec.sid,
    status: inbound ? 'received' : phase === 'created' ? 'queued' : 'delivered',
    subresource_uris: { media: `${messageUri(rec)}/Media.json`, feedback: `${messageUri(rec)}/Feedback.json` },
    to: rec.to,
    uri: `${messageUri(rec)}.json`,
  };
}

/**
 * A DateSent filter value as the UTC day it names: `YYYY-MM-DD`, or an ISO 8601 date-time (the
 * SDKs send those) standing for its day. `DateSent<` is on or before that day, `DateSent>` on or after.
 */
function readDay(name: string, v: string): { start: number; end: number } {
  const t = /^\d{4}-\d{2}-\d{2}(T.*)?$/.test(v) ? Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v) : NaN;
  if (!Number.isFinite(t)) throw badParam(`'${name}' is invalid. Use YYYY-MM-DD or an ISO 8601 date-time.`);
  const start = t - (t % DAY_MS);
  return { start, end: start + DAY_MS - 1 };
}

function readInt(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const n = wholeNumberParam(query, name);
  if (n === undefined) return fallback;
  if (n === null || !(n >= min && n <= max)) throw badParam(`'${name}' is invalid. It must be a whole number from ${min} to ${max}`);
  return n;
}

function badParam(message: string): TwilioApiError {
  return new TwilioApiError(400, TWILIO_ERROR.BAD_PARAM, message);
}

async function list(ctx: TwilioContext, res: http.ServerResponse, accountSid: string, query: URLSearchParams): Promise<void> {
  const pageSize = readInt(query, 'PageSize', 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
  const page = readInt(query, 'Page', 0, 1_000_000, 0);
  const to = query.get('To');
  const from = query.get('From');
  const filters: Array<(r: TwilioRecord) => boolean> = [];
  if (to) filters.push((r) => r.to === to || phoneDigits(r.to) === phoneDigits(to));
  if (from) filters.push((r) => r.from === from || (r.from !== undefined && phoneDigits(from) !== '' && phoneDigits(r.from) === phoneDigits(from)));
  for (const [name, test] of [
    ['DateSent', (t: number, d: { start: number; end: number }) => t >= d.start && t <= d.end],
    ['DateSent<', (t: number, d: { start: number; end: number }) => t <= d.end],
    ['DateSent>', (t: number, d: { start: number; end: number }) => t >= d.start],
  ] as const) {
    const v = query.get(name);
    if (v === null || v === '') continue;
    const d = readDay(name, v);
    filters.push((r) => test(r.time, d));
  }
  // Built in slices that yield (TwilioSidIndex.list), and no further once the client has left.
  const left = new AbortController();
  const leave = (): void => left.abort();
  res.once('close', leave);
  let all: TwilioRecord[];
  try {
    all = await ctx.messages.list(accountSid, (r) => filters.every((f) => f(r)), left.signal);
  } finally {
    res.off('close', leave);
  }
  if (left.signal.aborted) return;
  // PageToken `PA<sid>`: continue after that message; without it, the page number decides.
  const token = query.get('PageToken');
  let start = page * pageSize;
  if (token) {
    if (!/^PA(SM|MM)[0-9a-fA-F]{32}$/.test(token)) throw badParam("'PageToken' is invalid. Use the next_page_uri of the previous page.");
    const at = all.findIndex((r) => r.sid === token.slice(2));
    if (at >= 0) start = at + 1;
  }
  const items = all.slice(start, start + pageSize);
  const base = `${TWILIO_API_PREFIX}/Accounts/${accountSid}/Messages.json`;
  const keep = new URLSearchParams();
  for (const k of ['To', 'From', 'DateSent', 'DateSent<', 'DateSent>']) {
    const v = query.get(k);
    if (v) keep.set(k, v);
  }
  const uriOf = (p: number, extra?: Record<string, string>): string => {
    const q = new URLSearchParams(keep);
    q.set('PageSize', String(pageSize));
    q.set('Page', String(p));
    for (const [k, v] of Object.entries(extra ?? {})) q.set(k, v);
    return `${base}?${q.toString()}`;
  };
  const hasNext = start + pageSize < all.length;
  const paging = {
    end: start + Math.max(items.length, 1) - 1,
    first_page_uri: uriOf(0),
    next_page_uri: hasNext && items.length > 0 ? uriOf(page + 1, { PageToken: `PA${items[items.length - 1].sid}` }) : null,
    page,
    page_size: pageSize,
    previous_page_uri: page > 0 ? uriOf(page - 1) : null,
    start,
    uri: uriOf(page, token ? { PageToken: token } : undefined),
  };
  // The records hold everything a resource says: no message is read or parsed for a list.
  await sendJsonList(res, 'messages', items, (r) => resource(r), paging);
}
