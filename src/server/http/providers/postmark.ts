// Postmark's Email API (docs/providers.md#postmark), shapes from Postmark's API reference and the
// `postmark` SDK: POST /email, /email/batch, /email/withTemplate, /email/batchWithTemplates,
// `X-Postmark-Server-Token: <provider key>`. A send answers
// `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}` (an array for a batch, where each
// message is answered on its own, as Postmark does). Errors `{ErrorCode, Message}`.
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { isFieldName } from '../../store/headers';
import { sendJson } from '../respond';
import { checkProviderKey, type FailureKind, type ProviderApiModule, type ProviderContext, ProviderError } from './context';
import { addressFieldProblem, decodeBase64, isObject, jsonDepthProblem, parseJson, parseMailbox, parseMailboxes, templateText, typeName, unknownFields } from './fields';
import { envelopeOf, type Mailbox, MailRefusal, type OutgoingAttachment, type OutgoingMail, storeMail, TEMPLATE_HEADER } from './mail';
import { requestFault } from '../fault';

export type PostmarkRoute = { kind: 'send' | 'batch' | 'template' | 'batchTemplate' };

/** Postmark's limits: 50 recipients (To, Cc and Bcc together), 500 messages a batch, 10 MB a message, 50 MB a batch. */
const POSTMARK_MAX_RECIPIENTS = 50;
const POSTMARK_MAX_BATCH = 500;
const POSTMARK_MAX_REQUEST_BYTES = 50 * 1024 * 1024;
const POSTMARK_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** Postmark's error codes (its API reference, "Error codes"). */
const CODE = { BAD_TOKEN: 10, INVALID_REQUEST: 300, INVALID_JSON: 402, INCOMPATIBLE_JSON: 403, JSON_REQUIRED: 409, TOO_MANY_BATCH: 410 } as const;

const MESSAGE_FIELDS = ['From', 'To', 'Cc', 'Bcc', 'Subject', 'Tag', 'HtmlBody', 'TextBody', 'ReplyTo', 'Headers', 'TrackOpens', 'TrackLinks', 'Metadata', 'Attachments', 'MessageStream'];
const SEND_FIELDS = new Set(MESSAGE_FIELDS);
const TEMPLATE_FIELDS = new Set([...MESSAGE_FIELDS.filter((f) => f !== 'Subject' && f !== 'HtmlBody' && f !== 'TextBody'), 'TemplateId', 'TemplateAlias', 'TemplateModel', 'InlineCss']);

function error(status: number, code: number, message: string): ProviderError {
  return new ProviderError(status, { ErrorCode: code, Message: message }, message);
}

const invalid = (message: string): ProviderError => error(422, CODE.INVALID_REQUEST, message);

function fail(kind: FailureKind, message: string, status: number): ProviderError {
  switch (kind) {
    case 'injected':
      return error(status, 0, status === 429 ? 'Rate limit exceeded, too many requests.' : message);
    case 'auth_missing':
      return error(401, CODE.BAD_TOKEN, 'No Account or Server API tokens were supplied in the HTTP headers. Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.');
    case 'auth_wrong':
      return error(401, CODE.BAD_TOKEN, 'The Server Token you provided in the X-Postmark-Server-Token request header was invalid. Please verify that you are using a valid token.');
    case 'too_large':
      return error(413, CODE.INVALID_REQUEST, message);
    case 'not_found':
      return error(404, 0, message);
    case 'method':
      return error(405, 0, message);
    case 'unprocessable':
    case 'bad_request':
      return invalid(message);
    case 'unsupported_media_type':
      return error(415, CODE.JSON_REQUIRED, 'JSON required.');
    default:
      return error(status >= 500 ? status : 500, 0, message);
  }
}

function authenticate(ctx: ProviderContext, req: http.IncomingMessage): void {
  const token = req.headers['x-postmark-server-token'];
  const outcome = checkProviderKey(ctx, typeof token === 'string' ? token.trim() : undefined);
  if (outcome !== 'ok') throw fail(outcome === 'missing' ? 'auth_missing' : 'auth_wrong', '', 401);
}

