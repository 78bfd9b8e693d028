// The web UI's page (served by src/server/http/ui at `/`, bundled to dist/webui.js): sign-in,
// domains → inboxes → messages, search, live updates, and the message view. The message view
// is the editor's own (./view.ts, ./viewContent.ts, ./sanitize.ts): this page is its second host.
// The page talks to its server through the one API client (src/api: createClient over the page's
// transport, browser.ts): every request carries the page token (kept in this tab, below) and the
// session cookie, never the API token; paths, answers' checks, errors and the push stream are the
// client's, as on every other surface.
import { pageBaseUrl, pageFetch, pageServerUrl } from '../api/browser';
import { createClient } from '../api/client';
import { ApiError } from '../api/errors';
import type { StreamState, Subscription } from '../api/types';
import { ALL_INBOXES, isPhoneInbox } from '../core/ids';
import { plain, type Plain, plainText } from '../core/inert';
import type { AttachmentInfo, Message, MessageSummary, StreamEvent } from '../core/wire';
import { parseHostMessage, type WebviewMessage } from '../shared/viewProtocol';
import { handleHostMessage, initView } from './view';
import { buildViewContent } from './viewContent';
import { messageTitle } from '../core/title';

/** The header the page token goes in (the server's ui/session.ts PAGE_TOKEN_HEADER). */
const PAGE_TOKEN_HEADER = 'x-test-inbox-session';
/**
 * The page token is kept in this tab's sessionStorage, so a reload keeps the session: storage of
 * the page's own origin (scheme, host and port), which the app under test on another port of the
 * same host cannot read, unlike the cookie it is sent. The email frame is sandboxed without
 * same-origin, so it cannot read it either. Gone with the tab, and at sign-out.
 */
const PAGE_TOKEN_KEY = 'test-inbox-page-token';

let pageToken: string | undefined;
/** The page's client: the API under the page's own `ui/` (behind a proxy prefix too), the page token read at each request. */
const api = createClient({ baseUrl: pageBaseUrl(document.baseURI), serverUrl: pageServerUrl(document.baseURI), fetch: pageFetch({ header: PAGE_TOKEN_HEADER, pageToken: () => pageToken }) });
/** A problem of the search box's query (the server's 400), shown in place of results. */
let queryProblem: string | undefined;
/** The number of messages the search matched (its total), for the list's heading. */
let queryTotal = 0;
/** Give the first message row the focus when the next list arrives (after sign-in, a delete or a clear), unless the reader is elsewhere. */
let focusFirstRow = false;
let selected: { domain?: string; inbox?: string; query?: string } = {};
/** The domain shown was chosen by the page (the newest mail's), not by the reader: new mail elsewhere takes the page there. */
let autoDomain = true;
/** A query that matches every message (everything before the end of time): the newest message names the domain to show first. */
const NEWEST_QUERY = 'before:9999-12-31';
/** The messages listed: the search's, the selected inbox's, or the selected domain's newest. */
let summaries: MessageSummary[] = [];
/** The selected domain's newest messages, which name its inboxes and count their mail. */
let domainRecent: MessageSummary[] = [];
/** The domain has more mail than its newest LIST_LIMIT: the inbox counts are of those. */
let domainCut = false;
const LIST_LIMIT = 500;
/** The newest matches of a search listed: enough for a page, its total is said. */
const SEARCH_LIMIT = 200;
let open: { domain: string; inbox: string; id: string; message: Message; attachments: AttachmentInfo[]; raw?: string; remote: boolean } | undefined;
/** The push subscription of the signed-in page (the client's: it reconnects with backoff). */
let live: Subscription | undefined;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function byId(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e;
}

class SignedOut extends Error {}

/** The session has ended (expired, signed out elsewhere, the API token changed): the server's 401, which the client reads as `unauthorized`. */
function sessionEnded(e: unknown): e is ApiError {
  return ApiError.is(e, 'unauthorized') && e.status === 401;
}

/** What a failure says on the page: the server's own reason when it gave one, else the client's message. */
function reason(e: unknown): string {
  return ApiError.is(e) ? (e.serverMessage ?? e.message) : e instanceof Error ? e.message : String(e);
}

/**
 * A call of the session: none without a page token; an ended session sends the page back to
 * sign-in, saying why, and rejects with SignedOut (which the caller passes over in silence).
 */
