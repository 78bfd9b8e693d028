// The message protocol between the message panel (extension host, src/extension/messagePanel/)
// and the message view (browser, src/webview-ui/view.ts; main.ts in the editor, page.ts in the
// server's web UI). Defined once, as discriminated
// unions, and validated on arrival in both directions: neither side trusts what the other
// posts. No vscode, no Node, no DOM: plain data and checks.

import { plainText, UNCUT } from '../core/inert';
import type { SmsEncoding } from '../core/sms';
import { messageTitle } from '../core/title';
import { isDataImageUrl, MAX_URL_LENGTH } from '../core/urls';
import { CLICK_KINDS, type ClickKind } from '../core/clickKinds';

/** Tabs of the message view, in display order. */
const TAB_IDS = ['conversation', 'html', 'text', 'headers', 'links', 'attachments', 'raw'] as const;
export type TabId = (typeof TAB_IDS)[number];

export const TAB_LABELS: Record<TabId, string> = {
  conversation: 'Message',
  html: 'HTML',
  text: 'Text',
  headers: 'Headers',
  links: 'Links',
  attachments: 'Attachments',
  raw: 'Raw',
};

/** Longest message id accepted in a message (ids are `<inbox ≤64>-<seconds>-<counter>`). */
const MAX_ID_LENGTH = 128;
/** Most attachments referenced by index in one message. */
const MAX_ATTACHMENT_INDEX = 10_000;
/** Largest text field in a render message (HTML source, raw, text): the host truncates before this. */
const MAX_FIELD_LENGTH = 16 * 1024 * 1024;
/** Largest email HTML sent to the view to be sanitized and shown; the host cuts beyond it (a rendering limit). */
export const MAX_HTML_SOURCE = 5 * 1024 * 1024;
/** Most inline (`cid:`) images sent with one message. */
export const MAX_INLINE_IMAGES = 200;
/** Longest content id of an inline image. */
export const MAX_CONTENT_ID_LENGTH = 1024;

interface ViewHeader {
  /** Full sender (`Name <address>` for email, the number for SMS). */
  from: string;
  to: string;
  subject: string;
  /** Receipt time, ms since the Unix epoch. */
  time: number;
  /** The `Date` header as sent, when there is one. */
  date?: string;
  /** The API the message came through (a provider's, PROVIDER_API_HEADER), when it names one. */
  via?: string;
  id: string;
  domain: string;
}

interface ViewAttachment {
  /** The `attachment_id` used to download it. */
  index: number;
  filename: string;
  contentType: string;
  size: number;
}

interface ViewCode {
  code: string;
  /** Why it was picked, for the tooltip and screen readers. */
  reason: string;
}

interface ViewHtml {
  /**
   * The email's HTML as received (cut at MAX_HTML_SOURCE). Untrusted: the view sanitizes it
   * with DOMPurify (src/webview-ui/sanitize.ts) and shows it only in a sandboxed srcdoc frame.
   */
  source: string;
  /** Whether remote images may load (the setting, or the user's choice for this message). */
  remoteAllowed: boolean;
  /** Show simple mail (no backgrounds of its own) in the theme's colours (the `testInbox.themeSimpleMail` setting). */
  themeColors?: boolean;
  truncated: boolean;
  /** Inline parts the HTML refers to: `[content id (bare, lowercase), data:image/… URL]`. */
  inlineImages: Array<[string, string]>;
}

export interface ViewText {
  text: string;
  truncated: boolean;
}

export interface ViewLink {
  url: string;
  /** Visible text of the link in the HTML, when it has any. */
  text?: string;
}

interface ViewSms {
  from: string;
  to: string;
  body: string;
  time: number;
  /** How many SMS the text is sent as, and in which encoding (core/sms.ts). */
  segments: number;
  encoding: SmsEncoding;
}

/** Kinds of link a flow continues with (core/message.ts chooses one). */
const VERIFICATION_KINDS = CLICK_KINDS;
type ViewVerificationKind = ClickKind;

/** The link the message asks the reader to click to go on (confirm the address, sign in, reset), marked in the view. */
export interface ViewVerification {
  /** One of the state's links. */
  url: string;
  text?: string;
  kind: ViewVerificationKind;
  /** How the view names it: "Verification link", "Sign-in link", "Password reset link". */
  label: string;
}

