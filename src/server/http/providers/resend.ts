// Resend's send API (docs/providers.md#resend), shapes from Resend's OpenAPI spec and error
// reference: POST /emails answers `{id}`, POST /emails/batch `{data: [{id}]}` (with
// `x-batch-validation: permissive`, also `errors: [{index, message}]`). Auth `Authorization:
// Bearer <provider key>`. Errors `{statusCode, name, message}`. A repeated Idempotency-Key with
// the same body answers the first answer again and stores nothing; with another body, 409.
import { createHash, randomUUID } from 'node:crypto';
import type http from 'node:http';
import { isFieldName } from '../../store/headers';
import { sendJson } from '../respond';
import { checkProviderKey, type FailureKind, type ProviderApiModule, type ProviderContext, ProviderError } from './context';
import { addressFieldProblem, decodeBase64, isObject, jsonDepthProblem, parseJson, parseMailbox, parseMailboxes, templateText, typeName, unknownFields } from './fields';
import { envelopeOf, type Mailbox, type OutgoingAttachment, type OutgoingMail, storeMail, TEMPLATE_HEADER } from './mail';
import { requestFault } from '../fault';

export type ResendRoute = { kind: 'send' | 'batch' };

/** Resend's limits: 50 recipients an email, 100 emails a batch, 40 MB an email after base64 encoding. */
const RESEND_MAX_RECIPIENTS = 50;
const RESEND_MAX_BATCH = 100;
const RESEND_MAX_REQUEST_BYTES = 40 * 1024 * 1024;
/** An idempotency key is remembered this long (Resend: 24 hours). */
const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const MAX_IDEMPOTENCY_KEY = 256;

const FIELDS = new Set(['from', 'to', 'subject', 'bcc', 'cc', 'reply_to', 'html', 'text', 'template', 'headers', 'scheduled_at', 'attachments', 'tags', 'topic_id']);
/** Resend's batch takes neither attachments nor a schedule. */
const BATCH_REFUSED = ['attachments', 'scheduled_at'];
const TAG_RE = /^[A-Za-z0-9_-]{1,256}$/;

function error(status: number, name: string, message: string, headers?: Record<string, string>): ProviderError {
  return new ProviderError(status, { statusCode: status, name, message }, message, headers);
}

const invalid = (message: string): ProviderError => error(422, 'validation_error', message);

/** Resend's error names by status (its API reference, "Errors"), for a fault rule's status. */
function injectedName(status: number): string {
  const names: Record<number, string> = { 400: 'validation_error', 401: 'missing_api_key', 403: 'invalid_api_key', 404: 'not_found', 405: 'method_not_allowed', 409: 'concurrent_idempotent_requests', 422: 'validation_error', 429: 'rate_limit_exceeded', 451: 'security_error', 500: 'internal_server_error' };
  return names[status] ?? (status >= 500 ? 'application_error' : 'validation_error');
}

function fail(kind: FailureKind, message: string, status: number): ProviderError {
  switch (kind) {
    case 'injected':
      return error(status, injectedName(status), message);
    case 'auth_missing':
      return error(401, 'missing_api_key', 'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY');
    case 'auth_wrong':
      return error(401, 'validation_error', 'API key is invalid');
    case 'not_found':
      return error(404, 'not_found', 'The requested endpoint does not exist.');
    case 'method':
      return error(405, 'method_not_allowed', 'Method is not allowed for the requested path.');
    case 'too_large':
      return error(413, 'validation_error', message);
    case 'unprocessable':
      return invalid(message);
    case 'bad_request':
    case 'unsupported_media_type':
      return error(400, 'validation_error', message);
    default:
      return error(status >= 500 ? status : 500, 'application_error', message);
  }
}

interface Remembered {
  hash: string;
  expires: number;
  /** The answer, once the first request got it. */
  answer?: { status: number; body: unknown };
}

/** Idempotency keys seen, per endpoint; expired entries are dropped as new ones arrive. */
const remembered = new WeakMap<ProviderContext, Map<string, Remembered>>();

