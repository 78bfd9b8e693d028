// Twilio Verify v2 (docs/twilio.md#verify), shapes from Twilio's Verify API reference and the
// `twilio` SDK (verify.v2): services, verifications and checks at Verify's own paths,
//   POST /v2/Services, GET /v2/Services/{Sid}
//   POST /v2/Services/{Sid}/Verifications, GET /v2/Services/{Sid}/Verifications/{Sid}
//   POST /v2/Services/{Sid}/VerificationCheck
// with HTTP Basic auth of any Account SID and the server's Twilio auth token. A verification's
// code is delivered as a normal message: an SMS in the phone inbox of `To`, or an email to it.
// Twilio's rules: a code expires after 10 minutes, 5 wrong checks end the verification (60202),
// at most 5 sends to one `To` per 10 minutes (60203). Every time is the server's clock's (clock.ts).
// Services and verifications live in this process's memory: a restart forgets them.
import { randomBytes, randomInt } from 'node:crypto';
import type http from 'node:http';
import { isPhoneInbox } from '../../../core/ids';
import { phoneDigits, smsSubject } from '../../../core/sms';
import type { Clock } from '../../clock';
import { recipientTarget } from '../../recipient';
import { composeMessage } from '../compose';
import { sendJson } from '../respond';
import { checkToken } from '../auth';
import { TWILIO_ERROR, twilioCodeOf, type TwilioErrorBody } from '../twilio/errors';
import { requestFault } from '../fault';
import { FormError, type FormFields, field, parseForm } from '../twilio/form';
import { ACCOUNT_SID_RE } from '../twilio/sidIndex';
import type { FailureKind, ProviderApiModule, ProviderContext } from './context';
import { ProviderError } from './context';
import { parseMailbox } from './fields';
import { API_HEADER, PROVIDER_ID_HEADER, storeMail } from './mail';

export type VerifyRoute =
  | { kind: 'services' }
  | { kind: 'service'; service: string }
  | { kind: 'verifications'; service: string }
  | { kind: 'verification'; service: string; sid: string }
  | { kind: 'check'; service: string }
  | { kind: 'unknown' };

/** Twilio Verify's rules. */
const VERIFY_CODE_TTL_MS = 10 * 60 * 1000;
const VERIFY_MAX_CHECKS = 5;
const VERIFY_MAX_SENDS = 5;
const VERIFY_SEND_WINDOW_MS = 10 * 60 * 1000;
const DEFAULT_CODE_LENGTH = 6;
const BASE_URL = 'https://verify.twilio.com/v2';
const MAX_REQUEST_BYTES = 64 * 1024;

/** Verify's error codes (Twilio's error dictionary). */
const VERIFY_ERROR = { MISSING_PARAM: 20001, INVALID_PARAM: 60200, MAX_CHECKS: 60202, MAX_SENDS: 60203 } as const;

interface Service {
  sid: string;
  accountSid: string;
  friendlyName: string;
  codeLength: number;
  created: number;
  updated: number;
}

type Status = 'pending' | 'approved' | 'canceled' | 'max_attempts_reached' | 'expired';

interface Verification {
  sid: string;
  service: Service;
  /** The To as first given (the resources show it). */
  to: string;
  /** The To the rules count by (toKey). */
  key: string;
  channel: 'sms' | 'email';
  code: string;
  status: Status;
  created: number;
  updated: number;
  sends: Array<{ attempt_sid: string; channel: string; time: string }>;
  wrongChecks: number;
}

/** The Verify state of one server: services and verifications by SID, sends per (service, To) for the rate rule. */
class VerifyState {
  readonly services = new Map<string, Service>();
  readonly verifications = new Map<string, Verification>();
  /** Send times per `service|key` (toKey), within the last window. */
  readonly sends = new Map<string, number[]>();

