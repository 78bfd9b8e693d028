// The message view, shared by its two hosts: the editor's message panel (./main.ts, bundled to
// dist/webview.js) and the server's web UI (./page.ts). DOM only: no Node, no vscode import.
// The host feeds it states (handleHostMessage) and answers what it posts (ViewHost.post). Every message from the host is validated before
// use; text goes in with `textContent`, never `innerHTML`; email HTML is sanitized here with
// DOMPurify (./sanitize) and shown only as the `srcdoc` of an iframe sandboxed without
// scripts, under its own CSP and the view's.
import {
  TAB_LABELS,
  viewTitle,
  type HostMessage,
  type TabId,
  type ViewContent,
  type ViewTiming,
  type WebviewMessage,
} from '../shared/viewProtocol';
import { buildSrcdoc, type FrameTheme, type SrcdocResult } from './sanitize';

/** What the view needs of its host: where its messages go, and a place to keep the open tab. */
interface ViewHost {
  post(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** How long a notice ("Copied") stays before the status line clears. */
const NOTICE_MS = 4000;

/** When this script started (the view's document and its resources have loaded by then). */
const scriptStartedAt = Date.now();
let host: ViewHost | undefined;
let current: ViewContent | undefined;
let noticeTimer: ReturnType<typeof setTimeout> | undefined;

/** Connects the view to its host; call once before the first handleHostMessage. */
export function initView(h: ViewHost): void {
  host = h;
}

function post(message: WebviewMessage): void {
  host?.post(message);
}

function savedTab(id: string): TabId | undefined {
  const s = host?.getState() as { id?: unknown; tab?: unknown } | undefined;
  return s && s.id === id && typeof s.tab === 'string' ? (s.tab as TabId) : undefined;
}

// ---------------------------------------------------------------- DOM helpers

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function icon(name: string): HTMLElement {
  return el('span', { class: `codicon codicon-${name}`, 'aria-hidden': 'true' });
}

function button(label: string, iconName: string | undefined, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el('button', { type: 'button', ...attrs });
  if (iconName) b.append(icon(iconName));
  b.append(el('span', {}, label));
  b.addEventListener('click', onClick);
  return b;
}

function root(): HTMLElement {
  const r = document.getElementById('root');
  if (!r) throw new Error('the view has no #root element');
  return r;
}

function statusLine(): HTMLElement {
  const s = document.getElementById('status');
  if (!s) throw new Error('the view has no #status element');
  return s;
}

/** Appends `text` to `parent`, wrapping each occurrence of `code` in a `<mark>`. */
function appendHighlighted(parent: HTMLElement, text: string, code: string | undefined): void {
  if (!code) {
    parent.append(document.createTextNode(text));
    return;
  }
  let i = 0;
  for (let at = text.indexOf(code); at >= 0; at = text.indexOf(code, at + code.length)) {
    parent.append(document.createTextNode(text.slice(i, at)));
    parent.append(el('mark', { class: 'code-mark' }, code));
    i = at + code.length;
  }
  parent.append(document.createTextNode(text.slice(i)));
}

function formatTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString();
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// ---------------------------------------------------------------- states

function showLoading(id: string): void {
  const r = root();
  r.replaceChildren();
  r.setAttribute('aria-busy', 'true');
  // Not a live region: the status line alone speaks ("Loaded: …" once the message is shown).
  const box = el('div', { class: 'state-box' });
  box.append(icon('loading codicon-modifier-spin'), el('span', {}, `Loading message ${id}…`));
  r.append(box);
}

function showError(message: string, retryable: boolean): void {
  const r = root();
  r.replaceChildren();
  r.removeAttribute('aria-busy');
  const box = el('div', { class: 'state-box error', role: 'alert' });
  box.append(icon('error'), el('p', {}, message));
  if (retryable) box.append(button('Retry', 'refresh', () => post({ type: 'retry' }), { class: 'primary' }));
  r.append(box);
}

/**
 * The button whose action the next notice answers ("Copied code …" after Copy): the notice
 * shows beside it, where the eye is, not in a corner of the view. Set on click, used once.
 */
let noticeAnchor: HTMLElement | undefined;

/** A button whose click posts `message` and whose answer (a notice) shows beside it. */
function actionButton(label: string, iconName: string, message: WebviewMessage, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b: HTMLButtonElement = button(label, iconName, () => {
    noticeAnchor = b;
    post(message);
  }, attrs);
  return b;
}

/** Places the status line just below `anchor` (kept inside the view), or back in its corner without one. */
function placeNotice(s: HTMLElement, anchor: HTMLElement | undefined): void {
  if (!anchor || !anchor.isConnected) {
    s.classList.remove('anchored');
    s.style.removeProperty('left');
    s.style.removeProperty('top');
    return;
  }
  const r = anchor.getBoundingClientRect();
  s.classList.add('anchored');
  const width = s.getBoundingClientRect().width;
  s.style.left = `${Math.max(8, Math.min(r.left, window.innerWidth - width - 8))}px`;
  s.style.top = `${Math.min(r.bottom + 4, window.innerHeight - s.getBoundingClientRect().height - 8)}px`;
}

function showNotice(level: 'info' | 'error', text: string): void {
  const s = statusLine();
  s.textContent = text;
  s.className = level === 'error' ? 'status error' : 'status';
  placeNotice(s, noticeAnchor);
  noticeAnchor = undefined;
  if (noticeTimer) clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => {
    s.textContent = '';
  }, NOTICE_MS);
}

function renderHeader(state: ViewContent): HTMLElement {
  const h = state.header;
  const header = el('header', { class: 'message-header' });
  header.append(el('h1', { class: 'subject' }, viewTitle(state)));
  const dl = el('dl', { class: 'fields' });
  const field = (name: string, value: string, extra?: HTMLElement): void => {
    const dd = el('dd', {}, value);
    if (extra) dd.append(extra);
    dl.append(el('dt', {}, name), dd);
  };
  field('From', h.from);
  field('To', h.to);
  field('Date', h.date ? `${formatTime(h.time)} (${h.date})` : formatTime(h.time));
  if (h.via) field('Sent through', h.via);
  field('ID', h.id, actionButton('Copy ID', 'copy', { type: 'copyId' }, { class: 'icon-button', 'aria-label': `Copy ID of message ${h.id}`, title: 'Copy the message ID' }));
  header.append(dl);
  return header;
}

function renderCode(state: ViewContent): HTMLElement | undefined {
  if (!state.code) return undefined;
  const box = el('section', { class: 'code-box', 'aria-label': 'Detected one-time code' });
  box.append(icon('key'), el('span', { class: 'code-label' }, 'Code'));
  box.append(el('span', { class: 'code-value', title: state.code.reason }, state.code.code));
  box.append(actionButton('Copy', 'copy', { type: 'copyCode' }, { class: 'primary', 'aria-label': `Copy code ${state.code.code}` }));
  return box;
}

/** The host of a URL, to name a link that has no text. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** The link the message asks the reader to click (confirm, sign in, reset), with Copy and Open. */
function renderVerification(state: ViewContent): HTMLElement | undefined {
  const v = state.verification;
  if (!v) return undefined;
  const name = v.label.toLowerCase();
  const box = el('section', { class: 'verify-box', 'aria-label': v.label });
  box.append(icon('verified'), el('span', { class: 'code-label' }, v.label));
  box.append(el('span', { class: 'verify-value', title: v.url }, v.text ? `${v.text} (${hostOf(v.url)})` : v.url));
  box.append(actionButton('Copy link', 'copy', { type: 'copyVerificationLink' }, { class: 'primary', 'aria-label': `Copy link: ${name}` }));
  box.append(button('Open…', 'link-external', () => post({ type: 'openLink', url: v.url }), { 'aria-label': `Open ${name} ${v.url}` }));
  return box;
}

/** The sanitized frame document of the state being rendered (undefined: no HTML, or it could not be sanitized). */
let built: SrcdocResult | undefined;

function renderHtmlPanel(state: ViewContent, panel: HTMLElement): void {
  const html = state.html;
  if (!html) return;
  if (!built) {
    panel.append(el('p', { class: 'note' }, 'The HTML body could not be shown. The Text and Raw tabs still show the message.'));
    return;
  }
  const blocked = built.blockedRemote;
  if (blocked > 0 && !html.remoteAllowed) {
    const banner = el('div', { class: 'banner', role: 'note' });
    banner.append(icon('shield'), el('span', {}, `${blocked} remote image${blocked === 1 ? '' : 's'} blocked to protect your privacy.`));
    banner.append(button('Load remote images', 'cloud-download', () => post({ type: 'allowRemoteImages' })));
    panel.append(banner);
  }
  if (html.truncated) panel.append(el('p', { class: 'note' }, 'This HTML body is very large; only its beginning is shown.'));
  const frame = document.createElement('iframe');
  // Sandbox first, with no permission at all: no scripts, no same origin, no forms, no popups.
  frame.setAttribute('sandbox', '');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.setAttribute('title', 'HTML body of the message');
  frame.className = built.themed ? 'html-frame themed' : 'html-frame';
  frame.srcdoc = built.srcdoc;
  panel.append(frame);
  if (state.links.length > 0) panel.append(el('p', { class: 'note' }, 'Links in this view do not open. Use the Links tab to open them.'));
}

function renderTextPanel(text: string, truncated: boolean, code: string | undefined, panel: HTMLElement, label: string): void {
  if (truncated) panel.append(el('p', { class: 'note' }, `This ${label} is very large; only its beginning is shown.`));
  const pre = el('pre', { class: 'text-body' });
  appendHighlighted(pre, text, code);
  panel.append(pre);
}

function renderHeadersPanel(state: ViewContent, panel: HTMLElement): void {
  if (state.headers.length === 0) {
    panel.append(el('p', { class: 'empty' }, 'No headers.'));
    return;
  }
  const table = el('table', { class: 'headers-table' });
  table.append(el('caption', { class: 'visually-hidden' }, 'Message headers'));
  const body = el('tbody');
  for (const [name, value] of state.headers) {
    const tr = el('tr');
    tr.append(el('th', { scope: 'row' }, name), el('td', {}, value));
    body.append(tr);
  }
  table.append(body);
  panel.append(table);
}

function renderLinksPanel(state: ViewContent, panel: HTMLElement): void {
  if (state.links.length === 0) {
    panel.append(el('p', { class: 'empty' }, 'No links in this message.'));
    return;
  }
  panel.append(el('p', { class: 'note' }, 'Links open in your browser after you confirm the full address.'));
  const list = el('ul', { class: 'item-list' });
  const marked = state.verification;
  for (const { url, text } of state.links) {
    const isMarked = marked?.url === url;
    const li = el('li', isMarked ? { class: 'link-verification' } : {});
    const label = el('div', { class: 'url' });
    // Marked in words, not colour alone: the badge is read before the link.
    if (isMarked) label.append(el('div', { class: 'link-badge' }, marked.label));
    if (text && text !== url) label.append(el('div', { class: 'link-text' }, text));
    label.append(el('div', { class: 'link-url' }, url));
    li.append(label);
    const what = isMarked ? marked.label.toLowerCase() : 'link';
    const name = text && text !== url ? `Open ${what} '${text}' (${url})` : `Open ${what} ${url}`;
    li.append(button('Open…', 'link-external', () => post({ type: 'openLink', url }), { 'aria-label': name }));
    list.append(li);
  }
  panel.append(list);
}

function renderAttachmentsPanel(state: ViewContent, panel: HTMLElement): void {
  if (state.attachments.length === 0) {
    panel.append(el('p', { class: 'empty' }, 'No attachments.'));
    return;
  }
  const list = el('ul', { class: 'item-list' });
  for (const a of state.attachments) {
    const li = el('li');
    li.append(icon('file'));
    li.append(el('span', { class: 'filename' }, a.filename));
    li.append(el('span', { class: 'meta' }, `${a.contentType} · ${formatSize(a.size)}`));
    li.append(actionButton('Save…', 'save', { type: 'saveAttachment', index: a.index }, { 'aria-label': `Save attachment ${a.filename}` }));
    list.append(li);
  }
  panel.append(list);
}

function renderConversationPanel(state: ViewContent, panel: HTMLElement): void {
  const sms = state.sms;
  if (!sms) return;
  // A group, not a log: a log is a live region and would read the message again on each render.
  const thread = el('div', { class: 'conversation', role: 'group', 'aria-label': `SMS conversation with ${sms.from}` });
  const bubble = el('article', { class: 'bubble', 'aria-label': `SMS from ${sms.from} at ${formatTime(sms.time)}` });
  const meta = el('div', { class: 'bubble-meta' });
  meta.append(el('span', { class: 'sender' }, sms.from), el('time', { datetime: new Date(sms.time).toISOString() }, formatTime(sms.time)));
  const body = el('p', { class: 'bubble-body' });
  appendHighlighted(body, sms.body, state.code?.code);
  const segments = el('p', { class: 'bubble-segments' }, `${sms.segments} ${sms.segments === 1 ? 'segment' : 'segments'} · ${sms.encoding}`);
  bubble.append(meta, body, segments);
  thread.append(bubble);
  panel.append(thread);
}

function fillPanel(state: ViewContent, tab: TabId, panel: HTMLElement): void {
  const code = state.code?.code;
  switch (tab) {
    case 'conversation':
      return renderConversationPanel(state, panel);
    case 'html':
      return renderHtmlPanel(state, panel);
    case 'text':
      return state.text ? renderTextPanel(state.text.text, state.text.truncated, code, panel, 'text') : undefined;
    case 'headers':
      return renderHeadersPanel(state, panel);
    case 'links':
      return renderLinksPanel(state, panel);
    case 'attachments':
      return renderAttachmentsPanel(state, panel);
    case 'raw':
      return state.raw ? renderTextPanel(state.raw.text, state.raw.truncated, undefined, panel, 'source') : undefined;
  }
}

function tabLabel(state: ViewContent, tab: TabId): string {
  if (tab === 'links' && state.links.length > 0) return `${TAB_LABELS.links} (${state.links.length})`;
  if (tab === 'attachments' && state.attachments.length > 0) return `${TAB_LABELS.attachments} (${state.attachments.length})`;
  return TAB_LABELS[tab];
}

/** Builds an ARIA tablist: arrow keys, Home and End move between tabs and select them. */
function renderTabs(state: ViewContent, container: HTMLElement): void {
  const list = el('div', { role: 'tablist', 'aria-label': 'Message parts', class: 'tablist' });
  const panels = el('div', { class: 'panels' });
  const tabs: HTMLButtonElement[] = [];
  const panelEls: HTMLElement[] = [];
  const initial = savedTab(state.id);
  let selected = initial && state.tabs.includes(initial) ? state.tabs.indexOf(initial) : 0;

  const select = (index: number, focus: boolean): void => {
    selected = index;
    tabs.forEach((t, i) => {
      const on = i === index;
      t.setAttribute('aria-selected', on ? 'true' : 'false');
      t.tabIndex = on ? 0 : -1;
      panelEls[i].hidden = !on;
    });
    if (focus) tabs[index].focus();
    host?.setState({ id: state.id, tab: state.tabs[index] });
  };

  state.tabs.forEach((tab, i) => {
    const t = el('button', { type: 'button', role: 'tab', id: `tab-${tab}`, 'aria-controls': `panel-${tab}`, class: 'tab' }, tabLabel(state, tab));
    t.addEventListener('click', () => select(i, false));
    t.addEventListener('keydown', (ev) => {
      const n = tabs.length;
      let next: number | undefined;
      if (ev.key === 'ArrowRight') next = (selected + 1) % n;
      else if (ev.key === 'ArrowLeft') next = (selected - 1 + n) % n;
      else if (ev.key === 'Home') next = 0;
      else if (ev.key === 'End') next = n - 1;
      if (next !== undefined) {
        ev.preventDefault();
        select(next, true);
      }
    });
    const panel = el('div', { role: 'tabpanel', id: `panel-${tab}`, 'aria-labelledby': `tab-${tab}`, class: `panel panel-${tab}`, tabindex: '0' });
    fillPanel(state, tab, panel);
    tabs.push(t);
    panelEls.push(panel);
    list.append(t);
    panels.append(panel);
  });
  container.append(list, panels);
  select(selected, false);
}

/** The theme's editor colours, read from the variables VS Code sets on the view's document. */
function frameTheme(): FrameTheme {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string): string => css.getPropertyValue(name).trim();
  const dark = document.body.classList.contains('vscode-dark') || (document.body.classList.contains('vscode-high-contrast') && !document.body.classList.contains('vscode-high-contrast-light'));
  return { background: v('--vscode-editor-background'), foreground: v('--vscode-editor-foreground'), link: v('--vscode-textLink-foreground'), scheme: dark ? 'dark' : 'light' };
}

