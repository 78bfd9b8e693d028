// SendGrid's v3 Mail Send (docs/providers.md#sendgrid), shapes from SendGrid's v3 reference and
// the @sendgrid/helpers Mail class: POST /v3/mail/send, `Authorization: Bearer <provider key>`,
// answered 202 with an empty body and `X-Message-Id` (200 in sandbox mode, as SendGrid does).
// Each personalization is one message to its to, cc and bcc. Errors
// `{"errors": [{"message", "field", "help"}]}`.
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { isFieldName } from '../../store/headers';
import { checkProviderKey, type FailureKind, type ProviderApiModule, type ProviderContext, ProviderError } from './context';
import { decodeBase64, isObject, jsonDepthProblem, mailboxOf, parseJson, templateText, typeName, unknownFields } from './fields';
import { envelopeOf, type Mailbox, type OutgoingAttachment, type OutgoingMail, storeMail, TEMPLATE_HEADER, TEST_MODE_HEADER } from './mail';
import { requestFault } from '../fault';

export type SendGridRoute = { kind: 'send' };

/** SendGrid's limits: 1,000 personalizations and 1,000 recipients a request, 30 MB a message. */
const SENDGRID_MAX_RECIPIENTS = 1000;
const SENDGRID_MAX_REQUEST_BYTES = 30 * 1024 * 1024;
/**
 * What `substitutions` may add to a personalization's content (text and HTML together): the
 * template's own size, and at least this. A short value for a key the template repeats would
 * otherwise turn a 22 KB request into tens of MB of mail.
 */
const SUBSTITUTION_MIN_GROWTH = 10_000;

const FIELDS = new Set(['personalizations', 'from', 'reply_to', 'reply_to_list', 'subject', 'content', 'attachments', 'template_id', 'headers', 'categories', 'custom_args', 'send_at', 'batch_id', 'asm', 'ip_pool_name', 'mail_settings', 'tracking_settings', 'sections']);
const PERSONALIZATION_FIELDS = new Set(['to', 'cc', 'bcc', 'from', 'subject', 'headers', 'substitutions', 'dynamic_template_data', 'custom_args', 'send_at']);

function error(status: number, message: string, field: string | null = null, headers?: Record<string, string>): ProviderError {
  return new ProviderError(status, { errors: [{ message, field, help: null }] }, message, headers);
}

function fail(kind: FailureKind, message: string, status: number): ProviderError {
  switch (kind) {
    case 'injected':
      // SendGrid's 429 body: {"errors":[{"field":null,"message":"too many requests"}]}.
      return error(status, status === 429 ? 'too many requests' : message);
    case 'auth_missing':
      return error(401, 'authorization required');
    case 'auth_wrong':
      return error(401, 'The provided authorization grant is invalid, expired, or revoked');
    case 'too_large':
      return error(413, message);
    case 'not_found':
      return error(404, 'Not Found');
    case 'method':
      return error(405, message);
    case 'unprocessable':
    case 'bad_request':
    case 'unsupported_media_type':
      return error(400, message);
    default:
      return error(status >= 500 ? status : 500, message);
  }
}

function authenticate(ctx: ProviderContext, req: http.IncomingMessage): void {
  const header = req.headers.authorization ?? '';
  const outcome = checkProviderKey(ctx, /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]);
  if (outcome === 'ok') return;
  throw fail(header === '' ? 'auth_missing' : 'auth_wrong', '', 401);
}