  /** The verification of the To `key` (toKey) that is still open, after moving any due one to `expired`. */
  open(service: Service, key: string, now: number): Verification | undefined {
    for (const v of this.verifications.values()) {
      if (v.service !== service || v.key !== key) continue;
      this.age(v, now);
      if (v.status === 'pending') return v;
    }
    return undefined;
  }

  age(v: Verification, now: number): void {
    if (v.status === 'pending' && now - v.created >= VERIFY_CODE_TTL_MS) {
      v.status = 'expired';
      v.updated = v.created + VERIFY_CODE_TTL_MS;
    }
  }

  /** Drops what no rule can refer to any more (verifications ended a window ago). */
  sweep(now: number): void {
    for (const [sid, v] of this.verifications) {
      this.age(v, now);
      if (v.status !== 'pending' && now - v.updated > VERIFY_SEND_WINDOW_MS) this.verifications.delete(sid);
    }
    for (const [k, times] of this.sends) {
      const recent = times.filter((t) => now - t < VERIFY_SEND_WINDOW_MS);
      if (recent.length === 0) this.sends.delete(k);
      else this.sends.set(k, recent);
    }
  }
}

const states = new WeakMap<ProviderContext, VerifyState>();

function stateOf(ctx: ProviderContext): VerifyState {
  let s = states.get(ctx);
  if (!s) states.set(ctx, (s = new VerifyState()));
  return s;
}

/**
 * The To that Verify's rules (sends per To, the checks of a verification) count by, so that
 * each spelling of one To is the same To: for SMS the phone inbox's digits (phoneDigits, the
 * number-to-inbox rule of every Twilio route), for email the inbox the address delivers to
 * (recipientTarget, SMTP's rule: lower case). `to` was checked for its channel already.
 */
function toKey(to: string, channel: 'sms' | 'email'): string {
  if (channel === 'sms') return phoneDigits(to);
  const m = parseMailbox(to);
  if (typeof m === 'string') return to.toLowerCase();
  const t = recipientTarget(m.address);
  return 'problem' in t ? m.address.toLowerCase() : `${t.inbox}@${t.domain}`;
}

const sid = (prefix: string): string => `${prefix}${randomBytes(16).toString('hex')}`;
const iso = (t: number): string => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');

