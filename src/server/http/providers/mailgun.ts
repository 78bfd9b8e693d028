// Mailgun's Messages API (docs/providers.md#mailgun), shapes from Mailgun's API reference and the
// `mailgun.js` SDK: POST /v3/{domain}/messages (a form: multipart or URL-encoded, read by busboy)
// and POST /v3/{domain}/messages.mime (a whole MIME message in the `message` file), HTTP Basic
// `api:<provider key>`, answered `{id, message: "Queued. Thank you."}`. Errors `{message}`; a wrong
// key gets 401 `Forbidden` as plain text, as Mailgun answers.
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { domainProblem } from '../../../core/ids';
import { isFieldName } from '../../store/headers';
import { sendJson } from '../respond';
import { checkProviderKey, type FailureKind, type ProviderApiModule, type ProviderContext, ProviderError } from './context';
import { addressFieldProblem, jsonDepthProblem, parseMailbox, parseMailboxes, templateText } from './fields';
import { envelopeOf, rawEnvelope, type Mailbox, type OutgoingAttachment, storeMail, storeRaw, TEMPLATE_HEADER, TEST_MODE_HEADER } from './mail';
import { requestFault } from '../fault';
import { MultipartError, parseFormBody, type ParsedForm } from './multipart';

export type MailgunRoute = { kind: 'send' | 'mime'; domain: string };

/** Mailgun's limits: 1,000 recipients a message, 25 MB a message (the request a little more: form framing). */
const MAILGUN_MAX_RECIPIENTS = 1000;
const MAILGUN_MAX_REQUEST_BYTES = 26 * 1024 * 1024;

const FIELDS = new Set(['from', 'to', 'cc', 'bcc', 'subject', 'text', 'html', 'amp-html', 'template', 't:version', 't:text', 't:variables', 'recipient-variables', 'message']);
/** The `o:` options Mailgun documents; their values are kept as headers. */
const OPTIONS = new Set([
  'o:tag', 'o:testmode', 'o:deliverytime', 'o:deliverytime-optimize-period', 'o:time-zone-localize', 'o:dkim', 'o:secondary-dkim', 'o:secondary-dkim-public',
  'o:tracking', 'o:tracking-clicks', 'o:tracking-opens', 'o:tracking-pixel-location-top', 'o:require-tls', 'o:skip-verification', 'o:sending-ip', 'o:sending-ip-pool',
  'o:archive-to', 'o:suppress-headers', 'o:native-send',
]);
const FILES = new Set(['attachment', 'inline', 'message']);

function error(status: number, message: string): ProviderError {
  return new ProviderError(status, { message }, message);
}

function fail(kind: FailureKind, message: string, status: number): ProviderError {
  switch (kind) {
    case 'injected':
      return error(status, message);
    case 'auth_missing':
    case 'auth_wrong':
      return new ProviderError(401, 'Forbidden', 'Forbidden', { 'www-authenticate': 'Basic realm="MG API"' });
    case 'too_large':
      return error(413, message);
    case 'not_found':
      return error(404, message);
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
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.headers.authorization ?? '');
  const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  // The key is always compared, so a wrong user and a wrong key take the same time.
  const outcome = checkProviderKey(ctx, colon < 0 ? undefined : decoded.slice(colon + 1));
  if (outcome !== 'ok' || decoded.slice(0, colon) !== 'api') throw fail(m ? 'auth_wrong' : 'auth_missing', '', 401);
}

async function readForm(req: http.IncomingMessage, body: Buffer): Promise<ParsedForm> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'multipart/form-data' && type !== 'application/x-www-form-urlencoded') throw error(400, 'Send the parameters as multipart/form-data or application/x-www-form-urlencoded.');
  try {
    return await parseFormBody(req.headers, body);
  } catch (e) {
    if (MultipartError.is(e)) throw error(400, `The request is not a form that can be read: ${e.message}.`);
    throw e;
  }
}

function all(form: ParsedForm, name: string): string[] {
  return form.fields.filter(([n]) => n === name).map(([, v]) => v);
}

function one(form: ParsedForm, name: string): string | undefined {
  return all(form, name)[0];
}

function addresses(form: ParsedForm, name: string): Mailbox[] {
  const values = all(form, name);
  // Every value of the parameter together is bounded before any of it is parsed.
  const tooLong = addressFieldProblem(values.reduce((n, v) => n + v.length, 0), MAILGUN_MAX_RECIPIENTS);
  if (tooLong) throw error(400, `'${name}' parameter ${tooLong}.`);
  const out: Mailbox[] = [];
  for (const v of values) {
    if (v.trim() === '') continue;
    const parsed = parseMailboxes(v, MAILGUN_MAX_RECIPIENTS);
    if (typeof parsed === 'string') throw error(400, `'${name}' parameter is not a valid address. please check documentation`);
    out.push(...parsed);
  }
  return out;
}

/** A message id as Mailgun gives it: the Message-ID of the stored message. */
function newId(domain: string): string {
  const t = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `<${t}.${randomBytes(8).toString('hex')}@${domain}>`;
}