function authenticate(ctx: ProviderContext, req: http.IncomingMessage): void {
  const header = req.headers.authorization ?? '';
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const outcome = checkProviderKey(ctx, m?.[1]);
  if (outcome === 'missing') throw fail(header === '' ? 'auth_missing' : 'auth_wrong', '', 401);
  if (outcome === 'wrong') throw fail('auth_wrong', '', 401);
}

async function handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, route: ResendRoute, body: Buffer): Promise<void> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'application/json') throw error(400, 'validation_error', 'The request body must be JSON: send it with Content-Type: application/json.');
  const value = parseJson(body);
  if (value === undefined) throw error(400, 'validation_error', 'The request body is not valid JSON.');
  const deep = jsonDepthProblem(value);
  if (deep) throw invalid(`The request body ${deep}.`);
  const key = req.headers['idempotency-key'];
  if (key === undefined) return answer(res, await send(ctx, req, res, route, value));
  if (typeof key !== 'string' || key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY) throw error(400, 'invalid_idempotency_key', 'The key must be between 1-256 chars.');
  let seen = remembered.get(ctx);
  if (!seen) remembered.set(ctx, (seen = new Map()));
  const now = ctx.clock.now();
  for (const [k, r] of seen) if (r.expires <= now) seen.delete(k);
  const slot = `${route.kind}\u0000${key}`;
  const hash = createHash('sha256').update(body).digest('hex');
  const known = seen.get(slot);
  if (known) {
    if (known.hash !== hash) throw error(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload.');
    if (!known.answer) throw error(409, 'concurrent_idempotent_requests', 'Same idempotency key used while original request is still in progress.');
    return answer(res, known.answer);
  }
  const entry: Remembered = { hash, expires: now + IDEMPOTENCY_TTL_MS };
  seen.set(slot, entry);
  try {
    entry.answer = await send(ctx, req, res, route, value);
  } catch (e) {
    // A refused request is not remembered: the sender may fix it and retry with the same key.
    seen.delete(slot);
    throw e;
  }
  answer(res, entry.answer);
}

function answer(res: http.ServerResponse, a: { status: number; body: unknown }): void {
  sendJson(res, a.status, a.body);
}

async function send(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, route: ResendRoute, value: unknown): Promise<{ status: number; body: unknown }> {
  if (route.kind === 'send') {
    if (!isObject(value)) throw invalid(`The request body must be a JSON object, not ${typeName(value)}.`);
    const mail = readEmail(ctx, value, false, 'POST /emails');
    await requestFault(ctx.chaos, 'resend', () => envelopeOf([mail]), res);
    await storeMail(ctx, mail);
    return { status: 200, body: { id: mail.providerId } };
  }
  if (!Array.isArray(value)) throw invalid(`The request body must be a JSON array of emails, not ${typeName(value)}.`);
  if (value.length === 0) throw invalid('The batch is empty: send 1 to 100 emails.');
  if (value.length > RESEND_MAX_BATCH) throw invalid(`Too many emails in the batch: ${value.length}; the limit is ${RESEND_MAX_BATCH}.`);
  const mode = String(req.headers['x-batch-validation'] ?? 'strict').toLowerCase();
  if (mode !== 'strict' && mode !== 'permissive') throw invalid("The x-batch-validation header must be 'strict' or 'permissive'.");
  const mails: Array<OutgoingMail | undefined> = [];
  const errors: Array<{ index: number; message: string }> = [];
  value.forEach((item, index) => {
    try {
      if (!isObject(item)) throw invalid(`Email ${index} must be a JSON object, not ${typeName(item)}.`);
      mails.push(readEmail(ctx, item, true, 'POST /emails/batch'));
    } catch (e) {
      if (!ProviderError.is(e) || mode === 'strict') throw strict(e, index);
      mails.push(undefined);
      errors.push({ index, message: e.message });
    }
  });
  await requestFault(ctx.chaos, 'resend', () => envelopeOf(mails.filter((m) => m !== undefined)), res);
  const data: Array<{ id: string }> = [];
  for (const mail of mails) {
    if (!mail) continue;
    await storeMail(ctx, mail);
    data.push({ id: mail.providerId });
  }
  return { status: 200, body: mode === 'permissive' ? { data, errors } : { data } };
}

