// Wire shapes of the message-testing API (docs/api.md §2), shared by the local server,
// the client and the webview. Types only: runtime validation lives in src/api.

/** docs/api.md §2.2: one element of `msgs` in an inbox listing. */
export interface MessageSummary {
  subject: string;
  domain: string;
  /** Display name plus address in angle brackets, e.g. `Acme <no-reply@acme.test>`. */
  from: string;
  /** `<inbox>-<epochSeconds>-<counter>` */
  id: string;
  /** Inbox name. */
  to: string;
  /** Receipt time, ms since the Unix epoch. */
  time: number;
  seconds_ago: number;
  /** Local server extra: the one-time code detected at ingest (core/otp.ts), when there is one. */
  code?: string;
  /**
   * Hosted service: the sender's address. Real hosted listings carry only the display name in
   * `from` (`WOMANIZER`) and the address here (`news@mail.womanizer.com`); core/sender.ts
   * joins them for display.
   */
  fromfull?: string;
  /** Hosted service: the From header as received, `Name <address>`. */
  origfrom?: string;
  /** Hosted service: the IP address of the sending server. */
  ip?: string;
}

/** Local server extra (docs/api.md "Codes and links"): answer of `…/inboxes/{I}/code`. */
export interface LatestCode {
  code: string;
  id: string;
  time: number;
  subject: string;
  from: string;
}

/** Local server extra: answer of `…/inboxes/{I}/link`; `kind` as core/linkKinds.ts names it. */
export interface LatestLink {
  url: string;
  kind: string;
  /** The link's visible text, empty when it has none. */
  text: string;
  id: string;
  time: number;
  subject: string;
  from: string;
}

/** docs/api.md §2.1: response of the list operation. */
export interface InboxListing {
  domain: string;
  to: string;
  msgs: MessageSummary[];
}

/** docs/api.md "Search": the answer of `GET /api/v2/search`. */
export interface SearchResponse {
  q: string;
  total: number;
  msgs: MessageSummary[];
  /** Set when the search read as many bodies as it may and stopped: `total` counts what it read. */
  partial?: boolean;
}

/** docs/api.md "Web UI": a one-time sign-in ticket (`POST /ui/ticket`), spent by the page at `/#ticket=<ticket>`. */
export interface WebUiTicket {
  ticket: string;
  /** When it stops working (ms since the epoch): seconds after it was given. */
  expires: number;
}

/** docs/api.md "Web UI": a session of the page (`POST /ui/session`); its page token goes in the page's header, the cookie stays the browser's. */
export interface WebUiSession {
  pageToken: string;
  /** When the session ends (ms since the epoch). */
  expires: number;
}

/** docs/api.md §2.3: a content part of an email. */
export interface EmailPart {
  headers: Record<string, string>;
  body: string;
}

/** docs/api.md §2.3: response of the fetch operation for an email inbox. */
export interface EmailMessage {
  fromfull: string;
  headers: Record<string, string>;
  subject: string;
  parts: EmailPart[];
  /** Sender display name only. */
  from: string;
  to: string;
  id: string;
  time: number;
  seconds_ago: number;
  /** Present when the server could read the message only in part (broken or hostile MIME); `raw` has it whole. */
  notice?: string;
  /** Hosted service: the From header as received, `Name <address>` (its `fromfull` is then the bare address). */
  origfrom?: string;
  /** Hosted service: the IP address of the sending server. */
  ip?: string;
  /** Hosted service: when the message expires, ms since the epoch. */
  ttl?: number;
  /** Hosted service: the links of the message with their visible text. */
  clickablelinks?: ClickableLink[];
}

/** Hosted service: one element of a message's `clickablelinks`. */
export interface ClickableLink {
  link: string;
  /** The link's visible text; empty when it has none. */
  text: string;
}

/** docs/api.md §2.4: response of the fetch operation for a phone-number inbox. */
export interface SmsMessage {
  /** Sending number. */
  fromfull: string;
  subject: string;
  parts: Array<{ body: string }>;
  /** Receiving number. */
  to: string;
  time: number;
  seconds_ago: number;
}