function stringField(obj: Record<string, unknown>, name: string, where: string): string | undefined {
  const v = obj[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw error(400, `The ${name} must be a string, not ${typeName(v)}.`, where);
  return v;
}

function emailObject(v: unknown, where: string): Mailbox {
  if (!isObject(v) || typeof v.email !== 'string') throw error(400, 'The email object must have an email parameter, and may have a name parameter.', where);
  if (v.name !== undefined && v.name !== null && typeof v.name !== 'string') throw error(400, 'The name of an email object must be a string.', `${where}.name`);
  const m = mailboxOf(v.email, typeof v.name === 'string' ? v.name : undefined);
  if (typeof m === 'string') throw error(400, 'Does not contain a valid address.', `${where}.email`);
  return m;
}

function emailList(v: unknown, where: string): Mailbox[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw error(400, `The ${where.split('.').pop() ?? ''} field must be an array of email objects.`, where);
  return v.map((x, i) => emailObject(x, `${where}.${i}`));
}

function stringMap(v: unknown, where: string): Array<[string, string]> {
  if (v === undefined || v === null) return [];
  if (!isObject(v)) throw error(400, `The ${where.split('.').pop() ?? ''} must be an object of string values.`, where);
  return Object.entries(v).map(([k, x]) => {
    if (typeof x !== 'string') throw error(400, `The value of ${JSON.stringify(k.slice(0, 60))} must be a string.`, `${where}.${k.slice(0, 60)}`);
    return [k, x];
  });
}

/** A `headers` object: string values under names a header field may have (RFC 5322 field-name). */
function headerMap(v: unknown, where: string): Array<[string, string]> {
  const out = stringMap(v, where);
  for (const [k] of out) if (!isFieldName(k)) throw error(400, `The header name ${JSON.stringify(k.slice(0, 60))} is not valid: it must be printable ASCII without blanks or a colon.`, where);
  return out;
}

/** A `send_at` after now is refused: the server sends nothing later. */
function refuseSchedule(ctx: ProviderContext, v: unknown, where: string): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw error(400, 'The send_at parameter must be a UNIX timestamp (whole seconds).', where);
  if (v * 1000 > ctx.clock.now()) throw error(400, 'Scheduled sending is not supported by Test Inbox: send_at is in the future. Send without send_at; the message is stored at once.', where);
}