function twilio(status: number, code: number, message: string, headers?: Record<string, string>): ProviderError {
  const body: TwilioErrorBody = { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
  return new ProviderError(status, body, message, headers);
}

function fail(kind: FailureKind, message: string, status: number, code?: number): ProviderError {
  switch (kind) {
    case 'injected':
      return twilio(status, code ?? twilioCodeOf(status), message);
    case 'auth_missing':
    case 'auth_wrong':
      return twilio(401, TWILIO_ERROR.AUTHENTICATE, 'Authenticate', { 'www-authenticate': 'Basic realm="Twilio API"' });
    case 'not_found':
      return twilio(404, TWILIO_ERROR.NOT_FOUND, message);
    case 'method':
      return twilio(405, TWILIO_ERROR.METHOD_NOT_ALLOWED, message);
    case 'too_large':
      return twilio(413, VERIFY_ERROR.INVALID_PARAM, message);
    case 'unprocessable':
    case 'bad_request':
    case 'unsupported_media_type':
      return twilio(400, VERIFY_ERROR.INVALID_PARAM, message);
    default:
      return twilio(status >= 500 ? status : 500, TWILIO_ERROR.INTERNAL, message);
  }
}

const invalid = (message: string): ProviderError => twilio(400, VERIFY_ERROR.INVALID_PARAM, message);
const notFound = (path: string): ProviderError => twilio(404, TWILIO_ERROR.NOT_FOUND, `The requested resource ${path} was not found`);

/** The Account SID of a request whose Basic credentials are an Account SID and the Twilio auth token. */
const accounts = new WeakMap<http.IncomingMessage, string>();

function authenticate(ctx: ProviderContext, req: http.IncomingMessage): void {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const token = ctx.twilio?.authToken;
  // The token is always compared, so a wrong SID and a wrong token take the same time.
  const ok = token !== undefined && colon >= 0 && checkToken(token, decoded.slice(colon + 1)) === 'ok';
  const user = decoded.slice(0, Math.max(colon, 0));
  if (!ok || !ACCOUNT_SID_RE.test(user)) throw fail('auth_wrong', '', 401);
  accounts.set(req, user);
}

function readForm(req: http.IncomingMessage, body: Buffer): FormFields {
  if (req.method !== 'POST') return [];
  try {
    return parseForm(body);
  } catch (e) {
    if (FormError.is(e)) throw invalid(`The request is not a form that can be read: ${e.message}`);
    throw e;
  }
}

async function handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, route: VerifyRoute, body: Buffer): Promise<void> {
  const account = accounts.get(req)!;
  const state = stateOf(ctx);
  const clock: Clock = ctx.clock;
  const now = clock.now();
  state.sweep(now);
  const path = (req.url ?? '').split('?')[0];
  if (route.kind === 'unknown') throw notFound(path);
  const form = readForm(req, body);
  if (route.kind === 'services') {
    const friendlyName = field(form, 'FriendlyName')?.trim();
    if (!friendlyName) throw twilio(400, VERIFY_ERROR.MISSING_PARAM, 'Missing required parameter FriendlyName in the post body');
    if (friendlyName.length > 30 || /[\u0000-\u001f\u007f]/.test(friendlyName)) throw invalid('Invalid parameter: FriendlyName must be 1 to 30 characters without control characters');
    const lengthText = field(form, 'CodeLength');
    const codeLength = lengthText === undefined || lengthText === '' ? DEFAULT_CODE_LENGTH : /^\d{1,2}$/.test(lengthText) ? Number(lengthText) : NaN;
    if (!(codeLength >= 4 && codeLength <= 10)) throw invalid('Invalid parameter: CodeLength must be a whole number from 4 to 10');
    const service: Service = { sid: sid('VA'), accountSid: account, friendlyName, codeLength, created: now, updated: now };
    state.services.set(service.sid, service);
    sendJson(res, 201, serviceResource(service));
    return;
  }
  const service = state.services.get(route.service);
  if (!service || service.accountSid !== account) throw notFound(path);
  if (route.kind === 'service') return sendJson(res, 200, serviceResource(service));
  if (route.kind === 'verification') {
    const v = state.verifications.get(route.sid);
    if (!v || v.service !== service) throw notFound(path);
    state.age(v, now);
    if (req.method === 'POST') {
      const status = field(form, 'Status');
      if (status !== 'canceled' && status !== 'approved') throw invalid("Invalid parameter: Status must be 'canceled' or 'approved'");
      if (v.status !== 'pending') throw notFound(path);
      v.status = status;
      v.updated = now;
    }
    return sendJson(res, 200, verificationResource(v));
  }
  if (route.kind === 'verifications') return startVerification(ctx, state, res, service, form, now);
  return check(state, res, service, form, now, path);
}