async function handle(ctx: ProviderContext, req: http.IncomingMessage, res: http.ServerResponse, route: PostmarkRoute, body: Buffer): Promise<void> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type !== 'application/json') throw error(415, CODE.JSON_REQUIRED, "JSON required: send the request with 'Content-Type: application/json'.");
  const value = parseJson(body);
  if (value === undefined) throw error(422, CODE.INVALID_JSON, 'Received invalid JSON input.');
  const deep = jsonDepthProblem(value);
  if (deep) throw error(422, CODE.INCOMPATIBLE_JSON, `The JSON input you provided is syntactically correct, but still not the one we expect: it ${deep}.`);
  const template = route.kind === 'template' || route.kind === 'batchTemplate';
  const endpoint = { send: 'POST /email', batch: 'POST /email/batch', template: 'POST /email/withTemplate', batchTemplate: 'POST /email/batchWithTemplates' }[route.kind];
  if (route.kind === 'send' || route.kind === 'template') {
    if (!isObject(value)) throw error(422, CODE.INCOMPATIBLE_JSON, `The JSON input you provided is syntactically correct, but still not the one we expect: a message object, not ${typeName(value)}.`);
    const mail = readMessage(value, template, endpoint);
    await requestFault(ctx.chaos, 'postmark', () => envelopeOf([mail]), res);
    await store(ctx, mail);
    sendJson(res, 200, answer(mail));
    return;
  }
  const list = route.kind === 'batchTemplate' ? (isObject(value) ? value.Messages : undefined) : value;
  if (!Array.isArray(list)) {
    throw error(422, CODE.INCOMPATIBLE_JSON, route.kind === 'batchTemplate' ? 'The JSON input must be an object with a Messages array.' : `The JSON input must be an array of messages, not ${typeName(value)}.`);
  }
  if (list.length > POSTMARK_MAX_BATCH) throw error(422, CODE.TOO_MANY_BATCH, `You may only send up to ${POSTMARK_MAX_BATCH} messages in a batched call.`);
  // Each message of a batch is answered on its own, as Postmark does: a bad one does not stop the others.
  const answers: unknown[] = [];
  const mails: Array<OutgoingMail | undefined> = list.map((item, i) => {
    try {
      if (!isObject(item)) throw error(422, CODE.INCOMPATIBLE_JSON, `Each message must be an object, not ${typeName(item)}.`);
      return readMessage(item, template, endpoint);
    } catch (e) {
      if (!ProviderError.is(e)) throw e;
      answers[i] = e.body;
      return undefined;
    }
  });
  // A fault rule answers for the whole request, before any of its messages is stored.
  await requestFault(ctx.chaos, 'postmark', () => envelopeOf(mails.filter((m) => m !== undefined)), res);
  for (const [i, mail] of mails.entries()) {
    if (!mail) continue;
    try {
      await store(ctx, mail);
      answers[i] = answer(mail);
    } catch (e) {
      if (ProviderError.is(e)) answers[i] = e.body;
      else if (MailRefusal.is(e)) answers[i] = { ErrorCode: CODE.INVALID_REQUEST, Message: e.message };
      else throw e;
    }
  }
  sendJson(res, 200, answers);
}

async function store(ctx: ProviderContext, mail: OutgoingMail): Promise<void> {
  // Postmark's own message size, within the server's.
  await storeMail({ ...ctx, maxMessageBytes: Math.min(ctx.maxMessageBytes, POSTMARK_MAX_MESSAGE_BYTES) }, mail);
}

function answer(mail: OutgoingMail): Record<string, unknown> {
  const list = (ms: Mailbox[] | undefined): string => (ms ?? []).map((m) => m.address).join(', ');
  return {
    To: list(mail.to),
    ...(mail.cc?.length ? { Cc: list(mail.cc) } : {}),
    ...(mail.bcc?.length ? { Bcc: list(mail.bcc) } : {}),
    SubmittedAt: (mail.date ?? new Date()).toISOString(),
    MessageID: mail.providerId,
    ErrorCode: 0,
    Message: 'OK',
  };
}

function str(obj: Record<string, unknown>, field: string): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw error(422, CODE.INCOMPATIBLE_JSON, `The JSON input you provided is syntactically correct, but still not the one we expect: '${field}' must be a string, not ${typeName(v)}.`);
  return v;
}

function addressList(obj: Record<string, unknown>, field: string): Mailbox[] {
  const text = str(obj, field);
  if (text === undefined || text.trim() === '') return [];
  const tooLong = addressFieldProblem(text.length, POSTMARK_MAX_RECIPIENTS);
  if (tooLong) throw invalid(`Error parsing '${field}': the field ${tooLong}.`);
  const parsed = parseMailboxes(text, POSTMARK_MAX_RECIPIENTS);
  if (typeof parsed === 'string') throw invalid(`Error parsing '${field}': Illegal email address: ${parsed}.`);
  return parsed;
}