/** In strict mode the first invalid email refuses the whole batch; its message names it. */
function strict(e: unknown, index: number): unknown {
  if (!ProviderError.is(e)) return e;
  const body = e.body as { name: string };
  return error(e.status, body.name, `emails[${index}]: ${e.message}`);
}

function addresses(v: unknown, field: string, required: boolean): Mailbox[] {
  if (v === undefined || v === null) {
    if (required) throw error(422, 'missing_required_field', `Missing \`${field}\` field.`);
    return [];
  }
  const list = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
  if (!list) throw invalid(`The \`${field}\` field must be a string or an array of strings.`);
  if (required && list.length === 0) throw error(422, 'missing_required_field', `Missing \`${field}\` field.`);
  // The whole field is bounded before any of it is parsed.
  const tooLong = addressFieldProblem(list.reduce((n, text) => n + text.length, 0), RESEND_MAX_RECIPIENTS);
  if (tooLong) throw invalid(`The \`${field}\` field ${tooLong}.`);
  const out: Mailbox[] = [];
  for (const text of list) {
    const parsed = parseMailboxes(text, RESEND_MAX_RECIPIENTS);
    if (typeof parsed === 'string') throw invalid(`Invalid \`${field}\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format (${parsed}).`);
    out.push(...parsed);
  }
  return out;
}

function optionalString(obj: Record<string, unknown>, field: string): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`The \`${field}\` field must be a string, not ${typeName(v)}.`);
  return v;
}

function readEmail(ctx: ProviderContext, obj: Record<string, unknown>, batch: boolean, endpoint: string): OutgoingMail {
  const extra = unknownFields(obj, FIELDS);
  if (extra.length > 0) throw invalid(`Unknown field${extra.length > 1 ? 's' : ''} ${extra.map((f) => `\`${f.slice(0, 60)}\``).join(', ')}.`);
  if (batch) for (const f of BATCH_REFUSED) if (obj[f] !== undefined) throw invalid(`The \`${f}\` field is not supported in batch emails.`);
  const fromText = optionalString(obj, 'from');
  if (fromText === undefined || fromText.trim() === '') throw error(422, 'missing_required_field', 'Missing `from` field.');
  const from = parseMailbox(fromText);
  if (typeof from === 'string') throw invalid(`Invalid \`from\` field. The email address needs to follow the \`email@example.com\` or \`Name <email@example.com>\` format (${from}).`);
  const to = addresses(obj.to, 'to', true);
  const cc = addresses(obj.cc, 'cc', false);
  const bcc = addresses(obj.bcc, 'bcc', false);
  const replyTo = addresses(obj.reply_to, 'reply_to', false);
  if (to.length > RESEND_MAX_RECIPIENTS) throw invalid(`The \`to\` field may hold at most ${RESEND_MAX_RECIPIENTS} addresses; it has ${to.length}.`);
  if (to.length + cc.length + bcc.length > RESEND_MAX_RECIPIENTS) throw invalid(`An email may have at most ${RESEND_MAX_RECIPIENTS} recipients (to, cc and bcc); it has ${to.length + cc.length + bcc.length}.`);
  const subject = optionalString(obj, 'subject');
  if (subject === undefined) throw error(422, 'missing_required_field', 'Missing `subject` field.');
  let text = optionalString(obj, 'text');
  const html = optionalString(obj, 'html');
  const meta: Array<[string, string]> = [];
  if (obj.template !== undefined && obj.template !== null) {
    if (!isObject(obj.template) || typeof obj.template.id !== 'string' || obj.template.id === '') throw invalid('The `template` field must be an object with a string `id`.');
    if (html !== undefined || text !== undefined) throw invalid('An email with a `template` takes neither `html` nor `text`.');
    text = templateText('Resend', obj.template.id, obj.template.variables);
    meta.push([TEMPLATE_HEADER, `Resend template ${obj.template.id} (not rendered)`]);
  }
  const scheduled = optionalString(obj, 'scheduled_at');
  if (scheduled !== undefined) refuseSchedule(ctx, scheduled);
  const headers: Array<[string, string]> = [];
  if (obj.headers !== undefined && obj.headers !== null) {
    if (!isObject(obj.headers)) throw invalid('The `headers` field must be an object of header names and string values.');
    for (const [k, v] of Object.entries(obj.headers)) {
      if (typeof v !== 'string' || !isFieldName(k)) throw invalid(`The header ${JSON.stringify(k.slice(0, 60))} must have a valid name and a string value.`);
      headers.push([k, v]);
    }
  }
  if (obj.tags !== undefined && obj.tags !== null) {
    if (!Array.isArray(obj.tags)) throw invalid('The `tags` field must be an array of {name, value}.');
    for (const t of obj.tags) {
      if (!isObject(t) || typeof t.name !== 'string' || !TAG_RE.test(t.name) || (t.value !== undefined && (typeof t.value !== 'string' || !TAG_RE.test(t.value)))) {
        throw invalid('Each tag needs a `name` (and may have a `value`) of ASCII letters, numbers, underscores or dashes, at most 256 characters.');
      }
      meta.push(['X-Resend-Tag', t.value === undefined ? t.name : `${t.name}=${t.value as string}`]);
    }
  }
  const topic = optionalString(obj, 'topic_id');
  if (topic !== undefined) meta.push(['X-Resend-Topic-Id', topic]);
  return {
    api: `Resend (${endpoint})`,
    providerId: randomUUID(),
    from,
    to,
    cc,
    bcc,
    replyTo,
    subject,
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    attachments: readAttachments(obj.attachments),
    headers,
    meta,
  };
}