async function call<T>(request: () => Promise<T>): Promise<T> {
  if (pageToken === undefined) throw new SignedOut('not signed in');
  try {
    return await request();
  } catch (e) {
    if (!sessionEnded(e)) throw e;
    const said = e.serverMessage ?? 'the session has ended: sign in again';
    showSignIn(said);
    throw new SignedOut(said);
  }
}

// ---------------------------------------------------------------- sign-in

/** The server's messages are phrased for logs and JSON (lower case): on the page, a sentence. */
function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function showSignIn(problem?: string): void {
  pageToken = undefined;
  sessionStorage.removeItem(PAGE_TOKEN_KEY);
  live?.dispose();
  live = undefined;
  const app = byId('app');
  app.replaceChildren();
  const main = el('main', { class: 'signin' });
  main.append(el('h1', {}, 'Test Inbox'));
  const form = el('form', { novalidate: '' });
  const label = el('label', { for: 'token' }, 'API token');
  const input = el('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'current-password', required: '' });
  const submit = el('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const error = el('p', { id: 'signin-error', class: 'error', role: 'alert' });
  if (problem) error.textContent = sentence(problem);
  form.append(label, input, submit, error);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    // As pasted from a terminal or from tokens.json: spaces, quotes and the key around it are no part of the token.
    const token = input.value.trim().replace(/^(?:"?apiToken"?\s*:\s*)?["']?([^"'\s]*)["']?,?$/, '$1');
    if (token === '') {
      error.textContent = 'Enter the API token.';
      input.focus();
      return;
    }
    void signIn({ token }, error);
  });
  main.append(el('p', { class: 'note' }, 'The API token is apiToken in tokens.json, in the server\'s data folder; in the editor, Test Inbox: Copy API Token copies it.'), form);
  app.append(main);
  document.title = 'Sign in · Test Inbox';
  input.focus();
}

/** Signs in with the API token the user typed, or with the one-time ticket of a sign-in link. */
async function signIn(credential: { token: string } | { ticket: string }, error: HTMLElement): Promise<void> {
  error.textContent = '';
  let session: { pageToken: string };
  try {
    session = await api.openPageSession(credential);
  } catch (e) {
    if (ApiError.is(e, 'network') || ApiError.is(e, 'timeout')) {
      error.textContent = 'The server does not answer. Is it running?';
      return;
    }
    // 403 is a wrong token, or (the server's message says so) a page at an origin the server does not accept.
    const said = ApiError.is(e) && e.serverMessage !== undefined ? sentence(e.serverMessage) : ApiError.is(e) && e.status !== undefined ? `Sign-in failed (${e.status}).` : sentence(reason(e));
    error.textContent = ApiError.is(e) && e.status === 403 && 'token' in credential && e.serverMessage === 'wrong API token' ? 'Wrong API token.' : said;
    return;
  }
  pageToken = session.pageToken;
  sessionStorage.setItem(PAGE_TOKEN_KEY, session.pageToken);
  showApp();
}

/**
 * A sign-in link from the editor (Open in Browser) is `/#ticket=…`: the fragment never reaches a
 * server, a log or a Referer. It is taken out of the address (and so of the history entry) before
 * anything else, then spent once for a session; a used or expired one leaves the sign-in form.
 */
function takeTicket(): string | undefined {
  const ticket = /^#ticket=([A-Za-z0-9_.-]{1,600})$/.exec(window.location.hash)?.[1];
  if (window.location.hash !== '') history.replaceState(null, '', window.location.pathname + window.location.search);
  return ticket;
}

async function signOut(): Promise<void> {
  try {
    // Signed out here whatever the server answers (a session ended already is signed out too).
    if (pageToken !== undefined) await api.closePageSession().catch(() => undefined);
  } finally {
    showSignIn('Signed out.');
  }
}

// ---------------------------------------------------------------- the app

