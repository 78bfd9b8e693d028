// Runtime validation of every response the client reads (docs/api.md §2 and the extras in
// docs/api.md). Hand-written: each reader names the field at fault (`msgs[3].time: expected
// integer`) in an ApiError of code `protocol`. Unknown extra fields are tolerated, because
// the hosted service sends many (`origfrom`, `size`, `stream`, `source`, `ip`, …).
import type {
  AttachmentInfo,
  ChaosList,
  ChaosRuleInfo,
  ClickableLink,
  DeleteResult,
  DomainsResponse,
  EmailPart,
  HealthResponse,
  InjectionResult,
  LatestCode,
  LatestLink,
  MessageSummary,
  SearchResponse,
  StreamEvent,
  WebhookDeliveryResult,
  WebUiSession,
  WebUiTicket,
} from '../core/wire';
import { isPhoneInbox, parseMessageId } from '../core/ids';
import type { Listing } from './types';
import type { Message } from '../core/wire';
import { ApiError, redact } from './errors';

type Rec = Record<string, unknown>;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && !Number.isInteger(v)) return `number ${v}`;
  return typeof v;
}

/** The protocol error for `path`: what was expected there and what came instead (undefined = missing). */
function protocolError(path: string, expected: string, got?: unknown): ApiError {
  const at = path === '' ? 'response' : path;
  const gotText = got === undefined ? ', but it is missing' : `, got ${describe(got)}`;
  return new ApiError('protocol', `The server sent an unexpected response (${at}: expected ${expected}${gotText}). Check that the URL points at a Test Inbox or Mailinator API.`, {
    field: at,
  });
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function isRec(v: unknown): v is Rec {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, path: string): Rec {
  if (!isRec(v)) throw protocolError(path, 'object', v);
  return v;
}

function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw protocolError(path, 'array', v);
  return v;
}

function str(o: Rec, key: string, path: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw protocolError(join(path, key), 'string', v);
  return v;
}

/** A string that may be absent or null (then `fallback`). */
function optStr(o: Rec, key: string, path: string, fallback: string): string;
function optStr(o: Rec, key: string, path: string): string | undefined;
function optStr(o: Rec, key: string, path: string, fallback?: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string') throw protocolError(join(path, key), 'string', v);
  return v;
}

function int(o: Rec, key: string, path: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw protocolError(join(path, key), 'integer', v);
  return v;
}

function optInt(o: Rec, key: string, path: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw protocolError(join(path, key), 'integer', v);
  return v;
}

/**
 * A header map. Values are strings; a repeated header sent as an array of strings is
 * joined with newlines (tolerated: some services send `received` that way).
 */
function headerMap(v: unknown, path: string): Record<string, string> {
  const o = obj(v, path);
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(o)) {
    if (typeof value === 'string') out[k] = value;
    else if (Array.isArray(value) && value.every((x) => typeof x === 'string')) out[k] = value.join('\n');
    else throw protocolError(join(path, k), 'string', value);
  }
  return out;
}

/**
 * An extra field of the hosted service that the client keeps but does not depend on: taken
 * when it is a non-empty string, ignored otherwise (a change of its type must not make a whole
 * listing unreadable).
 */
