// The client contract the extension codes against (implemented by src/api/client.ts).
// No vscode import: cancellation is an AbortSignal.
import type {
  AttachmentInfo,
  ChaosList,
  ChaosRuleInfo,
  DeleteResult,
  DomainsResponse,
  Message,
  HealthResponse,
  InboxListing,
  InjectedMessage,
  InjectionResult,
  LatestCode,
  LatestLink,
  SearchResponse,
  StreamEvent,
  WebhookDeliveryResult,
  WebUiSession,
} from '../core/wire';

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's default timeout for this call. */
  timeoutMs?: number;
}

export interface SearchParams {
  limit?: number;
  skip?: number;
  /** Long-poll: wait up to this many seconds for a matching message when none matches. */
  wait?: number;
}

export interface ListParams {
  limit?: number;
  skip?: number;
  sort?: 'ascending' | 'descending';
  cursor?: string;
  /** Long-poll: wait up to this many seconds for a message when none matches. */
  wait?: number;
}

/** Parameters of the local server's code and link routes (docs/api.md "Codes and links"). */
export interface LatestParams {
  /** Only messages after this: a time in ms since the epoch, or a message id of the inbox. */
  since?: number | string;
  /** Long-poll up to this many seconds (the server cuts it to 60). */
  wait?: number;
  /** Delete the answered message, so that no other run reads it. */
  delete?: boolean;
}

/** `kind` of the link route. */
import type { LinkKindParam } from '../core/clickKinds';

/** A listing; `cursor` is present when the server says there is a next page. */
export type Listing = InboxListing & { cursor?: string };


export interface Attachment {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
}

/** The four webhook forms of docs/api.md §4.5. */
export type WebhookForm = 'tokenInPath' | 'namedDomain' | 'privateQuery' | 'privateInboxQuery';

export interface WebhookUrl {
  form: WebhookForm;
  label: string;
  url: string;
}

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed' | 'unsupported';

export interface StreamHandlers {
  onEvent(event: StreamEvent): void;
  /** Called on every state change; `error` says why it is reconnecting or closed. */
  onState?(state: StreamState, error?: Error): void;
}

export interface Subscription {
  readonly state: StreamState;
  dispose(): void;
}

/** See InboxApi.identify. */
export type ServerIdentity = { kind: 'test-inbox'; health: HealthResponse } | { kind: 'other' };

/**
 * One client per server (base URL + API token). `domain` is `private` or a domain name;
 * `inbox` an inbox name, a phone number, or `*` where the operation allows it.
 */
export interface InboxApi {
  readonly baseUrl: string;
  health(opts?: CallOptions): Promise<HealthResponse>;
  /**
   * What answers at the base URL, asked without sending the API token: a Test Inbox server that
   * proved, by a fresh challenge, that it takes this client's token; or something else (the
   * hosted service, or a Test Inbox server too old to prove it). Throws `unauthorized` when a
   * Test Inbox server proves a different token, and network failures as they are.
   */
  identify(opts?: CallOptions): Promise<ServerIdentity>;
  listDomains(opts?: CallOptions): Promise<DomainsResponse>;
  listInbox(domain: string, inbox: string, params?: ListParams, opts?: CallOptions): Promise<Listing>;
  getMessage(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<Message>;
  inject(domain: string, inbox: string, message: InjectedMessage, opts?: CallOptions): Promise<InjectionResult>;
  /**
   * POSTs a webhook delivery to a URL made by `webhookUrls` (webhook token, never the API
   * token). `id` is absent when the server named no message (the hosted service's answer).
   */
  deliverWebhook(url: string, message: InjectedMessage, opts?: CallOptions): Promise<WebhookDeliveryResult>;
  getLinks(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<string[]>;
  /** Local server only: the one-time code of the newest message after `since` (404 `not_found` when none arrives within `wait`). */
  getCode(domain: string, inbox: string, params?: LatestParams, opts?: CallOptions): Promise<LatestCode>;
  /** Local server only: the first link of `kind` in the newest message after `since` that has one. */
  getLink(domain: string, inbox: string, params?: LatestParams & { kind?: LinkKindParam }, opts?: CallOptions): Promise<LatestLink>;
  /**
   * Test Inbox server only (the hosted service has no search route): the messages of every
   * domain matching `q` (docs/api.md "Search"), newest first. A malformed query is
   * `invalid_input` with the server's message naming the problem.
   */
  search(q: string, params?: SearchParams, opts?: CallOptions): Promise<SearchResponse>;
  /**
   * Test Inbox server only: the address of its web UI that signs the browser in once, within
   * seconds (`/#ticket=…`, docs/api.md "Web UI"). The API token stays out of it: the ticket is
   * asked for with the token in a header, and the fragment never reaches a server or a Referer.
   * `origin`: the page's origin behind a proxy that rewrites Host, which its session accepts.
   */
  webUiSignInUrl(opts?: CallOptions & { origin?: string }): Promise<{ url: string; expires: number }>;
  /**
   * A page's client only (browser.ts: base `pageBaseUrl`, transport `pageFetch`): a session of
   * the web UI for the API token the reader typed or a sign-in link's ticket (`POST
   * <page>/ui/session`, docs/api.md "Web UI"). The browser keeps the session's cookie; the page
   * token returned goes in pageFetch's header. A wrong token is `unauthorized` (403), a spent or
   * expired ticket `unauthorized` (401), both with the server's reason in `serverMessage`.
   */
  openPageSession(credential: { token: string } | { ticket: string }, opts?: CallOptions): Promise<WebUiSession>;
  /** A page's client only: signs its session out (`DELETE <page>/ui/session`). */
  closePageSession(opts?: CallOptions): Promise<void>;
  listAttachments(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<AttachmentInfo[]>;
  downloadAttachment(domain: string, inbox: string, id: string, attachmentId: number, opts?: CallOptions): Promise<Attachment>;
  getRaw(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<string>;
  deleteMessage(domain: string, inbox: string, id: string, opts?: CallOptions): Promise<DeleteResult>;
  clearInbox(domain: string, inbox: string, opts?: CallOptions): Promise<DeleteResult>;
  /** Test Inbox server: the fault rules with their counters (docs/chaos.md). */
  chaosRules(opts?: CallOptions): Promise<ChaosList>;
  /** Adds a fault rule; the server checks it (a bad one is a `bad_request` error naming the field). */
  addChaosRule(rule: Record<string, unknown>, opts?: CallOptions): Promise<{ id: string; rule: ChaosRuleInfo }>;
  /** Removes one rule; `not_found` when it is gone already. */
  removeChaosRule(id: string, opts?: CallOptions): Promise<{ removed: number }>;
  /** Removes every rule. */
  clearChaos(opts?: CallOptions): Promise<{ removed: number }>;
  /** Push subscription to `…/stream[/<inbox>]`, reconnecting with backoff. */
  subscribe(domain: string, inbox: string | undefined, handlers: StreamHandlers): Subscription;
  dispose(): Promise<void>;
}