async function startVerification(ctx: ProviderContext, state: VerifyState, res: http.ServerResponse, service: Service, form: FormFields, now: number): Promise<void> {
  const to = field(form, 'To')?.trim();
  if (!to) throw twilio(400, VERIFY_ERROR.MISSING_PARAM, 'Missing required parameter To in the post body');
  const channel = field(form, 'Channel')?.trim().toLowerCase();
  if (!channel) throw twilio(400, VERIFY_ERROR.MISSING_PARAM, 'Missing required parameter Channel in the post body');
  if (channel !== 'sms' && channel !== 'email') {
    throw invalid(`Invalid parameter: Channel. Test Inbox delivers verifications by 'sms' and 'email' only; '${channel.slice(0, 20)}' (a call, WhatsApp, …) cannot be caught.`);
  }
  if (channel === 'sms' && !isPhoneInbox(phoneDigits(to))) throw invalid(`Invalid parameter \`To\`: ${to.slice(0, 64)}`);
  if (channel === 'email' && typeof parseMailbox(to) === 'string') throw invalid(`Invalid parameter \`To\`: ${to.slice(0, 254)}`);
  const toKeyed = toKey(to, channel);
  // A fault rule matches To as sent or its inbox (a phone number's digits, an address).
  await requestFault(ctx.chaos, 'verify', () => ({ recipients: [to, toKeyed] }), res);
  const key = `${service.sid}|${toKeyed}`;
  const recent = (state.sends.get(key) ?? []).filter((t) => now - t < VERIFY_SEND_WINDOW_MS);
  if (recent.length >= VERIFY_MAX_SENDS) throw twilio(429, VERIFY_ERROR.MAX_SENDS, 'Max send attempts reached');
  // A verification still open for this To is sent again, with its code (as Twilio does).
  let v = state.open(service, toKeyed, now);
  if (!v) {
    const code = Array.from({ length: service.codeLength }, () => randomInt(10)).join('');
    v = { sid: sid('VE'), service, to, key: toKeyed, channel, code, status: 'pending', created: now, updated: now, sends: [], wrongChecks: 0 };
    state.verifications.set(v.sid, v);
  }
  v.channel = channel;
  v.updated = now;
  await deliver(ctx, v, `POST /v2/Services/${service.sid}/Verifications`);
  recent.push(now);
  state.sends.set(key, recent);
  v.sends.push({ attempt_sid: sid('VL'), channel, time: iso(now) });
  sendJson(res, 201, verificationResource(v));
}

/** The code as a normal message: an SMS in the phone inbox of To, or an email to it. */
async function deliver(ctx: ProviderContext, v: Verification, endpoint: string): Promise<void> {
  const text = `Your ${v.service.friendlyName} verification code is: ${v.code}`;
  const headers = { [API_HEADER]: `Twilio Verify (${endpoint})`, [PROVIDER_ID_HEADER]: v.sid };
  if (v.channel === 'sms') {
    const domain = ctx.twilio!.defaultDomain;
    const inbox = phoneDigits(v.to);
    const raw = await composeMessage({ from: v.service.friendlyName, subject: smsSubject(text), text, inbox, domain, source: 'inject', extraHeaders: headers });
    if ((await ctx.delayed?.hold([{ domain, inbox }], raw, 'inject', {})) !== undefined) return;
    await ctx.store.add([{ domain, inbox }], raw, 'inject');
    return;
  }
  const to = parseMailbox(v.to);
  if (typeof to === 'string') throw invalid(`Invalid parameter \`To\`: ${v.to.slice(0, 254)}`);
  await storeMail(ctx, {
    api: headers[API_HEADER],
    providerId: v.sid,
    from: { name: v.service.friendlyName, address: `verify@${ctx.twilio!.defaultDomain}` },
    to: [to],
    subject: `${v.service.friendlyName} verification code`,
    text: `${text}\n`,
  });
}

function check(state: VerifyState, res: http.ServerResponse, service: Service, form: FormFields, now: number, path: string): void {
  const code = field(form, 'Code')?.trim();
  if (!code) throw twilio(400, VERIFY_ERROR.MISSING_PARAM, 'Missing required parameter Code in the post body');
  const to = field(form, 'To')?.trim();
  const vsid = field(form, 'VerificationSid')?.trim();
  if (!to && !vsid) throw twilio(400, VERIFY_ERROR.MISSING_PARAM, 'Either a To or a VerificationSid must be specified');
  let v: Verification | undefined;
  if (vsid) {
    v = state.verifications.get(vsid);
    if (v && (v.service !== service || (to && toKey(to, v.channel) !== v.key))) v = undefined;
    if (v) state.age(v, now);
  } else {
    // The newest verification of To: open, or ended by too many wrong checks (which answers 60202).
    for (const x of state.verifications.values()) {
      if (x.service !== service || toKey(to!, x.channel) !== x.key) continue;
      state.age(x, now);
      if (x.status === 'pending' || x.status === 'max_attempts_reached') v = x;
    }
  }
  if (v?.status === 'max_attempts_reached') throw twilio(429, VERIFY_ERROR.MAX_CHECKS, 'Max check attempts reached');
  if (!v || v.status !== 'pending') throw notFound(path);
  v.updated = now;
  if (code === v.code) {
    v.status = 'approved';
    return sendJson(res, 200, checkResource(v, true));
  }
  v.wrongChecks++;
  if (v.wrongChecks >= VERIFY_MAX_CHECKS) v.status = 'max_attempts_reached';
  sendJson(res, 200, { ...checkResource(v, false), status: 'pending' });
}