/** Everything the view shows for one message. */
export interface ViewContent {
  id: string;
  kind: 'email' | 'sms';
  header: ViewHeader;
  /** Tabs to show, in order; the first is selected. */
  tabs: TabId[];
  html?: ViewHtml;
  text?: ViewText;
  headers: Array<[string, string]>;
  links: ViewLink[];
  attachments: ViewAttachment[];
  raw?: ViewText;
  sms?: ViewSms;
  code?: ViewCode;
  verification?: ViewVerification;
  /** Parts that could not be loaded (links, attachments, raw), said in the view instead of failing it. */
  notes: string[];
}

/** Host → webview. */
export type HostMessage =
  | { type: 'loading'; id: string }
  | { type: 'render'; state: ViewContent }
  | { type: 'error'; id: string; message: string; retryable: boolean }
  | { type: 'notice'; level: 'info' | 'error'; text: string };

/**
 * When the view did each step of showing a state (Date.now() in the view, the host's clock
 * too): its script started, the state arrived, the HTML was sanitized, the DOM was built.
 * For the debug state and the message-open bench.
 */
export interface ViewTiming {
  script: number;
  received: number;
  sanitized: number;
  built: number;
}

/** Webview → host. */
export type WebviewMessage =
  | { type: 'ready' }
  /** The view rendered a state; `blockedRemote`: remote images and CSS urls it held back. */
  | { type: 'rendered'; id: string; tabs: TabId[]; blockedRemote: number; timing?: ViewTiming }
  | { type: 'retry' }
  | { type: 'copyCode' }
  | { type: 'copyVerificationLink' }
  | { type: 'copyId' }
  | { type: 'openLink'; url: string }
  | { type: 'saveAttachment'; index: number }
  | { type: 'allowRemoteImages' };

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

// ---------------------------------------------------------------- checks

class Invalid extends Error {}

type Obj = Record<string, unknown>;

function obj(v: unknown, what: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Invalid(`${what} must be an object`);
  return v as Obj;
}

function str(o: Obj, key: string, what: string, max = MAX_FIELD_LENGTH): string {
  const v = o[key];
  if (typeof v !== 'string') throw new Invalid(`${what}.${key} must be a string`);
  if (v.length > max) throw new Invalid(`${what}.${key} is longer than ${max} characters`);
  return v;
}

function optStr(o: Obj, key: string, what: string): string | undefined {
  return o[key] === undefined ? undefined : str(o, key, what);
}

function num(o: Obj, key: string, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new Invalid(`${what}.${key} must be a number from ${min} to ${max}`);
  return v;
}

function int(o: Obj, key: string, what: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = num(o, key, what, min, max);
  if (!Number.isInteger(v)) throw new Invalid(`${what}.${key} must be an integer`);
  return v;
}

function bool(o: Obj, key: string, what: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw new Invalid(`${what}.${key} must be true or false`);
  return v;
}

function arr(o: Obj, key: string, what: string): unknown[] {
  const v = o[key];
  if (!Array.isArray(v)) throw new Invalid(`${what}.${key} must be an array`);
  return v;
}

function id(o: Obj, what: string): string {
  const v = str(o, 'id', what, MAX_ID_LENGTH);
  if (v.length === 0) throw new Invalid(`${what}.id is empty`);
  return v;
}

function isTabId(v: unknown): v is TabId {
  return typeof v === 'string' && (TAB_IDS as readonly string[]).includes(v);
}

function tabs(o: Obj, what: string): TabId[] {
  const list = arr(o, 'tabs', what);
  const out: TabId[] = [];
  for (const t of list) {
    if (!isTabId(t)) throw new Invalid(`${what}.tabs has an unknown tab ${JSON.stringify(t)}`);
    if (out.includes(t)) throw new Invalid(`${what}.tabs lists ${t} twice`);
    out.push(t);
  }
  if (out.length === 0) throw new Invalid(`${what}.tabs is empty`);
  return out;
}

function viewText(v: unknown, what: string): ViewText {
  const o = obj(v, what);
  return { text: str(o, 'text', what), truncated: bool(o, 'truncated', what) };
}