function showApp(): void {
  const app = byId('app');
  app.replaceChildren();
  const header = el('header', { class: 'bar' });
  header.append(el('h1', {}, 'Test Inbox'));
  const search = el('form', { role: 'search', class: 'search' });
  const q = el('input', { id: 'q', type: 'search', 'aria-label': 'Search messages', placeholder: 'Search: from:, subject:, code:, has:link…' });
  search.append(q, el('button', { type: 'submit' }, 'Search'));
  search.addEventListener('submit', (ev) => {
    ev.preventDefault();
    choose(q.value.trim() ? { query: q.value.trim() } : {}, !q.value.trim());
  });
  // Emptied (typed away, or Escape): back to the lists at once.
  q.addEventListener('input', () => {
    if (q.value.trim() === '' && selected.query !== undefined) choose({}, true);
  });
  const out = el('button', { type: 'button', id: 'signout' }, 'Sign out');
  out.addEventListener('click', () => void signOut());
  header.append(search, out);
  const conn = el('p', { id: 'conn', class: 'conn', role: 'status' });
  const layout = el('div', { class: 'layout' });
  layout.append(
    nav('domains', 'Domains'),
    nav('inboxes', 'Inboxes'),
    nav('messages', 'Messages'),
  );
  const viewer = el('section', { class: 'viewer', 'aria-label': 'Message' });
  viewer.append(el('main', { id: 'root' }), el('div', { id: 'status', class: 'status', role: 'status', 'aria-live': 'polite' }));
  layout.append(viewer);
  app.append(header, conn, layout);
  document.title = 'Test Inbox';
  focusFirstRow = true;
  // The push stream lists everything as it connects (and again at each reconnection).
  stream();
}

function nav(id: string, label: string): HTMLElement {
  const n = el('nav', { 'aria-label': label, class: `list list-${id}` });
  const ul = el('ul', { id });
  // Up and Down move between the rows, Home and End to the first and last; Tab leaves the list.
  ul.addEventListener('keydown', (ev) => {
    const rows = [...ul.querySelectorAll<HTMLElement>('[data-key]')];
    const at = rows.indexOf(document.activeElement as HTMLElement);
    if (at < 0) return;
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: rows.length - 1 }[ev.key];
    if (to === undefined || to < 0 || to >= rows.length) return;
    ev.preventDefault();
    rows[to].focus();
  });
  n.append(el('h2', {}, label), ul);
  return n;
}

/**
 * A row of a list: a button, keyed so that a redraw can give the focus back to it (see fill).
 * Its text is mail's (a subject, a sender, a name), so it goes through core/inert.ts's rule, as
 * the editor's tree rows do: no bidi control reorders it, and it is cut to its length.
 */
function item(key: string, text: string, count: string | undefined, current: boolean, onClick: () => void, extra?: Plain): HTMLLIElement {
  const li = el('li');
  const b = el('button', { type: 'button', class: current ? 'item current' : 'item', 'data-key': key, ...(current ? { 'aria-current': 'true' } : {}) });
  b.append(el('span', { class: 'name' }, plainText(text)));
  if (extra) b.append(el('span', { class: 'extra' }, extra));
  if (count !== undefined) b.append(el('span', { class: 'count' }, count));
  b.addEventListener('click', onClick);
  li.append(b);
  return li;
}

/**
 * Replaces a list's rows. Live updates redraw the lists while a reader may be on one of their
 * rows; the row of the same key takes the focus back, so no redraw drops the keyboard user's place.
 */
function fill(list: HTMLElement, rows: HTMLElement[]): void {
  const active = document.activeElement;
  const key = active instanceof HTMLElement && list.contains(active) ? active.dataset.key : undefined;
  list.replaceChildren(...rows);
  if (key === undefined) return;
  for (const b of list.querySelectorAll<HTMLElement>('[data-key]')) {
    if (b.dataset.key === key) {
      b.focus();
      return;
    }
  }
}

/** The domain of the newest message of all, by a search that matches every message. */
async function newestDomain(): Promise<string | undefined> {
  return (await call(() => api.search(NEWEST_QUERY, { limit: 1 }))).msgs[0]?.domain;
}