function readMessage(obj: Record<string, unknown>, template: boolean, endpoint: string): OutgoingMail {
  const extra = unknownFields(obj, template ? TEMPLATE_FIELDS : SEND_FIELDS);
  if (extra.length > 0) throw error(422, CODE.INCOMPATIBLE_JSON, `The JSON input you provided is syntactically correct, but still not the one we expect: unknown field${extra.length > 1 ? 's' : ''} ${extra.map((f) => `'${f.slice(0, 60)}'`).join(', ')}.`);
  const fromText = str(obj, 'From');
  const from = fromText === undefined ? 'is empty' : parseMailbox(fromText);
  if (typeof from === 'string') throw invalid(`Invalid 'From' address: ${JSON.stringify((fromText ?? '').slice(0, 100))} (${from}).`);
  const to = addressList(obj, 'To');
  const cc = addressList(obj, 'Cc');
  const bcc = addressList(obj, 'Bcc');
  if (to.length + cc.length + bcc.length === 0) throw invalid('Zero recipients specified');
  if (to.length + cc.length + bcc.length > POSTMARK_MAX_RECIPIENTS) throw invalid(`Maximum of ${POSTMARK_MAX_RECIPIENTS} recipients (To, Cc and Bcc together) per message; this one has ${to.length + cc.length + bcc.length}.`);
  const replyTo = addressList(obj, 'ReplyTo');
  const meta: Array<[string, string]> = [];
  const tag = str(obj, 'Tag');
  if (tag) meta.push(['X-PM-Tag', tag]);
  const stream = str(obj, 'MessageStream');
  meta.push(['X-PM-Message-Stream', stream || 'outbound']);
  if (obj.TrackOpens !== undefined && obj.TrackOpens !== null) meta.push(['X-PM-TrackOpens', String(obj.TrackOpens)]);
  const trackLinks = str(obj, 'TrackLinks');
  if (trackLinks) meta.push(['X-PM-TrackLinks', trackLinks]);
  if (obj.Metadata !== undefined && obj.Metadata !== null) {
    if (!isObject(obj.Metadata)) throw error(422, CODE.INCOMPATIBLE_JSON, "'Metadata' must be an object of string values.");
    for (const [k, v] of Object.entries(obj.Metadata)) meta.push([`X-PM-Metadata-${k.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}`, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
  const headers: Array<[string, string]> = [];
  if (obj.Headers !== undefined && obj.Headers !== null) {
    if (!Array.isArray(obj.Headers)) throw error(422, CODE.INCOMPATIBLE_JSON, "'Headers' must be an array of {Name, Value}.");
    for (const h of obj.Headers) {
      if (!isObject(h) || typeof h.Name !== 'string' || !isFieldName(h.Name) || typeof h.Value !== 'string') throw invalid('Each header needs a valid Name and a string Value.');
      headers.push([h.Name, h.Value]);
    }
  }
  let subject: string | undefined;
  let text: string | undefined;
  let html: string | undefined;
  if (template) {
    const id = obj.TemplateId;
    const alias = str(obj, 'TemplateAlias');
    if ((id === undefined || id === null) && !alias) throw invalid("Either 'TemplateId' or 'TemplateAlias' is required.");
    if (id !== undefined && id !== null && (typeof id !== 'number' || !Number.isInteger(id))) throw error(422, CODE.INCOMPATIBLE_JSON, "'TemplateId' must be a whole number.");
    const name = alias ?? String(id);
    text = templateText('Postmark', name, obj.TemplateModel);
    subject = `Postmark template ${name}`;
    meta.push([TEMPLATE_HEADER, `Postmark template ${name} (not rendered)`]);
  } else {
    subject = str(obj, 'Subject') ?? '';
    text = str(obj, 'TextBody');
    html = str(obj, 'HtmlBody');
    if (text === undefined && html === undefined) throw invalid('Provide either email TextBody or HtmlBody or both.');
  }
  return {
    api: `Postmark (${endpoint})`,
    providerId: randomUUID(),
    from,
    to,
    cc,
    bcc,
    replyTo,
    subject,
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    attachments: readAttachments(obj.Attachments),
    headers,
    meta,
    date: new Date(),
  };
}

function readAttachments(v: unknown): OutgoingAttachment[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw error(422, CODE.INCOMPATIBLE_JSON, "'Attachments' must be an array.");
  return v.map((a, i) => {
    if (!isObject(a) || typeof a.Name !== 'string' || typeof a.Content !== 'string') throw invalid(`Attachment ${i} needs a Name and a base64 Content.`);
    const content = decodeBase64(a.Content);
    if (!content) throw invalid(`Attachment ${i}: its Content is not base64.`);
    const cidText = typeof a.ContentID === 'string' ? a.ContentID.replace(/^cid:/i, '') : '';
    return {
      content,
      filename: a.Name,
      ...(typeof a.ContentType === 'string' && a.ContentType !== '' ? { contentType: a.ContentType } : {}),
      ...(cidText !== '' ? { cid: cidText } : {}),
      inline: a.Disposition === 'inline' || cidText !== '',
    };
  });
}

export const postmark: ProviderApiModule<PostmarkRoute> = { maxRequestBytes: POSTMARK_MAX_REQUEST_BYTES, authenticate, handle, fail };