/** Natural-language schedules Resend takes ("in 1 min") and dates after now are refused: the server sends nothing later. */
function refuseSchedule(ctx: ProviderContext, text: string): void {
  const t = Date.parse(text);
  if (Number.isFinite(t) && t <= ctx.clock.now()) return;
  throw invalid(`Scheduled sending is not supported by Test Inbox: \`scheduled_at\` ${JSON.stringify(text.slice(0, 60))} is not now or in the past. Send without \`scheduled_at\`; the message is stored at once.`);
}

function readAttachments(v: unknown): OutgoingAttachment[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid('The `attachments` field must be an array.');
  return v.map((a, i) => {
    if (!isObject(a)) throw error(422, 'invalid_attachment', `Attachment ${i} must be an object.`);
    if (a.path !== undefined && a.path !== null) {
      throw error(422, 'invalid_attachment', `Attachment ${i} is given by \`path\` (a URL): Test Inbox never fetches a URL. Send the file's \`content\` (base64) instead.`);
    }
    if (typeof a.content !== 'string') throw error(422, 'invalid_attachment', 'Attachment must have either a `content` or `path`.');
    const content = decodeBase64(a.content);
    if (!content) throw error(422, 'invalid_attachment', `Attachment ${i}: \`content\` is not base64.`);
    for (const f of ['filename', 'content_type', 'content_id'] as const) {
      if (a[f] !== undefined && a[f] !== null && typeof a[f] !== 'string') throw error(422, 'invalid_attachment', `Attachment ${i}: \`${f}\` must be a string.`);
    }
    return {
      content,
      ...(typeof a.filename === 'string' ? { filename: a.filename } : {}),
      ...(typeof a.content_type === 'string' ? { contentType: a.content_type } : {}),
      ...(typeof a.content_id === 'string' && a.content_id !== '' ? { cid: a.content_id } : {}),
    };
  });
}

export const resend: ProviderApiModule<ResendRoute> = { maxRequestBytes: RESEND_MAX_REQUEST_BYTES, authenticate, handle, fail };