function serviceResource(s: Service): Record<string, unknown> {
  const url = `${BASE_URL}/Services/${s.sid}`;
  return {
    sid: s.sid,
    account_sid: s.accountSid,
    friendly_name: s.friendlyName,
    code_length: s.codeLength,
    lookup_enabled: false,
    psd2_enabled: false,
    skip_sms_to_landlines: false,
    dtmf_input_required: false,
    tts_name: null,
    do_not_share_warning_enabled: false,
    custom_code_enabled: false,
    push: { include_date: false, apn_credential_sid: null, fcm_credential_sid: null },
    totp: { issuer: s.friendlyName, time_step: 30, code_length: 6, skew: 1 },
    default_template_sid: null,
    verify_event_subscription_enabled: false,
    date_created: iso(s.created),
    date_updated: iso(s.updated),
    url,
    links: {
      verification_checks: `${url}/VerificationCheck`,
      verifications: `${url}/Verifications`,
      rate_limits: `${url}/RateLimits`,
      messaging_configurations: `${url}/MessagingConfigurations`,
      entities: `${url}/Entities`,
      webhooks: `${url}/Webhooks`,
      access_tokens: `${url}/AccessTokens`,
    },
  };
}

function verificationResource(v: Verification): Record<string, unknown> {
  return {
    sid: v.sid,
    service_sid: v.service.sid,
    account_sid: v.service.accountSid,
    to: v.to,
    channel: v.channel,
    status: v.status,
    valid: v.status === 'approved',
    lookup: {},
    amount: null,
    payee: null,
    send_code_attempts: v.sends,
    date_created: iso(v.created),
    date_updated: iso(v.updated),
    sna: null,
    url: `${BASE_URL}/Services/${v.service.sid}/Verifications/${v.sid}`,
  };
}

function checkResource(v: Verification, valid: boolean): Record<string, unknown> {
  return {
    sid: v.sid,
    service_sid: v.service.sid,
    account_sid: v.service.accountSid,
    to: v.to,
    channel: v.channel,
    status: v.status,
    valid,
    amount: null,
    payee: null,
    date_created: iso(v.created),
    date_updated: iso(v.updated),
    sna_attempts_error_codes: [],
  };
}

/** The Verify route a path names (its first segments `v2`, `Services`); `unknown` for another path under it. */
export function verifyRoute(s: string[]): { methods: readonly string[]; route: VerifyRoute } {
  if (s.length === 2) return { methods: ['POST'], route: { kind: 'services' } };
  const service = s[2];
  if (s.length === 3) return { methods: ['GET'], route: { kind: 'service', service } };
  if (s.length === 4 && s[3] === 'Verifications') return { methods: ['POST'], route: { kind: 'verifications', service } };
  if (s.length === 5 && s[3] === 'Verifications') return { methods: ['GET', 'POST'], route: { kind: 'verification', service, sid: s[4] } };
  if (s.length === 4 && s[3] === 'VerificationCheck') return { methods: ['POST'], route: { kind: 'check', service } };
  return { methods: ['GET', 'POST'], route: { kind: 'unknown' } };
}

export const verify: ProviderApiModule<VerifyRoute> = { maxRequestBytes: MAX_REQUEST_BYTES, authenticate, handle, fail };
