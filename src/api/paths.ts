// Input checks and path building. Every name is checked with src/core/ids.ts before a
// request is made (an invalid one is an ApiError `invalid_input`, no network call), and
// every path segment is encoded.
import { ALL_INBOXES, domainProblem, inboxNameProblem, inboxOfName, MAX_MESSAGE_ID_LENGTH, messageIdProblem } from '../core/ids';
import { ApiError } from './errors';
import type { ListParams } from './types';

/** Largest page the client asks for; the local server caps `limit` at 500 too (docs/api.md). */
const MAX_LIST_LIMIT = 500;
/** Longest long-poll the client asks for (docs/api.md: `wait` 0–60 s). */
const MAX_LIST_WAIT_SECONDS = 60;
/** Longest cursor accepted: cursors are message ids or opaque hosted tokens, never this long. */
const MAX_CURSOR_LENGTH = 1024;

function invalid(field: string, message: string): ApiError {
  return new ApiError('invalid_input', message, { field });
}

export function checkDomain(domain: string): string {
  if (typeof domain !== 'string') throw invalid('domain', 'The domain must be a string.');
  const problem = domainProblem(domain);
  if (problem) throw invalid('domain', `Invalid domain "${domain}": ${problem}.`);
  return domain;
}

/** The inbox to put in the path: checked, and a phone number written with `+` as its digits' inbox (core/ids.ts inboxOfName). */
export function checkInbox(inbox: string, options: { allowAll: boolean }): string {
  if (typeof inbox !== 'string') throw invalid('inbox', 'The inbox name must be a string.');
  const name = inboxOfName(inbox);
  const problem = inboxNameProblem(name);
  if (problem) throw invalid('inbox', `Invalid inbox "${inbox}": ${problem}.`);
  if (name === ALL_INBOXES && !options.allowAll) throw invalid('inbox', 'This operation needs one inbox, not "*".');
  return name;
}

/**
 * A message id as a server listed it. Ids are opaque: the hosted service's do not follow the
 * local server's `<inbox>-<number>-<number>` (e.g. `bill-1770915939-0125389591012`), so any id
 * that stays inside its (encoded) path segment is accepted.
 */
export function checkMessageId(id: string): string {
  if (typeof id !== 'string') throw invalid('id', 'The message id must be a string.');
  const problem = messageIdProblem(id);
  if (problem) throw invalid('id', `Invalid message id "${id.slice(0, MAX_MESSAGE_ID_LENGTH).replace(/[\u0000-\u001f\u007f]/g, '?')}": ${problem}.`);
  return id;
}

export function checkAttachmentId(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw invalid('attachmentId', `Invalid attachment id ${String(n)}: expected a non-negative integer.`);
  return n;
}

