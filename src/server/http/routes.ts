// Route matching for the HTTP API (docs/api.md). The path is split on `/` BEFORE
// percent-decoding, so an encoded slash or dot-dot stays inside one segment and is then
// refused by the name checks; nothing is ever resolved against the file system here.
// Both `/api/v2/domains/` and `/api/v2/domain/` are accepted; a trailing slash is optional.
import { TWILIO_API_PREFIX } from '../../shared/contract';
import { HttpError, badRequest, notFound } from './errors';
import { MAX_URL_LENGTH } from '../../core/urls';


type MessageView = 'message' | 'links' | 'raw' | 'attachments' | 'attachment';

export type Route =
  | { kind: 'health' }
  | { kind: 'domains' }
  /** GET list, POST inject, DELETE clear. */
  | { kind: 'inbox'; domain: string; inbox: string }
  /** DELETE every inbox of the domain (Mailinator's "delete all messages by domain"). */
  | { kind: 'allInboxes'; domain: string }
  /** POST inject (the official SDKs' form). */
  | { kind: 'inboxMessages'; domain: string; inbox: string }
  | { kind: 'message'; domain: string; inbox?: string; id: string; view: MessageView; attachment?: string }
  | { kind: 'stream'; domain: string; inbox?: string }
  /** GET the newest one-time code or link of an inbox (docs/api.md "Codes and links"). */
  | { kind: 'latest'; domain: string; inbox: string; what: 'code' | 'link' }
  /** GET messages matching a query (docs/api.md "Search"). */
  | { kind: 'search' }
  /** GET the current TOTP code of a base32 secret. */
  | { kind: 'totp'; secret: string }
  /** `first` is the webhook token (token-in-path form) or the domain (with `?whtoken=`). */
  | { kind: 'webhook'; first: string; inbox?: string }
  /** Twilio's Messages API (docs/twilio.md): list and send. */
  | { kind: 'twilioMessages'; accountSid: string }
  /** Twilio's Messages API: fetch one message. */
  | { kind: 'twilioMessage'; accountSid: string; sid: string }
  /** Any other path under Twilio's API version: a Twilio-shaped 404. */
  | { kind: 'twilioUnknown' }
  /** The fault rules as a set (docs/chaos.md): GET read, PUT replace, DELETE clear. */
  | { kind: 'chaos' }
  /** GET list, POST add one rule. */
  | { kind: 'chaosRules' }
  /** GET or DELETE one rule. */
  | { kind: 'chaosRule'; id: string };

export interface ParsedUrl {
  /** Percent-decoded path segments after the leading slash, trailing slash dropped. */
  segments: string[];
  query: URLSearchParams;
  /** The path as sent, for error messages. */
  path: string;
}

export function parseUrl(url: string | undefined): ParsedUrl {
  let target = url ?? '/';
  if (target.length > MAX_URL_LENGTH) throw new HttpError(414, 'bad_request', `request target is longer than ${MAX_URL_LENGTH} characters`);
  // Absolute form (`GET http://host/path`): keep the path.
  const abs = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  if (abs) target = target.slice(abs[0].length) || '/';
  const q = target.indexOf('?');
  const path = q >= 0 ? target.slice(0, q) : target;
  const query = new URLSearchParams(q >= 0 ? target.slice(q + 1) : '');
  if (!path.startsWith('/')) throw notFound(`unknown route ${path}`);
  const raw = path.slice(1).split('/');
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  const segments = raw.map((s) => {
    if (!s.includes('%')) return s;
    try {
      return decodeURIComponent(s);
    } catch {
      throw badRequest('bad_request', 'the path is not valid percent-encoding');
    }
  });
  return { segments, query, path };
}

function messageRoute(domain: string, inbox: string | undefined, rest: string[]): Route | undefined {
  const [id, view, n, ...extra] = rest;
  if (id === undefined || extra.length > 0) return undefined;
  if (view === undefined) return { kind: 'message', domain, inbox, id, view: 'message' };
  if (view === 'attachments') {
    return n === undefined ? { kind: 'message', domain, inbox, id, view: 'attachments' } : { kind: 'message', domain, inbox, id, view: 'attachment', attachment: n };
  }
  if (n !== undefined) return undefined;
  if (view === 'links' || view === 'raw') return { kind: 'message', domain, inbox, id, view };
  return undefined;
}