async function refresh(): Promise<void> {
  try {
    const domains = await call(() => api.listDomains());
    // With no domain chosen (or the chosen one emptied), the server's default domain when it has
    // mail (where `private` mail goes), else the newest mail's, so mail is on screen at once.
    if (selected.query === undefined && !domains.domains.some((d) => d.name === selected.domain)) {
      autoDomain = true;
      const preferred = domains.domains.find((d) => d.name === domains.defaultDomain)?.name;
      selected = preferred !== undefined ? { domain: preferred } : domains.domains.length > 1 ? { domain: (await newestDomain()) ?? domains.domains[0].name } : domains.domains[0] ? { domain: domains.domains[0].name } : {};
    }
    fill(
      byId('domains'),
      domains.domains.length === 0
        ? [el('li', { class: 'empty' }, 'No mail yet.')]
        : domains.domains.map((d) => item(`domain:${d.name}`, d.name, String(d.messages), d.name === selected.domain, () => choose({ domain: d.name }, false))),
    );
    queryProblem = undefined;
    if (selected.query !== undefined) {
      try {
        const q = selected.query;
        const found = await call(() => api.search(q, { limit: SEARCH_LIMIT }));
        summaries = found.msgs;
        queryTotal = found.total;
        // A message the search does not list is closed: what is shown matches what was asked.
        if (open !== undefined && !summaries.some((m) => m.id === open?.id && m.domain === open.domain)) closeOpen('The message that was open does not match the search.');
      } catch (e) {
        // The server's 400 names what is wrong with the query.
        if (!(ApiError.is(e) && e.status === 400)) throw e;
        summaries = [];
        queryProblem = reason(e);
      }
    } else if (selected.domain !== undefined) {
      const { domain, inbox } = selected;
      const recent = await call(() => api.listInbox(domain, ALL_INBOXES, { limit: LIST_LIMIT, sort: 'descending' }));
      domainRecent = recent.msgs;
      domainCut = recent.cursor !== undefined || recent.msgs.length >= LIST_LIMIT;
      // An inbox's own listing: all of its newest mail, not only what is among the domain's newest.
      summaries = inbox === undefined ? domainRecent : (await call(() => api.listInbox(domain, inbox, { limit: LIST_LIMIT, sort: 'descending' }))).msgs;
    } else summaries = [];
    renderInboxes();
    renderMessages();
    setConn('');
  } catch (e) {
    if (!(e instanceof SignedOut)) setConn(`Could not load: ${reason(e)}`);
  }
}

function renderInboxes(): void {
  const counts = new Map<string, number>();
  for (const m of domainRecent) counts.set(m.to, (counts.get(m.to) ?? 0) + 1);
  const rows: HTMLElement[] = [];
  if (selected.query !== undefined) rows.push(el('li', { class: 'empty' }, 'Searching every domain and inbox.'));
  if (selected.domain !== undefined) {
    for (const [inbox, n] of [...counts].sort((a, b) => a[0].localeCompare(b[0]))) {
      // A phone inbox's messages are SMS (core/ids.ts isPhoneInbox, the rule of the tree and the API).
      rows.push(item(`inbox:${inbox}`, inbox, String(n), inbox === selected.inbox, () => choose({ domain: selected.domain, inbox }, false), isPhoneInbox(inbox) ? plainText('SMS') : undefined));
    }
    if (domainCut) rows.push(el('li', { class: 'empty' }, `Inboxes and counts of the newest ${LIST_LIMIT} messages.`));
    if (selected.inbox !== undefined) {
      const clear = el('button', { type: 'button', class: 'danger', 'data-key': 'clear' }, `Clear inbox ${selected.inbox}`);
      clear.addEventListener('click', () => void clearInbox());
      const li = el('li');
      li.append(clear);
      rows.push(li);
    }
  }
  fill(byId('inboxes'), rows);
}

function renderMessages(): void {
  const shown = summaries.filter((m) => selected.inbox === undefined || m.to === selected.inbox).sort((a, b) => b.time - a.time);
  const rows: HTMLElement[] = [];
  if (selected.query !== undefined) {
    rows.push(
      queryProblem !== undefined
        ? el('li', { class: 'error', role: 'alert' }, `The query cannot be read: ${queryProblem.replace(/^bad query: /, '')}`)
        : el('li', { class: 'empty' }, `${queryTotal} ${queryTotal === 1 ? 'message matches' : 'messages match'} “${selected.query}”${queryTotal > shown.length ? ` (the newest ${shown.length} shown)` : ''}.`),
    );
  } else if (shown.length === 0) rows.push(el('li', { class: 'empty' }, 'No messages.'));
  for (const m of shown) rows.push(item(`message:${m.id}`, messageTitle(m), undefined, open?.id === m.id, () => void openMessage(m.domain, m.to, m.id), plain`${m.from} · ${m.to} · ${new Date(m.time).toLocaleString()}`));
  const list = byId('messages');
  fill(list, rows);
  if (focusFirstRow && shown.length > 0) {
    focusFirstRow = false;
    // Only where the focus fell to the page (a sign-in form or a button gone): never taken from where the reader is.
    if (document.activeElement === null || document.activeElement === document.body) list.querySelector<HTMLElement>('[data-key]')?.focus();
  }
}

async function clearInbox(): Promise<void> {
  const { domain, inbox } = selected;
  if (domain === undefined || inbox === undefined) return;
  if (!window.confirm(`Delete every message of ${inbox}@${domain}?`)) return;
  try {
    await call(() => api.clearInbox(domain, inbox));
    selected = { domain };
    open = undefined;
    byId('root').replaceChildren(el('p', { class: 'empty' }, `Inbox ${inbox} cleared.`));
    announce(`Cleared inbox ${inbox}.`);
    focusFirstRow = true;
    await refresh();
  } catch (e) {
    if (!(e instanceof SignedOut)) setConn(`Could not clear: ${reason(e)}`);
  }
}