/** A fetched message, as the client hands it over: an email (§2.3) or an SMS (§2.4) with its id. */
export type Message = ({ kind: 'email' } & EmailMessage) | ({ kind: 'sms'; id: string } & SmsMessage);

/** docs/api.md §2.5: body of an injection (4.4) or a webhook delivery (4.5). */
export interface InjectedMessage {
  from?: string;
  subject?: string;
  text?: string;
  to?: string;
}

/** docs/api.md §2.6: result of an injection. */
export interface InjectionResult {
  status: 'ok';
  id: string;
}

/**
 * Result of a webhook delivery (docs/api.md §4.5): §2.6, but `id` is absent when the server
 * named none. The hosted service answers `{"id":"","status":"ok"}`, and an empty id is no
 * message to open.
 */
export interface WebhookDeliveryResult {
  status: 'ok';
  id?: string;
}

/** Extra (docs/api.md, Routes): one attachment record, `…/messages/<id>/attachments`. */
export interface AttachmentInfo {
  filename: string;
  'content-type': string;
  'content-disposition'?: string;
  'content-id'?: string;
  size: number;
  /** Index used by `…/attachments/<n>`. */
  attachment_id: number;
}

/** Extra: result of DELETE of a message or an inbox. */
export interface DeleteResult {
  status: 'ok';
  count: number;
}

/** Extra: `GET /api/v2/domains`. */
export interface DomainsResponse {
  domains: Array<{ name: string; inboxes: number; messages: number }>;
  /** Extra of this server: the domain `private` writes go to (`--domain`); the hosted service sends none. */
  defaultDomain?: string;
}

/** Extra: `GET /healthz`. */
export interface HealthResponse {
  service: 'test-inbox';
  version: string;
  status: 'ok';
  /** With `?challenge=`: HMAC-SHA256 of the challenge keyed by the server file's key (hex). */
  proof?: string;
  /**
   * With `?challenge=`: HMAC-SHA256 of the challenge keyed by the API token's proof key
   * (core/proof.ts), so a client holding the token knows a remote server takes it before
   * sending it.
   */
  tokenProof?: string;
  /**
   * The server's clock (ms since the epoch) when it answered: what `since: "now"` means
   * (core/message.ts and api/queries.ts resolve "now" with it, never with the client's clock).
   */
  now?: number;
  /** The domain the server files mail under when none is named (its `--domain`). */
  defaultDomain?: string;
  /** Fault rules active now (docs/chaos.md): a test that sees mail fail can tell failures on demand are on. */
  chaosRules?: number;
}

/** The longest delay a fault rule gives (`fault.delay`, `fault.delivery_delay`): longer than any client's wait, short of a stuck test. The server refuses more; the editor's presets ask within it. */
export const MAX_CHAOS_DELAY_MS = 10 * 60_000;

/**
 * A fault rule as the server shows it (`/api/v2/chaos`, docs/chaos.md): what was sent (surface,
 * match, fault, times or probability and seed), its id, when it ends, and its counters.
 */
export interface ChaosRuleInfo {
  id: string;
  surface: string;
  match: Record<string, unknown>;
  fault: Record<string, unknown>;
  times?: number;
  probability?: number;
  seed?: number;
  /** ISO 8601: when the rule stops by itself. */
  expires: string;
  /** How often it fired. */
  fired: number;
  /** How often it matched, fired or not. */
  evaluated: number;
}

/** `GET /api/v2/chaos`. */
export interface ChaosList {
  active: number;
  rules: ChaosRuleInfo[];
}

/** Every error response: the right HTTP status and this body. */
export interface ErrorBody {
  status: 'error';
  message: string;
}

/** One event on the push stream (`text/event-stream`, event name `message`). */
export interface StreamEvent {
  type: 'message' | 'delete';
  domain: string;
  inbox: string;
  /** Present for `message`: the summary of the new message. */
  msg?: MessageSummary;
  /** Present for `delete`: ids removed. */
  ids?: string[];
}

/**
 * The header field naming the API a message came through (a provider's, docs/providers.md), e.g.
 * `Resend (POST /emails)`; the server writes it, the message view shows it as "Sent through".
 */
export const PROVIDER_API_HEADER = 'X-Test-Inbox-Api';