/** The route a path names, or undefined when it names none. */
export function matchRoute(segments: string[]): Route | undefined {
  const s = segments;
  if (s.length === 1 && s[0] === 'healthz') return { kind: 'health' };
  if (s[0] === TWILIO_API_PREFIX.slice(1)) return twilioRoute(s);
  if (s[0] === 'api' && s[1] === 'v2' && s[2] === 'totp') return s.length === 4 ? { kind: 'totp', secret: s[3] } : undefined;
  if (s[0] === 'api' && s[1] === 'v2' && s[2] === 'search') return s.length === 3 ? { kind: 'search' } : undefined;
  if (s[0] === 'api' && s[1] === 'v2' && s[2] === 'chaos') return chaosRoute(s.slice(3));
  if (s[0] !== 'api' || s[1] !== 'v2' || (s[2] !== 'domains' && s[2] !== 'domain')) return undefined;
  if (s.length === 3) return { kind: 'domains' };
  const domain = s[3];
  switch (s[4]) {
    case 'inboxes': {
      const inbox = s[5];
      if (inbox === undefined) return { kind: 'allInboxes', domain };
      if (s.length === 6) return { kind: 'inbox', domain, inbox };
      if (s.length === 7 && (s[6] === 'code' || s[6] === 'link')) return { kind: 'latest', domain, inbox, what: s[6] };
      if (s[6] !== 'messages') return undefined;
      if (s.length === 7) return { kind: 'inboxMessages', domain, inbox };
      return messageRoute(domain, inbox, s.slice(7));
    }
    case 'messages':
      return messageRoute(domain, undefined, s.slice(5));
    case 'stream':
      if (s.length === 5) return { kind: 'stream', domain };
      if (s.length === 6) return { kind: 'stream', domain, inbox: s[5] };
      return undefined;
    case 'webhook':
      if (s.length === 5) return { kind: 'webhook', first: domain };
      if (s.length === 6) return { kind: 'webhook', first: domain, inbox: s[5] };
      return undefined;
    default:
      return undefined;
  }
}

/** `/api/v2/chaos`, `/api/v2/chaos/rules`, `/api/v2/chaos/rules/{id}`. */
function chaosRoute(rest: string[]): Route | undefined {
  if (rest.length === 0) return { kind: 'chaos' };
  if (rest[0] !== 'rules' || rest.length > 2) return undefined;
  return rest.length === 1 ? { kind: 'chaosRules' } : { kind: 'chaosRule', id: rest[1] };
}

/** `/2010-04-01/Accounts/{AccountSid}/Messages.json` and `…/Messages/{Sid}.json`. */
function twilioRoute(s: string[]): Route {
  if (s.length < 4 || s[1] !== 'Accounts' || s[2] === '') return { kind: 'twilioUnknown' };
  const accountSid = s[2];
  if (s.length === 4 && s[3] === 'Messages.json') return { kind: 'twilioMessages', accountSid };
  if (s.length === 5 && s[3] === 'Messages' && s[4].endsWith('.json') && s[4].length > '.json'.length) {
    return { kind: 'twilioMessage', accountSid, sid: s[4].slice(0, -'.json'.length) };
  }
  return { kind: 'twilioUnknown' };
}

/** True for the routes whose errors are in Twilio's shape. */
export function isTwilioRoute(route: Route): route is Extract<Route, { kind: 'twilioMessages' | 'twilioMessage' | 'twilioUnknown' }> {
  return route.kind === 'twilioMessages' || route.kind === 'twilioMessage' || route.kind === 'twilioUnknown';
}

/** Methods each route kind answers; anything else is 405 with `Allow`. */
export function allowedMethods(route: Route): readonly string[] {
  switch (route.kind) {
    case 'health':
    case 'domains':
    case 'stream':
    case 'latest':
    case 'totp':
    case 'search':
      return ['GET'];
    case 'inbox':
      return ['GET', 'POST', 'DELETE'];
    case 'inboxMessages':
    case 'webhook':
      return ['POST'];
    case 'twilioMessages':
      return ['GET', 'POST'];
    case 'twilioMessage':
    case 'twilioUnknown':
      return ['GET'];
    case 'allInboxes':
      return ['DELETE'];
    case 'chaos':
      return ['GET', 'PUT', 'DELETE'];
    case 'chaosRules':
      return ['GET', 'POST'];
    case 'chaosRule':
      return ['GET', 'DELETE'];
    case 'message':
      return route.view === 'message' ? ['GET', 'DELETE'] : ['GET'];
  }
}