/**
 * The reader chose what to list (a domain, an inbox, a search, or none): the one place a choice
 * is made. What is shown matches what was chosen: a message open outside the new domain or inbox
 * is closed, and a note left in the view by an earlier choice (a search's) goes with it.
 */
function choose(next: typeof selected, auto: boolean): void {
  selected = next;
  autoDomain = auto;
  const outside = open !== undefined && next.query === undefined && next.domain !== undefined && (open.domain !== next.domain || (next.inbox !== undefined && open.inbox !== next.inbox));
  if (outside) closeOpen('');
  else if (open === undefined) byId('root').replaceChildren();
  void refresh();
}

/** Closes the open message, saying why in its place. */
function closeOpen(why: string): void {
  open = undefined;
  byId('root').replaceChildren(...(why ? [el('p', { class: 'empty' }, why)] : []));
}

/** Says what happened in the view's status line (the one the message view uses, a polite live region). */
function announce(text: string, level: 'info' | 'error' = 'info'): void {
  handleHostMessage({ type: 'notice', level, text }, Date.now());
}

function setConn(text: string): void {
  const c = document.getElementById('conn');
  if (c) c.textContent = text;
}

// ---------------------------------------------------------------- the message view

async function openMessage(domain: string, inbox: string, id: string): Promise<void> {
  handleHostMessage({ type: 'loading', id }, Date.now());
  try {
    const message = await call(() => api.getMessage(domain, inbox, id));
    // The view shows the message without its attachments or source when either cannot be read.
    const [attachments, raw] = await Promise.all([
      call(() => api.listAttachments(domain, inbox, id)).catch((): AttachmentInfo[] => []),
      call(() => api.getRaw(domain, inbox, id)).catch(() => undefined),
    ]);
    open = { domain, inbox, id, message, attachments, raw, remote: false };
    renderOpen();
    renderMessages();
    // One column on a narrow screen: the message is below the lists, so bring it into view.
    if (window.matchMedia('(max-width: 800px)').matches) document.querySelector('.viewer')?.scrollIntoView({ block: 'start' });
  } catch (e) {
    if (e instanceof SignedOut) return;
    const gone = ApiError.is(e, 'not_found');
    handleHostMessage({ type: 'error', id, message: gone ? 'This message was deleted.' : `Could not open the message: ${reason(e)}`, retryable: !gone }, Date.now());
  }
}

function renderOpen(): void {
  if (!open) return;
  const state = buildViewContent({ domain: open.domain, message: open.message, attachments: open.attachments, raw: open.raw, allowRemoteImages: open.remote });
  // The same check the editor's view applies to what its host sends.
  const checked = parseHostMessage({ type: 'render', state });
  handleHostMessage(checked.ok ? checked.value : { type: 'error', id: open.id, message: `The message cannot be shown: ${checked.error}`, retryable: false }, Date.now());
  const actions = el('div', { class: 'actions' });
  const del = el('button', { type: 'button', class: 'danger' }, 'Delete message');
  del.addEventListener('click', () => void deleteOpen());
  actions.append(del);
  byId('root').prepend(actions);
}

async function deleteOpen(): Promise<void> {
  if (!open) return;
  const { domain, inbox, id } = open;
  try {
    await call(() => api.deleteMessage(domain, inbox, id));
    open = undefined;
    byId('root').replaceChildren(el('p', { class: 'empty' }, 'Message deleted.'));
    announce('Message deleted.');
    focusFirstRow = true;
    await refresh();
  } catch (e) {
    if (!(e instanceof SignedOut)) setConn(`Could not delete: ${reason(e)}`);
  }
}

/** Copies text; over plain HTTP on a LAN address navigator.clipboard is missing, so a hidden textarea and execCommand do it. */
async function copy(text: string, what: string): Promise<void> {
  let ok = false;
  if (navigator.clipboard && window.isSecureContext) {
    ok = await navigator.clipboard.writeText(text).then(() => true, () => false);
  }
  if (!ok) {
    const area = el('textarea', { 'aria-hidden': 'true', class: 'copy-buffer', readonly: '' });
    area.value = text;
    document.body.append(area);
    area.select();
    ok = document.execCommand('copy');
    area.remove();
  }
  if (ok) announce(`Copied ${what}.`);
  else announce(`Could not copy ${what}: select it and copy by hand.`, 'error');
}