async function handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, route: MailgunRoute, body: Buffer): Promise<void> {
  const domain = route.domain.toLowerCase();
  if (domainProblem(domain)) throw error(404, `Domain not found: ${route.domain.slice(0, 100)}`);
  const form = await readForm(req, body);
  for (const [name] of form.fields) {
    if (FIELDS.has(name) || OPTIONS.has(name) || /^(h|v):./.test(name)) continue;
    throw error(400, `'${name.slice(0, 60)}' is not a parameter of this API. please check documentation`);
  }
  for (const f of form.files) if (!FILES.has(f.field)) throw error(400, `'${f.field.slice(0, 60)}' is not a file parameter of this API: use attachment or inline.`);
  const to = addresses(form, 'to');
  const cc = addresses(form, 'cc');
  const bcc = addresses(form, 'bcc');
  if (to.length === 0) throw error(400, 'to parameter is missing');
  if (to.length + cc.length + bcc.length > MAILGUN_MAX_RECIPIENTS) throw error(400, `Too many recipients: at most ${MAILGUN_MAX_RECIPIENTS} per message (to, cc and bcc).`);
  const deliveryTime = one(form, 'o:deliverytime');
  if (deliveryTime !== undefined) {
    const t = Date.parse(deliveryTime);
    if (!Number.isFinite(t) || t > ctx.clock.now()) throw error(400, `Scheduled sending is not supported by Test Inbox: o:deliverytime ${JSON.stringify(deliveryTime.slice(0, 60))} is not now or in the past. Send without it; the message is stored at once.`);
  }
  const meta: Array<[string, string]> = [];
  for (const tag of all(form, 'o:tag')) meta.push(['X-Mailgun-Tag', tag]);
  const vars: Record<string, string> = {};
  for (const [n, v] of form.fields) {
    if (n.startsWith('v:')) vars[n.slice(2)] = v;
    else if (n.startsWith('o:') && n !== 'o:tag' && n !== 'o:deliverytime') meta.push([`X-Mailgun-Option`, `${n.slice(2)}=${v}`]);
  }
  if (Object.keys(vars).length > 0) meta.push(['X-Mailgun-Variables', JSON.stringify(vars)]);
  const recipientVariables = one(form, 'recipient-variables');
  if (recipientVariables !== undefined) meta.push(['X-Mailgun-Recipient-Variables', recipientVariables]);
  const testMode = /^(yes|true|1)$/i.test(one(form, 'o:testmode') ?? '');
  if (testMode) meta.push([TEST_MODE_HEADER, 'Mailgun o:testmode: Mailgun would not have delivered this message']);
  const id = newId(domain);

  if (route.kind === 'mime') {
    const message = form.files.find((f) => f.field === 'message');
    if (!message) throw error(400, 'message parameter is missing');
    await requestFault(ctx.chaos, 'mailgun', () => rawEnvelope(message.content, [...to, ...cc, ...bcc].map((m) => m.address)), res);
    await storeRaw(ctx, { api: `Mailgun (POST /v3/${domain}/messages.mime)`, providerId: id, raw: message.content, recipients: [...to, ...cc, ...bcc].map((m) => m.address), meta });
    sendJson(res, 200, { id, message: 'Queued. Thank you.' });
    return;
  }
  const fromText = one(form, 'from');
  if (fromText === undefined || fromText.trim() === '') throw error(400, 'from parameter is missing');
  const from = parseMailbox(fromText);
  if (typeof from === 'string') throw error(400, "'from' parameter is not a valid address. please check documentation");
  let text = one(form, 'text');
  const html = one(form, 'html');
  const template = one(form, 'template');
  if (template !== undefined) {
    let data: unknown = one(form, 't:variables');
    try {
      data = typeof data === 'string' ? JSON.parse(data) : data;
    } catch {
      throw error(400, "'t:variables' parameter is not valid JSON.");
    }
    const deep = jsonDepthProblem(data);
    if (deep) throw error(400, `'t:variables' parameter ${deep}.`);
    text = templateText('Mailgun', template, data ?? vars);
    meta.push([TEMPLATE_HEADER, `Mailgun template ${template}${one(form, 't:version') ? ` version ${one(form, 't:version')}` : ''} (not rendered)`]);
  } else if (text === undefined && html === undefined && one(form, 'amp-html') === undefined) {
    throw error(400, "Need at least one of 'text', 'html', 'amp-html' or 'template' parameters specified");
  }
  const headers: Array<[string, string]> = form.fields.filter(([n]) => n.startsWith('h:')).map(([n, v]) => [n.slice(2), v]);
  for (const [n] of headers) if (!isFieldName(n)) throw error(400, `'h:${n.slice(0, 60)}' does not name a valid header: a header name is printable ASCII without blanks or a colon.`);
  const attachments: OutgoingAttachment[] = form.files
    .filter((f) => f.field !== 'message')
    .map((f) => ({ content: f.content, filename: f.filename, contentType: f.mimeType, ...(f.field === 'inline' ? { cid: f.filename, inline: true } : {}) }));
  const amp = one(form, 'amp-html');
  if (amp !== undefined) attachments.push({ content: Buffer.from(amp, 'utf8'), contentType: 'text/x-amp-html', filename: 'amp.html' });
  await requestFault(ctx.chaos, 'mailgun', () => envelopeOf([{ from, to, cc, bcc }]), res);
  await storeMail(ctx, {
    api: `Mailgun (POST /v3/${domain}/messages)`,
    providerId: id,
    messageId: id,
    from,
    to,
    cc,
    bcc,
    subject: one(form, 'subject') ?? '',
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    attachments,
    headers,
    meta,
  });
  sendJson(res, 200, { id, message: 'Queued. Thank you.' });
}

export const mailgun: ProviderApiModule<MailgunRoute> = { maxRequestBytes: MAILGUN_MAX_REQUEST_BYTES, authenticate, handle, fail };