async function handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, _route: SendGridRoute, body: Buffer): Promise<void> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'application/json') throw error(415, 'Content-Type should be application/json.');
  const value = parseJson(body);
  if (value === undefined) throw error(400, 'Bad Request: the request body is not valid JSON.');
  const deep = jsonDepthProblem(value);
  if (deep) throw error(400, `The request body ${deep}.`);
  if (!isObject(value)) throw error(400, `The request body must be a JSON object, not ${typeName(value)}.`);
  const extra = unknownFields(value, FIELDS);
  if (extra.length > 0) throw error(400, `Unknown field${extra.length > 1 ? 's' : ''}: ${extra.map((f) => f.slice(0, 60)).join(', ')}.`, extra[0].slice(0, 60));

  if (value.from === undefined || value.from === null) {
    throw error(400, 'The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name parameter.', 'from');
  }
  const from = emailObject(value.from, 'from');
  const replyTo = value.reply_to !== undefined && value.reply_to !== null ? [emailObject(value.reply_to, 'reply_to')] : emailList(value.reply_to_list, 'reply_to_list');
  const subject = stringField(value, 'subject', 'subject');
  const templateId = stringField(value, 'template_id', 'template_id');
  const content = readContent(value.content);
  if (!templateId && content.text === undefined && content.html === undefined) {
    throw error(400, 'Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block.', 'content');
  }
  const attachments = [...readAttachments(value.attachments), ...content.others];
  const headers = headerMap(value.headers, 'headers');
  const customArgs = stringMap(value.custom_args, 'custom_args');
  refuseSchedule(ctx, value.send_at, 'send_at');
  const meta: Array<[string, string]> = [];
  if (value.categories !== undefined && value.categories !== null) {
    if (!Array.isArray(value.categories) || !value.categories.every((c) => typeof c === 'string')) throw error(400, 'The categories must be an array of strings.', 'categories');
    if (value.categories.length > 10) throw error(400, 'You may not have more than 10 categories per request.', 'categories');
    for (const c of value.categories as string[]) meta.push(['X-SendGrid-Category', c]);
  }
  const batchId = stringField(value, 'batch_id', 'batch_id');
  if (batchId) meta.push(['X-SendGrid-Batch-Id', batchId]);
  const settings = value.mail_settings;
  const sandbox = isObject(settings) && isObject(settings.sandbox_mode) && settings.sandbox_mode.enable === true;
  if (sandbox) meta.push([TEST_MODE_HEADER, 'SendGrid mail_settings.sandbox_mode: SendGrid would not have delivered this message']);

  if (!Array.isArray(value.personalizations) || value.personalizations.length === 0) {
    throw error(400, 'The personalizations field is required and must have at least one personalization.', 'personalizations');
  }
  if (value.personalizations.length > SENDGRID_MAX_RECIPIENTS) throw error(400, `The personalizations field may not have more than ${SENDGRID_MAX_RECIPIENTS} items.`, 'personalizations');
  const messageId = randomBytes(16).toString('base64url').slice(0, 22);
  // Every personalization is read and checked (its substitutions within their bound) before any
  // is stored; then each is expanded and stored in turn, so one expanded text is held at a time.
  const plans: Array<{ mail: OutgoingMail; substitute: Substitute }> = [];
  let recipients = 0;
  value.personalizations.forEach((p, i) => {
    const where = `personalizations.${i}`;
    if (!isObject(p)) throw error(400, 'Each personalization must be an object.', where);
    const extraP = unknownFields(p, PERSONALIZATION_FIELDS);
    if (extraP.length > 0) throw error(400, `Unknown field: ${extraP[0].slice(0, 60)}.`, `${where}.${extraP[0].slice(0, 60)}`);
    const to = emailList(p.to, `${where}.to`);
    if (to.length === 0) throw error(400, 'The to array is required for all personalization objects, and must have at least one email object with a valid email address.', `${where}.to`);
    const cc = emailList(p.cc, `${where}.cc`);
    const bcc = emailList(p.bcc, `${where}.bcc`);
    const all = [...to, ...cc, ...bcc].map((m) => m.address.toLowerCase());
    if (new Set(all).size !== all.length) throw error(400, 'Each email address in the personalization block should be unique between to, cc, and bcc. We found the first duplicate instance of an address in the personalization.', where);
    recipients += all.length;
    if (recipients > SENDGRID_MAX_RECIPIENTS) throw error(400, `The total number of recipients must be no more than ${SENDGRID_MAX_RECIPIENTS}.`, 'personalizations');
    const pSubject = stringField(p, 'subject', `${where}.subject`) ?? subject;
    if (!templateId && (pSubject === undefined || pSubject === '')) {
      throw error(400, 'The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.', 'subject');
    }
    refuseSchedule(ctx, p.send_at, `${where}.send_at`);
    const pFrom = p.from !== undefined && p.from !== null ? emailObject(p.from, `${where}.from`) : from;
    const substitutions = stringMap(p.substitutions, `${where}.substitutions`);
    const pMeta = [...meta, ...[...customArgs, ...stringMap(p.custom_args, `${where}.custom_args`)].map(([k, v]): [string, string] => ['X-SendGrid-Custom-Arg', `${k}=${v}`])];
    let substitute: Substitute = () => substituted(content, substitutions, `${where}.substitutions`);
    if (templateId) {
      pMeta.push([TEMPLATE_HEADER, `SendGrid template ${templateId} (not rendered)`]);
      if (templateId.startsWith('d-')) {
        // A dynamic template: the template holds the content; its data is the message's text.
        const text = templateText('SendGrid dynamic', templateId, p.dynamic_template_data);
        substitute = () => ({ text });
      }
    }
    // Checked now, within the bound (the expansion is dropped): a refusal comes before anything is built.
    substitute();
    plans.push({
      mail: {
        api: 'SendGrid (POST /v3/mail/send)',
        providerId: messageId,
        from: pFrom,
        to,
        cc,
        bcc,
        replyTo,
        subject: pSubject ?? '',
        attachments,
        headers: [...headers, ...headerMap(p.headers, `${where}.headers`)],
        meta: pMeta,
      },
      substitute,
    });
  });
  await requestFault(ctx.chaos, 'sendgrid', () => envelopeOf(plans.map((p) => p.mail)), res);
  for (const { mail, substitute } of plans) {
    const { text, html } = substitute();
    await storeMail(ctx, { ...mail, ...(text !== undefined ? { text } : {}), ...(html !== undefined ? { html } : {}) });
  }
  res.writeHead(sandbox ? 200 : 202, { 'x-message-id': messageId, 'content-length': '0', 'cache-control': 'no-store' });
  res.end();
}

type Content = { text?: string; html?: string };
type Substitute = () => Content;

/**
 * The content with each key of `substitutions` replaced in turn by its value, as SendGrid does
 * (a key is literal text; an empty key replaces nothing). What the replacements add to the text
 * and HTML together is bounded by the template's size, at least SUBSTITUTION_MIN_GROWTH bytes:
 * each step's size is counted before its string is built, and past the bound the request gets
 * SendGrid's 400 naming `where`.
 */