function viewContent(v: unknown): ViewContent {
  const what = 'state';
  const o = obj(v, what);
  const kind = o.kind;
  if (kind !== 'email' && kind !== 'sms') throw new Invalid('state.kind must be "email" or "sms"');
  const h = obj(o.header, 'state.header');
  const header: ViewHeader = {
    from: str(h, 'from', 'state.header', 4096),
    to: str(h, 'to', 'state.header', 4096),
    subject: str(h, 'subject', 'state.header', 65536),
    time: num(h, 'time', 'state.header'),
    id: id(h, 'state.header'),
    domain: str(h, 'domain', 'state.header', 256),
  };
  const date = optStr(h, 'date', 'state.header');
  if (date !== undefined) header.date = date;
  const via = optStr(h, 'via', 'state.header');
  if (via !== undefined) header.via = via;
  const state: ViewContent = {
    id: id(o, what),
    kind,
    header,
    tabs: tabs(o, what),
    headers: arr(o, 'headers', what).map((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
        throw new Invalid(`state.headers[${i}] must be a [name, value] pair of strings`);
      }
      return [pair[0], pair[1]] as [string, string];
    }),
    links: arr(o, 'links', what).map((l, i) => {
      const w = `state.links[${i}]`;
      const lo = obj(l, w);
      const link: ViewLink = { url: str(lo, 'url', w, MAX_URL_LENGTH) };
      const text = optStr(lo, 'text', w);
      if (text !== undefined) link.text = text;
      return link;
    }),
    attachments: arr(o, 'attachments', what).map((a, i) => {
      const w = `state.attachments[${i}]`;
      const ao = obj(a, w);
      return {
        index: int(ao, 'index', w, 0, MAX_ATTACHMENT_INDEX),
        filename: str(ao, 'filename', w, 1024),
        contentType: str(ao, 'contentType', w, 1024),
        size: int(ao, 'size', w),
      };
    }),
    notes: arr(o, 'notes', what).map((n, i) => {
      if (typeof n !== 'string') throw new Invalid(`state.notes[${i}] must be a string`);
      return n;
    }),
  };
  if (header.id !== state.id) throw new Invalid('state.header.id differs from state.id');
  if (o.html !== undefined) {
    const ho = obj(o.html, 'state.html');
    const images = arr(ho, 'inlineImages', 'state.html');
    if (images.length > MAX_INLINE_IMAGES) throw new Invalid(`state.html.inlineImages has more than ${MAX_INLINE_IMAGES} entries`);
    state.html = {
      source: str(ho, 'source', 'state.html', MAX_HTML_SOURCE),
      remoteAllowed: bool(ho, 'remoteAllowed', 'state.html'),
      truncated: bool(ho, 'truncated', 'state.html'),
      ...(ho.themeColors !== undefined && bool(ho, 'themeColors', 'state.html') ? { themeColors: true } : {}),
      inlineImages: images.map((pair, i) => {
        const w = `state.html.inlineImages[${i}]`;
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') throw new Invalid(`${w} must be a [content id, data URL] pair of strings`);
        if (pair[0].length === 0 || pair[0].length > MAX_CONTENT_ID_LENGTH) throw new Invalid(`${w} has an empty or too long content id`);
        if (pair[1].length > MAX_FIELD_LENGTH || !isDataImageUrl(pair[1])) throw new Invalid(`${w} is not a data: image URL`);
        return [pair[0], pair[1]] as [string, string];
      }),
    };
  }
  if (o.text !== undefined) state.text = viewText(o.text, 'state.text');
  if (o.raw !== undefined) state.raw = viewText(o.raw, 'state.raw');
  if (o.sms !== undefined) {
    const so = obj(o.sms, 'state.sms');
    const encoding = so.encoding;
    if (encoding !== 'GSM-7' && encoding !== 'UCS-2') throw new Invalid('state.sms.encoding must be "GSM-7" or "UCS-2"');
    state.sms = {
      from: str(so, 'from', 'state.sms', 4096),
      to: str(so, 'to', 'state.sms', 4096),
      body: str(so, 'body', 'state.sms'),
      time: num(so, 'time', 'state.sms'),
      segments: int(so, 'segments', 'state.sms', 1),
      encoding,
    };
  }
  if (o.code !== undefined) {
    const co = obj(o.code, 'state.code');
    const code = str(co, 'code', 'state.code', 64);
    if (code.length === 0) throw new Invalid('state.code.code is empty');
    state.code = { code, reason: str(co, 'reason', 'state.code', 1024) };
  }
  if (o.verification !== undefined) {
    const w = 'state.verification';
    const vo = obj(o.verification, w);
    const kind = vo.kind;
    if (!(VERIFICATION_KINDS as readonly unknown[]).includes(kind)) throw new Invalid(`${w}.kind must be one of ${VERIFICATION_KINDS.join(', ')}`);
    const url = str(vo, 'url', w, MAX_URL_LENGTH);
    if (!state.links.some((l) => l.url === url)) throw new Invalid(`${w}.url is not one of the state's links`);
    const verification: ViewVerification = { url, kind: kind as ViewVerificationKind, label: str(vo, 'label', w, 64) };
    const text = optStr(vo, 'text', w);
    if (text !== undefined) verification.text = text;
    state.verification = verification;
  }
  // Every tab must have what it shows.
  if (state.tabs.includes('html') && !state.html) throw new Invalid('state.tabs has html but state.html is missing');
  if (state.tabs.includes('text') && !state.text) throw new Invalid('state.tabs has text but state.text is missing');
  if (state.tabs.includes('raw') && !state.raw) throw new Invalid('state.tabs has raw but state.raw is missing');
  if (state.tabs.includes('conversation') && !state.sms) throw new Invalid('state.tabs has conversation but state.sms is missing');
  return state;
}

