// Webhook delivery (docs/api.md §4.5): `POST /api/v2/domains/<token>/webhook[/<inbox>]`, or with the
// token in `?whtoken=` and the domain in the path. Takes the webhook token, never the API token.
import { checkToken } from '../auth';
import { prove } from '../exchange';
import { HttpError, badRequest } from '../errors';
import { parseJsonObject, readBody, requireJson, toInjectedMessage } from '../body';
import { sendBytes } from '../respond';
import { FormError, type FormFields, field, isForm, parseForm } from '../twilio/form';
import { SIGNATURE_HEADER, verifyBodySignature, verifySignature } from '../twilio/signature';
import { addressProblem, MAX_BODY_CHARS } from '../twilio/api';
import { StoreError } from '../../store/errors';
import { ACCOUNT_SID_RE, MESSAGE_SID_RE, newMessageSid } from '../twilio/sidIndex';
import { phoneDigits, smsSubject } from '../../../core/sms';
import { isPhoneInbox, splitAddress } from '../../../core/ids';
import type { Route } from '../routes';
import { type ApiContext, type Query, type Req, type Res, readDomain, readInbox } from './context';
import { deliver, store as deliverQuietly } from './inboxes';

export async function receiveWebhook(ctx: ApiContext, req: Req, res: Res, route: Extract<Route, { kind: 'webhook' }>, query: Query): Promise<void> {
  // With ?whtoken= the first segment is the domain (`private` or a name); without, it is the token.
  const queryToken = query.get('whtoken');
  const tokenInQuery = queryToken !== null;
  const candidate = tokenInQuery ? queryToken : route.first;
  const outcome = checkToken(ctx.webhookToken, candidate);
  if (outcome === 'missing') throw new HttpError(401, 'unauthorized', 'missing webhook token: put it in the path or in ?whtoken=');
  if (outcome === 'wrong') throw new HttpError(403, 'forbidden', 'wrong webhook token (webhook routes take the webhook token, never the API token)');
  prove(req);
  const domain = tokenInQuery ? (readDomain(route.first) ?? ctx.defaultDomain) : ctx.defaultDomain;
  // Rule 3: an inbox in the path overrides `to`.
  const pathInbox = route.inbox === undefined ? undefined : readInbox(route.inbox, false);
  if (isForm(req)) return receiveTwilioForm(ctx, req, res, domain, pathInbox);
  requireJson(req);
  const bytes = await readBody(req, res, ctx);
  // A JSON webhook takes the webhook token alone, and never makes a Twilio record. One that says
  // it comes from Twilio (its signature header, or Twilio's inbound fields) is checked as such.
  const signed = req.headers[SIGNATURE_HEADER] !== undefined;
  const obj = parseJsonObject(bytes);
  const twilioFields = TWILIO_INBOUND_FIELDS.filter((f) => Object.prototype.hasOwnProperty.call(obj, f));
  if (ctx.twilioAuthToken !== undefined && (signed || twilioFields.length > 0) && !verifyBodySignature(ctx.twilioAuthToken, req, bytes)) {
    throw new HttpError(
      403,
      'forbidden',
      signed
        ? 'the X-Twilio-Signature header does not match this request (its URL with bodySHA256) and the Twilio auth token'
        : `the body carries Twilio's inbound field(s) ${twilioFields.join(', ')} but no X-Twilio-Signature`,
    );
  }
  const msg = toInjectedMessage(obj);
  let inbox = pathInbox;
  if (inbox === undefined) {
    // Rules 1 and 2: the inbox named by `to` (an inbox name, or an address whose local part is used).
    if (msg.to === undefined || msg.to.trim() === '') throw badRequest('bad_field', 'no inbox: name it in the path or in the "to" field');
    inbox = readInbox(splitAddress(msg.to.trim()).local, false, 'field "to"');
  }
  await deliver(ctx, res, domain, inbox, msg, 'webhook');
}

/** The answer to Twilio: an empty TwiML document, so that Twilio sends no reply and logs no error. */
const EMPTY_TWIML = Buffer.from('<?xml version="1.0" encoding="UTF-8"?><Response></Response>', 'utf8');