/** Downloads an attachment through the session (the page token goes in a header, so no plain link can fetch it). */
async function saveAttachment(index: number): Promise<void> {
  if (!open) return;
  const { domain, inbox, id } = open;
  const a = open.attachments.find((x) => x.attachment_id === index);
  const name = a?.filename || `attachment-${index}`;
  try {
    const file = await call(() => api.downloadAttachment(domain, inbox, id, index));
    const url = URL.createObjectURL(new Blob([new Uint8Array(file.bytes)], { type: file.contentType }));
    const link = el('a', { href: url, download: name, class: 'copy-buffer' });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    announce(`Saved ${name}.`);
  } catch (e) {
    if (!(e instanceof SignedOut)) announce(`Could not save ${name}: ${reason(e)}`, 'error');
  }
}

function answer(m: WebviewMessage): void {
  if (!open) return;
  const state = buildViewContent({ domain: open.domain, message: open.message, attachments: open.attachments, raw: open.raw, allowRemoteImages: open.remote });
  switch (m.type) {
    case 'copyCode':
      if (state.code) void copy(state.code.code, `code ${state.code.code}`);
      return;
    case 'copyVerificationLink':
      if (state.verification) void copy(state.verification.url, 'the link');
      return;
    case 'copyId':
      void copy(open.id, 'the message ID');
      return;
    case 'openLink':
      // The view lists only the message's own links; the reader confirms the full address first.
      if (state.links.some((l) => l.url === m.url) && window.confirm(`Open ${m.url}?`)) window.open(m.url, '_blank', 'noopener,noreferrer');
      return;
    case 'allowRemoteImages':
      open.remote = true;
      renderOpen();
      return;
    case 'retry':
      void openMessage(open.domain, open.inbox, open.id);
      return;
    case 'saveAttachment':
      void saveAttachment(m.index);
      return;
    default:
      return;
  }
}

// ---------------------------------------------------------------- live updates

/**
 * Subscribes to the push stream of every domain through the client (fetch with the page token
 * in its header, which EventSource cannot send; the client reconnects with backoff). Each time
 * it opens, the lists are read again: what happened while it was away is not replayed.
 */
function stream(): void {
  live?.dispose();
  if (pageToken === undefined) return;
  let last: StreamState = 'connecting';
  live = api.subscribe('private', undefined, {
    onEvent,
    onState(state, error) {
      const was = last;
      last = state;
      if (state === 'open') {
        setConn('');
        void refresh();
      } else if (state === 'reconnecting') {
        // A stream that was open closed; one that was not could not be reached.
        setConn(was === 'open' ? 'The server closed the live connection; reconnecting…' : 'The server is not reachable; reconnecting…');
      } else if (state === 'closed' && error !== undefined && !ApiError.is(error, 'cancelled')) {
        if (sessionEnded(error)) showSignIn(error.serverMessage ?? 'the session has ended: sign in again');
        else setConn(`The live connection ended: ${reason(error)}`);
      } else if (state === 'unsupported') setConn(`No live updates: ${reason(error)}`);
    },
  });
}

/** A push event, already checked by the client (api/validate.ts parseStreamEvent). */
function onEvent(event: StreamEvent): void {
  // Mail arriving in another domain takes the page there while the reader has chosen none.
  if (event.type === 'message' && autoDomain && selected.query === undefined && event.domain !== selected.domain) selected = { domain: event.domain };
  if (event.type === 'delete' && open && event.ids?.includes(open.id)) {
    open = undefined;
    handleHostMessage({ type: 'error', id: 'deleted', message: 'This message was deleted.', retryable: false }, Date.now());
  }
  void refresh();
}

// ---------------------------------------------------------------- start

function applyScheme(): void {
  const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
  document.body.classList.toggle('vscode-dark', dark);
  document.body.classList.toggle('vscode-light', !dark);
}

let tabState: unknown;
initView({ post: answer, getState: () => tabState, setState: (s) => (tabState = s) });
applyScheme();
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  applyScheme();
  renderOpen();
});
const ticket = takeTicket();
const kept = ticket === undefined ? sessionStorage.getItem(PAGE_TOKEN_KEY) : null;
if (kept !== null) {
  // A reload of a signed-in tab: the session goes on (an ended one answers 401, and the sign-in shows).
  pageToken = kept;
  showApp();
} else {
  showSignIn();
  if (ticket !== undefined) void signIn({ ticket }, byId('signin-error'));
}