function run<T>(f: () => T): Parsed<T> {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, error: e.message };
    throw e;
  }
}

/**
 * Whether a `message` event in the view comes from the webview host (defence in depth, on
 * top of parsing): the editor's frames post the host's messages into this frame with this
 * frame's own origin as target, from a window. A message without a source window, from
 * another origin, or from a window the view itself holds untrusted content in (the email's
 * frame) is ignored.
 */
export function isFromHost(event: { source: unknown; origin: string }, self: { origin: string }, untrusted: readonly unknown[]): boolean {
  return event.source !== null && event.origin === self.origin && !untrusted.includes(event.source);
}

/** Validates a message posted by the host; the webview ignores anything that fails. */
export function parseHostMessage(data: unknown): Parsed<HostMessage> {
  return run((): HostMessage => {
    const o = obj(data, 'message');
    switch (o.type) {
      case 'loading':
        return { type: 'loading', id: id(o, 'loading') };
      case 'render':
        return { type: 'render', state: viewContent(o.state) };
      case 'error':
        return { type: 'error', id: id(o, 'error'), message: str(o, 'message', 'error', 4096), retryable: bool(o, 'retryable', 'error') };
      case 'notice': {
        const level = o.level;
        if (level !== 'info' && level !== 'error') throw new Invalid('notice.level must be "info" or "error"');
        return { type: 'notice', level, text: str(o, 'text', 'notice', 4096) };
      }
      default:
        throw new Invalid(`unknown message type ${JSON.stringify(o.type)}`);
    }
  });
}

/** Validates a message posted by the webview; the host ignores (and logs) anything that fails. */
export function parseWebviewMessage(data: unknown): Parsed<WebviewMessage> {
  return run((): WebviewMessage => {
    const o = obj(data, 'message');
    switch (o.type) {
      case 'ready':
      case 'retry':
      case 'copyCode':
      case 'copyVerificationLink':
      case 'copyId':
      case 'allowRemoteImages':
        return { type: o.type };
      case 'rendered': {
        const rendered: WebviewMessage = { type: 'rendered', id: id(o, 'rendered'), tabs: tabs(o, 'rendered'), blockedRemote: int(o, 'blockedRemote', 'rendered') };
        if (o.timing !== undefined) {
          const t = obj(o.timing, 'rendered.timing');
          rendered.timing = { script: num(t, 'script', 'rendered.timing'), received: num(t, 'received', 'rendered.timing'), sanitized: num(t, 'sanitized', 'rendered.timing'), built: num(t, 'built', 'rendered.timing') };
        }
        return rendered;
      }
      case 'openLink': {
        const url = str(o, 'url', 'openLink', MAX_URL_LENGTH);
        if (url.length === 0) throw new Invalid('openLink.url is empty');
        return { type: 'openLink', url };
      }
      case 'saveAttachment':
        return { type: 'saveAttachment', index: int(o, 'index', 'saveAttachment', 0, MAX_ATTACHMENT_INDEX) };
      default:
        throw new Invalid(`unknown message type ${JSON.stringify(o.type)}`);
    }
  });
}

/**
 * The message's heading and editor tab title: its messageTitle (core/title.ts), as the tree, the
 * pickers and the web list call it; an SMS's words are its body's.
 */
export function viewTitle(state: Pick<ViewContent, 'kind' | 'id' | 'header'> & { sms?: Pick<ViewSms, 'body'> }): string {
  // Mail text in the view's chrome: core/inert.ts's rule (an SMS's words are its body's).
  return plainText(messageTitle({ ...state.header, sms: state.kind === 'sms', smsText: state.sms?.body }), UNCUT);
}