function substituted(content: Content, substitutions: Array<[string, string]>, where: string): Content {
  if (substitutions.length === 0) return { text: content.text, html: content.html };
  const template = byteLength(content.text) + byteLength(content.html);
  const limit = Math.max(SUBSTITUTION_MIN_GROWTH, template);
  const out: Content = { text: content.text, html: content.html };
  let size = template;
  for (const [key, value] of substitutions) {
    if (key === '') continue;
    const step = Buffer.byteLength(value) - Buffer.byteLength(key);
    for (const part of ['text', 'html'] as const) {
      const s = out[part];
      if (s === undefined) continue;
      const n = occurrences(s, key);
      if (n === 0) continue;
      size += n * step;
      if (size - template > limit) {
        throw error(400, `The substitutions would add ${size - template} bytes to the content, more than the ${limit} they may add (the content's own size, at least ${SUBSTITUTION_MIN_GROWTH} bytes).`, where);
      }
      out[part] = s.split(key).join(value);
    }
  }
  return out;
}

function byteLength(s: string | undefined): number {
  return s === undefined ? 0 : Buffer.byteLength(s);
}

/** How many times `key` (not empty) occurs in `s` without overlap, as split() finds it. */
function occurrences(s: string, key: string): number {
  let n = 0;
  for (let at = s.indexOf(key); at >= 0; at = s.indexOf(key, at + key.length)) n++;
  return n;
}

function readContent(v: unknown): { text?: string; html?: string; others: OutgoingAttachment[] } {
  const out: { text?: string; html?: string; others: OutgoingAttachment[] } = { others: [] };
  if (v === undefined || v === null) return out;
  if (!Array.isArray(v)) throw error(400, 'The content must be an array of {type, value} blocks.', 'content');
  v.forEach((c, i) => {
    if (!isObject(c) || typeof c.type !== 'string' || typeof c.value !== 'string') throw error(400, 'Each content block must have a type and a string value.', `content.${i}`);
    if (c.value === '') throw error(400, 'The content value must be a string at least one character in length.', `content.${i}.value`);
    const type = c.type.toLowerCase();
    if (type === 'text/plain' && out.text === undefined) out.text = c.value;
    else if (type === 'text/html' && out.html === undefined) out.html = c.value;
    else out.others.push({ content: Buffer.from(c.value, 'utf8'), contentType: c.type, filename: `content-${i}` });
  });
  return out;
}

function readAttachments(v: unknown): OutgoingAttachment[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw error(400, 'The attachments must be an array.', 'attachments');
  return v.map((a, i) => {
    const where = `attachments.${i}`;
    if (!isObject(a)) throw error(400, 'Each attachment must be an object.', where);
    if (typeof a.content !== 'string' || a.content === '') throw error(400, 'The attachment content is required.', `${where}.content`);
    if (typeof a.filename !== 'string' || a.filename === '') throw error(400, 'The attachment filename parameter is required.', `${where}.filename`);
    const content = decodeBase64(a.content);
    if (!content) throw error(400, 'The attachment content must be base64 encoded.', `${where}.content`);
    const disposition = a.disposition === undefined || a.disposition === null ? 'attachment' : a.disposition;
    if (disposition !== 'attachment' && disposition !== 'inline') throw error(400, 'The disposition must be inline or attachment.', `${where}.disposition`);
    if (a.type !== undefined && a.type !== null && typeof a.type !== 'string') throw error(400, 'The attachment type must be a string.', `${where}.type`);
    // @sendgrid/helpers writes an attachment's `contentId` as is (its snake-casing does not reach into arrays).
    const cidField = a.content_id ?? a.contentId;
    const cid = typeof cidField === 'string' && cidField !== '' ? cidField : undefined;
    if (disposition === 'inline' && !cid) throw error(400, 'The content_id parameter is required for an inline attachment.', `${where}.content_id`);
    return { content, filename: a.filename, ...(typeof a.type === 'string' ? { contentType: a.type } : {}), ...(cid ? { cid } : {}), inline: disposition === 'inline' };
  });
}

export const sendgrid: ProviderApiModule<SendGridRoute> = { maxRequestBytes: SENDGRID_MAX_REQUEST_BYTES, authenticate, handle, fail };
