// The four webhook URL forms of docs/api.md §4.5, ready to copy into a third-party system. They
// carry the webhook token by design (never the API token).
//
// Decisions for missing inputs:
// - `tokenInPath` and `privateInboxQuery` name the inbox in the path: they are omitted
//   when no inbox is given (a URL without the inbox would rely on the payload's `to`,
//   which the two query forms already cover).
// - `namedDomain` is omitted when no domain is given or the domain is `private`: it would
//   be the same URL as `privateQuery`.
// - `privateQuery` is always returned: the payload's `to` names the inbox.
import { PRIVATE_DOMAIN } from '../core/ids';
import { ApiError } from './errors';
import { baseString, checkDomain, checkInbox, normalizeBaseUrl } from './paths';
import type { WebhookForm, WebhookUrl } from './types';

/** Longest webhook token accepted; real tokens are a few dozen characters. */
const MAX_WEBHOOK_TOKEN_LENGTH = 256;

interface WebhookUrlOptions {
  /** The webhook token (team settings), never the API token. */
  token: string;
  /** A named private domain; `private` or absent means the server's default domain. */
  domain?: string;
  /** The destination inbox; absent means the payload's `to` names it. */
  inbox?: string;
}

function checkWebhookToken(token: string): string {
  if (typeof token !== 'string' || token.trim() === '') {
    throw new ApiError('invalid_input', 'No webhook token is set. Copy it from the server settings.', { field: 'token' });
  }
  if (token.length > MAX_WEBHOOK_TOKEN_LENGTH || /[\s\u0000-\u001f\u007f/?#]/.test(token)) {
    throw new ApiError('invalid_input', 'The webhook token has characters a token never has (spaces, slashes, ? or #). Copy it again.', { field: 'token' });
  }
  return token;
}

export function webhookUrls(base: string, options: WebhookUrlOptions): WebhookUrl[] {
  const root = `${baseString(normalizeBaseUrl(base))}/api/v2/domains`;
  const token = checkWebhookToken(options.token);
  const inbox = options.inbox === undefined || options.inbox === '' ? undefined : checkInbox(options.inbox, { allowAll: false });
  const domain = options.domain === undefined || options.domain === '' ? undefined : checkDomain(options.domain);
  const enc = encodeURIComponent;
  const wh = `whtoken=${enc(token)}`;
  const urls: WebhookUrl[] = [];
  if (inbox !== undefined) {
    urls.push({ form: 'tokenInPath', label: `Token in path, inbox "${inbox}" in path`, url: `${root}/${enc(token)}/webhook/${enc(inbox)}/` });
  }
  if (domain !== undefined && domain.toLowerCase() !== PRIVATE_DOMAIN) {
    urls.push({ form: 'namedDomain', label: `Domain "${domain}", token in query (inbox from "to")`, url: `${root}/${enc(domain)}/webhook/?${wh}` });
  }
  urls.push({ form: 'privateQuery', label: 'Private domain, token in query (inbox from "to")', url: `${root}/${PRIVATE_DOMAIN}/webhook/?${wh}` });
  if (inbox !== undefined) {
    urls.push({ form: 'privateInboxQuery', label: `Private domain, inbox "${inbox}" in path, token in query`, url: `${root}/${PRIVATE_DOMAIN}/webhook/${enc(inbox)}?${wh}` });
  }
  return urls;
}

/** Stand-ins a preview builds with (valid names, so the one builder above checks them) and what it shows for them. */
const PREVIEW_PARTS: Array<[sentinel: string, shown: string]> = [
  ['webhooktokenplaceholder0', '<webhook token>'],
  ['inboxplaceholder0', '<inbox>'],
  ['domainplaceholder0.test', '<domain>'],
];

/**
 * Every form as one full URL for a picker to show, built by webhookUrls: what is known filled
 * in (the server, the inbox, a named domain), `<inbox>`, `<domain>` and `<webhook token>`
 * where it is not (the token is never shown). One form for all four, so a picker never mixes
 * full URLs and bare paths.
 */
export function webhookUrlPreviews(base: string, options: { domain?: string; inbox?: string }): Array<{ form: WebhookForm; url: string }> {
  const [token, inbox, domain] = PREVIEW_PARTS.map(([sentinel]) => sentinel);
  const named = options.domain !== undefined && options.domain !== '' && options.domain.toLowerCase() !== PRIVATE_DOMAIN ? options.domain : domain;
  return webhookUrls(base, { token, inbox: options.inbox || inbox, domain: named }).map((u) => ({
    form: u.form,
    url: PREVIEW_PARTS.reduce((url, [sentinel, shown]) => url.split(sentinel).join(shown), u.url),
  }));
}

/** The URL with the webhook token hidden, for logs and error messages. */
export function redactWebhookUrl(url: string): string {
  return url
    .replace(/([?&](?:wh)?token=)[^&#]*/gi, '$1***')
    .replace(/(\/api\/v2\/domains?\/)([^/?#]+)(\/webhook\b)/i, (_m, a: string, seg: string, b: string) => `${a}${seg.toLowerCase() === PRIVATE_DOMAIN ? seg : '***'}${b}`);
}