/** Fields only Twilio's webhooks send: a JSON body with one of them says it comes from Twilio. */
const TWILIO_INBOUND_FIELDS = ['MessageSid', 'SmsSid', 'SmsMessageSid', 'AccountSid', 'MessagingServiceSid'] as const;

/**
 * Twilio's inbound "a message comes in" webhook: a form with `From`, `To`, `Body`,
 * `MessageSid`, `AccountSid`, …, mapped to from / to / text. When a Twilio auth token is
 * configured, `X-Twilio-Signature` must match (403 otherwise), and only then, with a valid
 * `AccountSid`, is a Twilio record made: under its `MessageSid`, once (a request whose
 * `MessageSid` is stored already, a replay or a retry, is answered 200 and stores nothing).
 * Without a token the message is stored as an SMS without a record. Same inbox rules as JSON.
 */
async function receiveTwilioForm(ctx: ApiContext, req: Req, res: Res, domain: string, pathInbox: string | undefined): Promise<void> {
  let form: FormFields;
  try {
    form = parseForm(await readBody(req, res, ctx));
  } catch (e) {
    if (FormError.is(e)) throw badRequest('bad_field', `the webhook body is not a readable form: ${e.message}`);
    throw e;
  }
  if (ctx.twilioAuthToken !== undefined && !verifySignature(ctx.twilioAuthToken, req, form)) {
    throw new HttpError(403, 'forbidden', 'the X-Twilio-Signature header is missing or does not match this request and the Twilio auth token');
  }
  const verified = ctx.twilioAuthToken !== undefined;
  const to = field(form, 'To')?.trim() ?? '';
  let inbox = pathInbox;
  if (inbox === undefined) {
    const digits = phoneDigits(to);
    if (!isPhoneInbox(digits)) throw badRequest('bad_field', to === '' ? 'no inbox: name it in the path or send "To"' : `"To" ${JSON.stringify(to.slice(0, 64))} is not a phone number (3 to 20 digits)`);
    inbox = digits;
  }
  const from = field(form, 'From')?.trim() || undefined;
  const body = field(form, 'Body') ?? '';
  if (from !== undefined && /[\u0000-\u001f\u007f]/.test(from)) throw badRequest('bad_field', 'from must not contain line breaks or control characters');
  const accountSid = field(form, 'AccountSid') ?? '';
  const messageSid = field(form, 'MessageSid') ?? field(form, 'SmsSid') ?? '';
  if (verified && ACCOUNT_SID_RE.test(accountSid)) {
    // The record's fields are the Messages API's: the same bounds.
    for (const [name, v] of [['To', to], ['From', from ?? '']] as const) {
      const problem = addressProblem(v);
      if (problem) throw badRequest('bad_field', `"${name}" ${problem}`);
    }
    if (Array.from(body).length > MAX_BODY_CHARS) throw badRequest('bad_field', `"Body" is longer than ${MAX_BODY_CHARS} characters (Twilio's limit of a message)`);
    const own = MESSAGE_SID_RE.test(messageSid);
    // A replay, or Twilio's retry, of a message stored already.
    if (own && (await ctx.twilio.messages.get(messageSid))) return sendBytes(res, EMPTY_TWIML, { 'content-type': 'text/xml; charset=utf-8' });
    const input = { accountSid, to: to === '' ? inbox : to, from, direction: 'inbound' as const, body, domain, inbox };
    try {
      await ctx.twilio.messages.add({ sid: own ? messageSid : newMessageSid(), ...input });
    } catch (e) {
      if (!StoreError.is(e, 'duplicate_key')) throw e;
      // The same SID stored meanwhile (delivered twice at once, to two processes): stored once.
      if (!own) await ctx.twilio.messages.add({ sid: newMessageSid(), ...input });
    }
  } else {
    await deliverQuietly(ctx, domain, inbox, { from, subject: smsSubject(body), text: body });
  }
  sendBytes(res, EMPTY_TWIML, { 'content-type': 'text/xml; charset=utf-8' });
}
