// Amazon SES v2 SendEmail (docs/providers.md#amazon-ses), shapes from the SES v2 API reference and
// @aws-sdk/client-sesv2: POST /v2/email/outbound-emails with Simple, Raw or Template content,
// answered `{MessageId}`. AWS Signature V4 with any access key id and the provider key as the
// secret access key, verified (sigv4.ts) within AWS's 5-minute window of the server's clock.
// Errors as AWS's REST-JSON protocol has them: the `x-amzn-ErrorType` header and `{message}`;
// every answer carries the server clock's Date, from which the SDKs correct their clock skew.
// SES v1 (`POST /` with `Action=SendEmail`) is not implemented.
import { randomBytes, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { isFieldName } from '../../store/headers';
import { prove } from '../exchange';
import { sendJson } from '../respond';
import { type FailureKind, type ProviderApiModule, type ProviderContext, ProviderError } from './context';
import { decodeBase64, isObject, jsonDepthProblem, parseJson, parseMailbox, templateText, typeName, unknownFields } from './fields';
import { envelopeOf, rawEnvelope, type Mailbox, type OutgoingAttachment, storeMail, storeRaw, TEMPLATE_HEADER } from './mail';
import { requestFault } from '../fault';
import { readSignature, signatureMatches, type SignedRequest, windowProblem } from './sigv4';

export type SesRoute = { kind: 'send' };

/** SES's limits: 50 recipients a message, 40 MB a message (after base64 encoding, so the request is about that size). */
const SES_MAX_RECIPIENTS = 50;
const SES_MAX_REQUEST_BYTES = 40 * 1024 * 1024;

const FIELDS = new Set(['FromEmailAddress', 'FromEmailAddressIdentityArn', 'Destination', 'ReplyToAddresses', 'FeedbackForwardingEmailAddress', 'FeedbackForwardingEmailAddressIdentityArn', 'Content', 'EmailTags', 'ConfigurationSetName', 'EndpointId', 'TenantName', 'ListManagementOptions']);

/** The verified signature of a request, between authenticate() and handle(). */
const signatures = new WeakMap<http.IncomingMessage, SignedRequest>();

function error(status: number, type: string, message: string, clockNow?: number): ProviderError {
  return new ProviderError(status, { message }, message, { 'x-amzn-errortype': type, ...(clockNow !== undefined ? { date: new Date(clockNow).toUTCString() } : {}) });
}

/** SES v2's error types by status (its API reference, "Common Errors" and SendEmail's errors), for a fault rule's status. */
function injectedType(status: number): string {
  const types: Record<number, string> = { 400: 'BadRequestException', 403: 'AccessDeniedException', 404: 'NotFoundException', 409: 'ConcurrentModificationException', 429: 'TooManyRequestsException', 500: 'InternalFailure', 503: 'ServiceUnavailable' };
  return types[status] ?? (status >= 500 ? 'InternalFailure' : 'BadRequestException');
}

function fail(kind: FailureKind, message: string, status: number): ProviderError {
  switch (kind) {
    case 'injected':
      return error(status, injectedType(status), status === 429 ? 'Too Many Requests' : message);
    case 'auth_missing':
      return error(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    case 'auth_wrong':
      return error(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.');
    case 'too_large':
      return error(400, 'MessageRejected', message);
    case 'not_found':
      return error(404, 'NotFoundException', message);
    case 'method':
      return error(405, 'MethodNotAllowedException', message);
    case 'unprocessable':
    case 'bad_request':
    case 'unsupported_media_type':
      return error(400, 'BadRequestException', message);
    default:
      return error(status >= 500 ? status : 500, 'InternalFailure', message);
  }
}

/** The signature's form and date, before the body is read; the signature itself is checked with the body (handle). */
async function authenticate(ctx: ProviderContext, req: http.IncomingMessage): Promise<void> {
  const now = ctx.clock.now();
  const s = readSignature(req);
  if ('name' in s) throw error(s.name === 'MissingAuthenticationTokenException' ? 403 : 400, s.name, s.message, now);
  const late = windowProblem(s, now);
  if (late) throw error(403, 'InvalidSignatureException', late, now);
  if (!ctx.secret) throw withDate(fail('auth_wrong', '', 403), now);
  signatures.set(req, s);
  // A signature over the body's stated hash is checked now, before the body: the request has
  // then proven the key, and its body is read within the shared budget. One that does not
  // state the hash is read only within the route's unproven allowance (http/table.ts).
  if (s.signedHeaders.includes('x-amz-content-sha256')) {
    if (!(await signatureMatches(ctx.secret, s, req, undefined))) throw withDate(fail('auth_wrong', '', 403), now);
    prove(req);
  }
}

function withDate(e: ProviderError, now: number): ProviderError {
  return new ProviderError(e.status, e.body, e.message, { ...e.headers, date: new Date(now).toUTCString() });
}

async function handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, _route: SesRoute, body: Buffer): Promise<void> {
  const s = signatures.get(req);
  const now = ctx.clock.now();
  if (!s || !ctx.secret || !(await signatureMatches(ctx.secret, s, req, body))) throw withDate(fail('auth_wrong', '', 403), now);
  const bad = (message: string): ProviderError => error(400, 'BadRequestException', message, now);
  const value = parseJson(body);
  if (!isObject(value)) throw error(400, 'SerializationException', value === undefined ? 'The request body is not valid JSON.' : `The request body must be a JSON object, not ${typeName(value)}.`, now);
  const deep = jsonDepthProblem(value);
  if (deep) throw bad(`The request body ${deep}.`);
  const extra = unknownFields(value, FIELDS);
  if (extra.length > 0) throw bad(`Unknown field${extra.length > 1 ? 's' : ''}: ${extra.map((f) => f.slice(0, 60)).join(', ')}.`);
  const list = (v: unknown, name: string): Mailbox[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw bad(`${name} must be a list of email addresses.`);
    return (v as string[]).map((a) => {
      const m = parseMailbox(a);
      if (typeof m === 'string') throw error(400, 'MessageRejected', `Illegal address: ${name} ${JSON.stringify(a.slice(0, 100))} (${m}).`, now);
      return m;
    });
  };
  const dest = value.Destination;
  if (dest !== undefined && dest !== null && !isObject(dest)) throw bad('Destination must be an object of ToAddresses, CcAddresses and BccAddresses.');
  const to = list(dest?.ToAddresses, 'ToAddresses');
  const cc = list(dest?.CcAddresses, 'CcAddresses');
  const bcc = list(dest?.BccAddresses, 'BccAddresses');
  if (to.length + cc.length + bcc.length > SES_MAX_RECIPIENTS) throw error(400, 'MessageRejected', `Recipient count exceeds ${SES_MAX_RECIPIENTS}.`, now);
  const replyTo = list(value.ReplyToAddresses, 'ReplyToAddresses');
  const meta: Array<[string, string]> = [];
  if (typeof value.ConfigurationSetName === 'string') meta.push(['X-SES-CONFIGURATION-SET', value.ConfigurationSetName]);
  if (value.EmailTags !== undefined && value.EmailTags !== null) {
    if (!Array.isArray(value.EmailTags) || !value.EmailTags.every((t) => isObject(t) && typeof t.Name === 'string' && typeof t.Value === 'string')) throw bad('EmailTags must be a list of {Name, Value}.');
    meta.push(['X-SES-MESSAGE-TAGS', (value.EmailTags as Array<{ Name: string; Value: string }>).map((t) => `${t.Name}=${t.Value}`).join(', ')]);
  }
  if (isObject(value.ListManagementOptions)) meta.push(['X-SES-List-Management-Options', JSON.stringify(value.ListManagementOptions)]);
  const content = value.Content;
  if (!isObject(content)) throw bad('Content is required: Simple, Raw or Template.');
  const kinds = ['Simple', 'Raw', 'Template'].filter((k) => content[k] !== undefined && content[k] !== null);
  if (kinds.length !== 1) throw bad('Content must hold exactly one of Simple, Raw or Template.');
  const messageId = newSesMessageId();
  const api = 'Amazon SES v2 (POST /v2/email/outbound-emails)';
  const answer = (): void => sendJson(res, 200, { MessageId: messageId }, { date: new Date(now).toUTCString() });

  if (kinds[0] === 'Raw') {
    const raw = isObject(content.Raw) && typeof content.Raw.Data === 'string' ? decodeBase64(content.Raw.Data) : undefined;
    if (!raw || raw.length === 0) throw bad('Content.Raw.Data must be the message, base64 encoded.');
    let recipients = [...to, ...cc, ...bcc].map((m) => m.address);
    if (recipients.length === 0) {
      // No Destination: SES sends to the message's own To, Cc and Bcc.
      // Parsed on a MIME worker: a 40 MB message never holds the event loop.
      recipients = await ctx.mime.rawRecipients(raw);
      if (recipients.length > SES_MAX_RECIPIENTS) throw error(400, 'MessageRejected', `Recipient count exceeds ${SES_MAX_RECIPIENTS}.`, now);
    }
    if (recipients.length === 0) throw bad('The message has no recipients: give Destination, or To, Cc or Bcc headers in the raw message.');
    await requestFault(ctx.chaos, 'ses', () => rawEnvelope(raw, recipients), res);
    await storeRaw(ctx, { api: `${api}, Raw`, providerId: messageId, raw, recipients, meta });
    return answer();
  }
  if (to.length + cc.length + bcc.length === 0) throw bad('Destination must name at least one recipient.');
  if (typeof value.FromEmailAddress !== 'string' || value.FromEmailAddress === '') throw bad('FromEmailAddress is required for Simple and Template content.');
  const from = parseMailbox(value.FromEmailAddress);
  if (typeof from === 'string') throw error(400, 'MessageRejected', `Illegal address: FromEmailAddress (${from}).`, now);
  const part = (content.Simple ?? content.Template) as unknown;
  if (!isObject(part)) throw bad(`Content.${kinds[0]} must be an object.`);
  const headers: Array<[string, string]> = [];
  if (part.Headers !== undefined && part.Headers !== null) {
    if (!Array.isArray(part.Headers) || !part.Headers.every((h) => isObject(h) && typeof h.Name === 'string' && isFieldName(h.Name) && typeof h.Value === 'string')) throw bad('Headers must be a list of {Name, Value}.');
    for (const h of part.Headers as Array<{ Name: string; Value: string }>) headers.push([h.Name, h.Value]);
  }
  let subject = '';
  let text: string | undefined;
  let html: string | undefined;
  if (kinds[0] === 'Simple') {
    const data = (v: unknown): string | undefined => (isObject(v) && typeof v.Data === 'string' ? v.Data : undefined);
    subject = data(part.Subject) ?? '';
    if (!isObject(part.Body)) throw bad('Content.Simple.Body is required: Text, Html or both.');
    text = data(part.Body.Text);
    html = data(part.Body.Html);
    if (text === undefined && html === undefined) throw bad('Content.Simple.Body needs Text, Html or both.');
  } else {
    const name = typeof part.TemplateName === 'string' ? part.TemplateName : typeof part.TemplateArn === 'string' ? part.TemplateArn : undefined;
    if (!name) throw bad('Content.Template needs a TemplateName or TemplateArn.');
    let data: unknown = part.TemplateData;
    if (typeof data === 'string') {
      try {
        data = JSON.parse(data);
      } catch {
        throw bad('Content.Template.TemplateData must be JSON.');
      }
      const tooDeep = jsonDepthProblem(data);
      if (tooDeep) throw bad(`Content.Template.TemplateData ${tooDeep}.`);
    }
    subject = `Amazon SES template ${name}`;
    text = templateText('Amazon SES', name, data);
    meta.push([TEMPLATE_HEADER, `Amazon SES template ${name} (not rendered)`]);
  }
  await requestFault(ctx.chaos, 'ses', () => envelopeOf([{ from, to, cc, bcc }]), res);
  await storeMail(ctx, {
    api: `${api}, ${kinds[0]}`,
    providerId: messageId,
    messageId: `<${messageId}@email.amazonses.com>`,
    from,
    to,
    cc,
    bcc,
    replyTo,
    subject,
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    attachments: readAttachments(part.Attachments, bad),
    headers,
    meta,
  });
  answer();
}

function readAttachments(v: unknown, bad: (m: string) => ProviderError): OutgoingAttachment[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad('Attachments must be a list.');
  return v.map((a, i) => {
    if (!isObject(a) || typeof a.FileName !== 'string' || typeof a.RawContent !== 'string') throw bad(`Attachment ${i} needs a FileName and RawContent.`);
    const content = decodeBase64(a.RawContent);
    if (!content) throw bad(`Attachment ${i}: RawContent is not base64.`);
    const cid = typeof a.ContentId === 'string' && a.ContentId !== '' ? a.ContentId.replace(/^<|>$/g, '') : undefined;
    return { content, filename: a.FileName, ...(typeof a.ContentType === 'string' ? { contentType: a.ContentType } : {}), ...(cid ? { cid } : {}), inline: a.ContentDisposition === 'INLINE' };
  });
}

/** A new message id shaped like SES's: hex digits, a UUID and a suffix. */
function newSesMessageId(): string {
  return `0100${randomBytes(6).toString('hex')}-${randomUUID()}-000000`;
}

export const ses: ProviderApiModule<SesRoute> = { maxRequestBytes: SES_MAX_REQUEST_BYTES, authenticate, handle, fail, proofMayNeedBody: true };