function extraStr(o: Rec, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The hosted service's sender fields (`fromfull`, `origfrom`) and `ip`, where present. */
function senderExtras(o: Rec, keys: ReadonlyArray<'fromfull' | 'origfrom' | 'ip'>): Partial<Record<'fromfull' | 'origfrom' | 'ip', string>> {
  const out: Partial<Record<'fromfull' | 'origfrom' | 'ip', string>> = {};
  for (const k of keys) {
    const v = extraStr(o, k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The hosted service's `clickablelinks: [{link, text}]`; entries without a string `link` are skipped. */
function clickableLinks(v: unknown): ClickableLink[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: ClickableLink[] = [];
  for (const l of v) {
    if (isRec(l) && typeof l.link === 'string' && l.link !== '') out.push({ link: l.link, text: typeof l.text === 'string' ? l.text : '' });
  }
  return out;
}

/** Longest `code` accepted in a summary: core/otp.ts finds none longer than 12 characters. */
const MAX_SUMMARY_CODE = 32;

function summary(v: unknown, path: string, listingDomain: string): MessageSummary {
  const o = obj(v, path);
  const code = optStr(o, 'code', path);
  if (code !== undefined && (code === '' || code.length > MAX_SUMMARY_CODE || /\s/.test(code))) throw protocolError(join(path, 'code'), `a one-time code (1–${MAX_SUMMARY_CODE} characters, no spaces)`, code);
  return {
    ...(code !== undefined ? { code } : {}),
    // The hosted service omits `subject` on messages without one and `domain` on summaries.
    subject: optStr(o, 'subject', path, ''),
    domain: optStr(o, 'domain', path, listingDomain),
    from: str(o, 'from', path),
    id: str(o, 'id', path),
    to: str(o, 'to', path),
    time: int(o, 'time', path),
    seconds_ago: int(o, 'seconds_ago', path),
    ...senderExtras(o, ['fromfull', 'origfrom', 'ip']),
  };
}

/** docs/api.md §2.1 (+ `cursor` when the server says there is a next page). */
export function parseListing(v: unknown): Listing {
  const o = obj(v, '');
  const domain = str(o, 'domain', '');
  const msgs = arr(o.msgs, 'msgs').map((m, i) => summary(m, join('msgs', i), domain));
  const listing: Listing = { domain, to: str(o, 'to', ''), msgs };
  const cursor = optStr(o, 'cursor', '');
  if (cursor !== undefined && cursor !== '') listing.cursor = cursor;
  return listing;
}

/** docs/api.md "Search". */
export function parseSearchResponse(v: unknown): SearchResponse {
  const o = obj(v, '');
  const msgs = arr(o.msgs, 'msgs').map((m, i) => summary(m, join('msgs', i), ''));
  const out: SearchResponse = { q: str(o, 'q', ''), total: int(o, 'total', ''), msgs };
  if (o.partial === true) out.partial = true;
  return out;
}

/**
 * docs/api.md §2.3 / §2.4. The kind is SMS when the inbox (or the inbox of the id) is digits only,
 * or when the shape says so: no top-level `headers` and no part carrying `headers`.
 */
export function parseMessage(v: unknown, requested: { inbox: string; id: string }): Message {
  const o = obj(v, '');
  const idInbox = parseMessageId(requested.id)?.inbox ?? '';
  const parts = arr(o.parts, 'parts');
  const smsByShape = o.headers === undefined && parts.every((p) => isRec(p) && p.headers === undefined);
  if (isPhoneInbox(requested.inbox) || isPhoneInbox(idInbox) || smsByShape) {
    return {
      kind: 'sms',
      id: optStr(o, 'id', '', requested.id),
      fromfull: str(o, 'fromfull', ''),
      subject: optStr(o, 'subject', '', ''),
      parts: parts.map((p, i) => {
        const po = obj(p, join('parts', i));
        return { body: str(po, 'body', join('parts', i)) };
      }),
      to: str(o, 'to', ''),
      time: int(o, 'time', ''),
      seconds_ago: int(o, 'seconds_ago', ''),
    };
  }
  const ttl = o.ttl;
  const links = clickableLinks(o.clickablelinks);
  return {
    kind: 'email',
    fromfull: str(o, 'fromfull', ''),
    headers: headerMap(o.headers, 'headers'),
    subject: optStr(o, 'subject', '', ''),
    parts: parts.map((p, i): EmailPart => {
      const path = join('parts', i);
      const po = obj(p, path);
      return {
        headers: po.headers === undefined ? {} : headerMap(po.headers, join(path, 'headers')),
        body: str(po, 'body', path),
      };
    }),
    from: str(o, 'from', ''),
    to: str(o, 'to', ''),
    id: str(o, 'id', ''),
    time: int(o, 'time', ''),
    seconds_ago: int(o, 'seconds_ago', ''),
    ...senderExtras(o, ['origfrom', 'ip']),
    ...(typeof ttl === 'number' && Number.isSafeInteger(ttl) ? { ttl } : {}),
    ...(links !== undefined ? { clickablelinks: links } : {}),
  };
}

/** docs/api.md §2.6. */
export function parseInjectionResult(v: unknown): InjectionResult {
  const o = obj(v, '');
  const status = str(o, 'status', '');
  if (status !== 'ok') throw protocolError('status', '"ok"', status);
  return { status: 'ok', id: str(o, 'id', '') };
}

/** The code route's answer (local server). */
export function parseLatestCode(v: unknown): LatestCode {
  const o = obj(v, '');
  return { code: str(o, 'code', ''), id: str(o, 'id', ''), time: int(o, 'time', ''), subject: optStr(o, 'subject', '', ''), from: optStr(o, 'from', '', '') };
}

/** The link route's answer (local server). */
export function parseLatestLink(v: unknown): LatestLink {
  const o = obj(v, '');
  return {
    url: str(o, 'url', ''),
    kind: str(o, 'kind', ''),
    text: optStr(o, 'text', '', ''),
    id: str(o, 'id', ''),
    time: int(o, 'time', ''),
    subject: optStr(o, 'subject', '', ''),
    from: optStr(o, 'from', '', ''),
  };
}

/**
 * A webhook delivery's answer (§2.6 shape). An empty or missing `id` is left out: the hosted
 * service answers `{"id":"","status":"ok"}`, which names no message to open.
 */
export function parseWebhookDeliveryResult(v: unknown): WebhookDeliveryResult {
  const o = obj(v, '');
  const status = str(o, 'status', '');
  if (status !== 'ok') throw protocolError('status', '"ok"', status);
  const id = optStr(o, 'id', '');
  return id === undefined || id === '' ? { status: 'ok' } : { status: 'ok', id };
}

export function parseLinks(v: unknown): string[] {
  const o = obj(v, '');
  return arr(o.links, 'links').map((l, i) => {
    if (typeof l !== 'string') throw protocolError(join('links', i), 'string', l);
    return l;
  });
}

/**
 * Attachment records. The local server sends `attachment_id` and `size`; the hosted
 * service sends `attachment-id` (sometimes as a numeric string) and no size, which is
 * then reported as 0 (unknown).
 */
export function parseAttachments(v: unknown): AttachmentInfo[] {
  const o = obj(v, '');
  return arr(o.attachments, 'attachments').map((a, i) => {
    const path = join('attachments', i);
    const ao = obj(a, path);
    const rawId = ao.attachment_id ?? ao['attachment-id'];
    let attachmentId: number;
    if (typeof rawId === 'number' && Number.isSafeInteger(rawId) && rawId >= 0) attachmentId = rawId;
    else if (typeof rawId === 'string' && /^\d{1,9}$/.test(rawId)) attachmentId = Number(rawId);
    else throw protocolError(join(path, 'attachment_id'), 'non-negative integer', rawId);
    const info: AttachmentInfo = {
      filename: optStr(ao, 'filename', path, ''),
      'content-type': optStr(ao, 'content-type', path, 'application/octet-stream'),
      size: optInt(ao, 'size', path) ?? 0,
      attachment_id: attachmentId,
    };
    const disposition = optStr(ao, 'content-disposition', path);
    if (disposition !== undefined) info['content-disposition'] = disposition;
    const contentId = optStr(ao, 'content-id', path);
    if (contentId !== undefined) info['content-id'] = contentId;
    return info;
  });
}

export function parseWebUiTicket(v: unknown): WebUiTicket {
  const o = obj(v, '');
  const ticket = str(o, 'ticket', '');
  // It goes into a URL fragment as is: nothing there may need encoding.
  if (!/^[A-Za-z0-9_.-]{1,600}$/.test(ticket)) throw protocolError('ticket', 'a URL-safe string', ticket);
  return { ticket, expires: int(o, 'expires', '') };
}

/** A page's session (`POST <page>/ui/session`): its page token goes into a request header as is, so nothing else may be in it. */
export function parseWebUiSession(v: unknown): WebUiSession {
  const o = obj(v, '');
  const pageToken = str(o, 'pageToken', '');
  if (!/^[A-Za-z0-9_.-]{1,600}$/.test(pageToken)) throw protocolError('pageToken', 'a header-safe string', pageToken);
  return { pageToken, expires: int(o, 'expires', '') };
}

/** A plain `{status: "ok"}` (the page's sign-out). */
export function parseOk(v: unknown): void {
  const o = obj(v, '');
  const status = str(o, 'status', '');
  if (status !== 'ok') throw protocolError('status', '"ok"', status);
}

export function parseDeleteResult(v: unknown): DeleteResult {
  const o = obj(v, '');
  const status = str(o, 'status', '');
  if (status !== 'ok') throw protocolError('status', '"ok"', status);
  // The hosted service answers a single delete with `{status:"ok"}` only: that is one message.
  return { status: 'ok', count: optInt(o, 'count', '') ?? 1 };
}

/**
 * `GET /api/v2/domains`. The hosted service lists domains with `name` but no counts;
 * missing counts are reported as 0 (unknown).
 */
export function parseDomains(v: unknown): DomainsResponse {
  const o = obj(v, '');
  const defaultDomain = optStr(o, 'defaultDomain', '');
  return {
    domains: arr(o.domains, 'domains').map((d, i) => {
      const path = join('domains', i);
      const dobj = obj(d, path);
      return { name: str(dobj, 'name', path), inboxes: optInt(dobj, 'inboxes', path) ?? 0, messages: optInt(dobj, 'messages', path) ?? 0 };
    }),
    ...(defaultDomain !== undefined ? { defaultDomain } : {}),
  };
}

export function parseHealth(v: unknown): HealthResponse {
  const o = obj(v, '');
  const service = str(o, 'service', '');
  if (service !== 'test-inbox') throw protocolError('service', '"test-inbox"', service);
  const status = str(o, 'status', '');
  if (status !== 'ok') throw protocolError('status', '"ok"', status);
  const out: HealthResponse = { service: 'test-inbox', version: str(o, 'version', ''), status: 'ok' };
  for (const key of ['proof', 'tokenProof', 'defaultDomain'] as const) {
    const v = optStr(o, key, '');
    if (v !== undefined) out[key] = v;
  }
  const now = optInt(o, 'now', '');
  if (now !== undefined) out.now = now;
  const chaosRules = optInt(o, 'chaosRules', '');
  if (chaosRules !== undefined) out.chaosRules = chaosRules;
  return out;
}

/** A fault rule (docs/chaos.md) as `/api/v2/chaos` shows it. */
export function parseChaosRule(v: unknown, path = ''): ChaosRuleInfo {
  const o = obj(v, path);
  const out: ChaosRuleInfo = {
    id: str(o, 'id', path),
    surface: str(o, 'surface', path),
    match: obj(o.match, join(path, 'match')),
    fault: obj(o.fault, join(path, 'fault')),
    expires: str(o, 'expires', path),
    fired: int(o, 'fired', path),
    evaluated: int(o, 'evaluated', path),
  };
  const times = optInt(o, 'times', path);
  if (times !== undefined) out.times = times;
  if (typeof o.probability === 'number') out.probability = o.probability;
  const seed = optInt(o, 'seed', path);
  if (seed !== undefined) out.seed = seed;
  return out;
}

/** `GET /api/v2/chaos` and the answers of PUT and DELETE. */
export function parseChaosList(v: unknown): ChaosList {
  const o = obj(v, '');
  return { active: int(o, 'active', ''), rules: arr(o.rules, 'rules').map((r, i) => parseChaosRule(r, join('rules', i))) };
}

/** `POST /api/v2/chaos/rules`: the new rule's id and the rule. */
export function parseChaosAdded(v: unknown): { id: string; rule: ChaosRuleInfo } {
  const o = obj(v, '');
  return { id: str(o, 'id', ''), rule: parseChaosRule(o.rule, 'rule') };
}

/** `DELETE /api/v2/chaos[/rules/{id}]`: how many rules were removed. */
export function parseChaosRemoved(v: unknown): { removed: number } {
  const o = obj(v, '');
  return { removed: typeof o.removed === 'string' ? 1 : int(o, 'removed', '') };
}

/** One push-stream event (data of `event: message` / `event: delete`). */
export function parseStreamEvent(v: unknown): StreamEvent {
  const o = obj(v, '');
  const type = str(o, 'type', '');
  if (type !== 'message' && type !== 'delete') throw protocolError('type', '"message" or "delete"', type);
  const domain = str(o, 'domain', '');
  const event: StreamEvent = { type, domain, inbox: str(o, 'inbox', '') };
  if (o.msg !== undefined && o.msg !== null) event.msg = summary(o.msg, 'msg', domain);
  if (o.ids !== undefined && o.ids !== null) {
    event.ids = arr(o.ids, 'ids').map((x, i) => {
      if (typeof x !== 'string') throw protocolError(join('ids', i), 'string', x);
      return x;
    });
  }
  if (type === 'message' && event.msg === undefined) throw protocolError('msg', 'object');
  if (type === 'delete' && event.ids === undefined) throw protocolError('ids', 'array');
  return event;
}

/** Parses JSON text, naming the problem when it is not JSON (e.g. an HTML page from a proxy). */
export function parseJsonText(text: string, secrets: ReadonlyArray<string | undefined> = []): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const start = redact(text.trim().slice(0, 40).replace(/\s+/g, ' '), secrets);
    throw new ApiError(
      'protocol',
      `The server sent a response that is not JSON${start ? ` (it starts with "${start}")` : ' (it is empty)'}. Check that the URL points at a Test Inbox or Mailinator API.`,
      { field: 'response' },
    );
  }
}