function sanitize(state: ViewContent): SrcdocResult | undefined {
  if (!state.html) return undefined;
  try {
    return buildSrcdoc(state.html.source, { allowRemoteImages: state.html.remoteAllowed, inlineImages: new Map(state.html.inlineImages) }, state.html.themeColors ? frameTheme() : undefined);
  } catch (e) {
    console.warn(`Test Inbox message view could not sanitize the HTML: ${String(e)}`);
    return undefined;
  }
}

function render(state: ViewContent, received: number): void {
  current = state;
  built = sanitize(state);
  const sanitized = Date.now();
  const r = root();
  r.replaceChildren();
  r.removeAttribute('aria-busy');
  r.append(renderHeader(state));
  const code = renderCode(state);
  if (code) r.append(code);
  const verification = renderVerification(state);
  if (verification) r.append(verification);
  for (const note of state.notes) {
    const n = el('div', { class: 'banner warning', role: 'note' });
    n.append(icon('warning'), el('span', {}, note));
    r.append(n);
  }
  renderTabs(state, r);
  document.title = viewTitle(state);
  showNotice('info', `Loaded: ${viewTitle(state)}${state.verification ? `. It has a ${state.verification.label.toLowerCase()}.` : ''}`);
  const timing: ViewTiming = { script: scriptStartedAt, received, sanitized, built: Date.now() };
  post({ type: 'rendered', id: state.id, tabs: state.tabs, blockedRemote: built?.blockedRemote ?? 0, timing });
}

/** Shows what the host sent: a loading state, a message's view content, an error or a notice. */
export function handleHostMessage(message: HostMessage, received: number): void {
  switch (message.type) {
    case 'loading':
      if (!current || current.id !== message.id) showLoading(message.id);
      return;
    case 'render':
      return render(message.state, received);
    case 'error':
      current = undefined;
      return showError(message.message, message.retryable);
    case 'notice':
      return showNotice(message.level, message.text);
  }
}