/** Checks list parameters and turns them into a query string (empty or starting with `?`). */
export function listQuery(params: ListParams = {}): string {
  const q = new URLSearchParams();
  const { limit, skip, sort, cursor, wait } = params;
  if (limit !== undefined) {
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw invalid('limit', `Invalid limit ${String(limit)}: expected an integer from 1 to ${MAX_LIST_LIMIT}.`);
    q.set('limit', String(limit));
  }
  if (skip !== undefined) {
    if (!Number.isSafeInteger(skip) || skip < 0) throw invalid('skip', `Invalid skip ${String(skip)}: expected an integer ≥ 0.`);
    q.set('skip', String(skip));
  }
  if (sort !== undefined) {
    if (sort !== 'ascending' && sort !== 'descending') throw invalid('sort', `Invalid sort "${String(sort)}": expected "ascending" or "descending".`);
    q.set('sort', sort);
  }
  if (cursor !== undefined) {
    if (typeof cursor !== 'string' || cursor === '' || cursor.length > MAX_CURSOR_LENGTH || /[\u0000-\u001f\u007f]/.test(cursor)) {
      throw invalid('cursor', 'Invalid cursor: pass back the cursor of the previous page unchanged.');
    }
    q.set('cursor', cursor);
  }
  if (wait !== undefined) {
    if (!Number.isSafeInteger(wait) || wait < 0 || wait > MAX_LIST_WAIT_SECONDS) throw invalid('wait', `Invalid wait ${String(wait)}: expected whole seconds from 0 to ${MAX_LIST_WAIT_SECONDS}.`);
    q.set('wait', String(wait));
  }
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

const enc = encodeURIComponent;

/**
 * Paths relative to the base URL, in the forms of Mailinator's OpenAPI description
 * (manybrain/mailinatordocs `openapi/mailinator-api.yaml`), its official SDKs and its
 * documented "HTTP Request" lines: always `domains` (plural), inject at `…/messages`. The
 * local server accepts these and the older spellings (`domain`, inject without `/messages`).
 */
export const paths = {
  domains: (): string => '/api/v2/domains',
  /** docs/api.md §4.1. */
  inbox: (domain: string, inbox: string): string => `/api/v2/domains/${enc(domain)}/inboxes/${enc(inbox)}`,
  /** docs/api.md §4.4 (OpenAPI `postMessage`). */
  inject: (domain: string, inbox: string): string => `/api/v2/domains/${enc(domain)}/inboxes/${enc(inbox)}/messages`,
  /** docs/api.md §4.2/§4.3 (OpenAPI `getInboxMessage`). */
  message: (domain: string, inbox: string, id: string): string => `/api/v2/domains/${enc(domain)}/inboxes/${enc(inbox)}/messages/${enc(id)}`,
  /** Extras (links, attachments, raw, delete) on the message's path. */
  messageExtra: (domain: string, inbox: string, id: string, tail = ''): string =>
    `/api/v2/domains/${enc(domain)}/inboxes/${enc(inbox)}/messages/${enc(id)}${tail}`,
  stream: (domain: string, inbox?: string): string => `/api/v2/domains/${enc(domain)}/stream${inbox === undefined ? '' : `/${enc(inbox)}`}`,
  /** Local server extra: `what` is `code` or `link` (docs/api.md "Codes and links"). */
  latest: (domain: string, inbox: string, what: 'code' | 'link'): string => `/api/v2/domains/${enc(domain)}/inboxes/${enc(inbox)}/${what}`,
  health: (): string => '/healthz',
  /** Local server extra: docs/api.md "Search". */
  search: (): string => '/api/v2/search',
  /** Test Inbox server: the web UI's page, and its one-time sign-in tickets (docs/api.md "Web UI"). */
  webUi: (): string => '/',
  webUiTicket: (): string => '/ui/ticket',
  /**
   * The page's session (sign-in, sign-out), relative to the base of a page's client
   * (`<server>/ui`, browser.ts pageBaseUrl), under which the API's paths above are the page's
   * `/ui/api/v2/…`. A client at the server's root has no session route.
   */
  pageSession: (): string => '/session',
  /** Test Inbox server: the fault rules (docs/chaos.md). */
  chaos: (): string => '/api/v2/chaos',
  chaosRules: (): string => '/api/v2/chaos/rules',
  chaosRule: (id: string): string => `/api/v2/chaos/rules/${enc(id)}`,
};

/**
 * A base URL as given by the user, checked and normalised: http(s) only, no credentials,
 * query or fragment (a token there would leak into logs), no trailing slash. A path
 * prefix is kept (a server behind a reverse proxy at `https://host/inbox`).
 */
export function normalizeBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw invalid('baseUrl', `Invalid server URL: expected an address such as http://127.0.0.1:2580 or https://api.mailinator.com.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('baseUrl', `Invalid server URL: "${url.protocol}" is not supported; use http or https.`);
  if (url.username !== '' || url.password !== '') throw invalid('baseUrl', 'Invalid server URL: do not put credentials in the URL; set the API token instead.');
  if (url.search !== '' || url.hash !== '') throw invalid('baseUrl', 'Invalid server URL: remove the query and fragment (set the API token separately).');
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/** `origin + prefix` of a normalised base URL, without a trailing slash. */
export function baseString(url: URL): string {
  return `${url.origin}${url.pathname === '/' ? '' : url.pathname}`;
}
