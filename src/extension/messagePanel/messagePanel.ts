// Host side of the message view: the panels. One webview panel per message, reused when the
// same message is opened again. Like VS Code's preview editors, opening another message replaces
// the content of the panel the user has not kept (webview panels have no preview mode of
// their own, so registry.ts tracks it); Keep Open and Open in New Panel give a kept panel.
// A panel loads its message (load.ts: the message, its extras, inline images as data: URLs),
// posts a validated ViewContent after the view's `ready` (the view sanitizes the email HTML
// with DOMPurify and shows it in a sandboxed frame under the CSP of html.ts), and carries out
// what the view asks (copy, open link after confirmation, save attachment, load remote images),
// checking every request against what it showed.
import * as vscode from 'vscode';
import type { InboxApi } from '../../api/types';
import { cleanFileName } from '../../core/fileNames';
import { inert, plainText, type Plain } from '../../core/inert';
import { safeLinkTarget } from '../../core/urls';
import { readSettings, SETTINGS_SECTION, SettingKey } from '../config/settings';
import type { Logger } from '../log';
import { parseWebviewMessage, viewTitle, type HostMessage, type TabId, type ViewContent, type ViewTiming, type WebviewMessage } from '../../shared/viewProtocol';
import { showModalWarning } from '../ui/shown';
import type { MessageRef } from '../inboxRef';
import { buildViewContent } from '../../webview-ui/viewContent';
import { viewHtml } from './html';
import { describeLoadError, isCancelled, type LoadedMessage, loadMessage } from './load';
import { PanelRegistry } from './registry';

const VIEW_TYPE = 'testInbox.message';
/** A link shown whole in the confirmation before it opens (up to this many characters). */
const MAX_LINK_SHOWN = 8000;

export interface MessagePanelDeps {
  context: Pick<vscode.ExtensionContext, 'extensionUri'>;
  api: InboxApi;
  /** The extension's redacting log (tokens never reach the output channel). */
  log: Logger;
  /** The `testInbox.remoteImages` setting when the panel opened; later changes arrive through the settings listener below. */
  allowRemoteImages: boolean;
  /** The `testInbox.themeSimpleMail` setting; later changes arrive through the settings listener below. */
  themeSimpleMail?: boolean;
  /** Told the code of each message it shows (the tree marks the row and offers Copy One-Time Code). */
  onCode?: (id: string, code: string | undefined) => void;
  /** When the open was asked for (the command's start; Date.now()), for the open timing. */
  requestedAt?: number;
}

/**
 * When each step of showing a message happened (Date.now(); the host and the view share the
 * clock): asked for, panel created, its document set, message fetched (with its extras), the
 * view's script ready, the state posted, then the view's own steps. For the debug state and the
 * message-open bench; absent steps did not happen in this open (a reused view has no new document).
 */
export interface OpenTiming extends Partial<ViewTiming> {
  requested: number;
  panel?: number;
  html?: number;
  fetchStart?: number;
  fetched?: number;
  ready?: number;
  posted?: number;
}

/** What the view last confirmed it rendered (test hook). */
interface RenderedMessage {
  id: string;
  kind: 'email' | 'sms';
  tabs: TabId[];
  code?: string;
  /** The link marked as the verification (sign-in, reset) link. */
  verificationLink?: string;
  linkCount: number;
  attachmentCount: number;
  remoteImagesAllowed: boolean;
  blockedRemoteImages: number;
  /** The steps of the open that showed it. */
  timing?: OpenTiming;
}

const panels = new PanelRegistry<MessagePanel>();
/** Context key: the active message panel is kept (the Keep Open title action hides). */
const KEPT_CONTEXT_KEY = 'testInbox.messagePanelKept';
/** Messages (panel keys: server, domain, id) for which the user chose "Load remote images" in this session. */
const remoteAllowedKeys = new Set<string>();
let lastRendered: RenderedMessage | undefined;

/** For tests: the message the view last confirmed rendering (after its `rendered` reply). */
export function lastRenderedMessage(): RenderedMessage | undefined {
  return lastRendered;
}

/**
 * The open message commands run from the palette act on: the message panel that is active
 * (the focused editor), else the one message panel on screen; undefined when none (or several
 * and none active).
 */
export function activeMessageRef(): MessageRef | undefined {
  return panels.activeRef();
}

/** For tests and the host: the open panel of a message, if any. */
export function openMessagePanels(): number {
  return panels.size;
}

/** For tests and the debug state: each open panel's message and whether it is kept, in opening order. */
export function messagePanelsInfo(): Array<{ id: string; kept: boolean }> {
  return panels.info();
}

/** Keeps the active message panel (its title's Keep Open action): the next message opens in a new panel. False when no message panel is active. */
export function keepActiveMessagePanel(): boolean {
  return panels.keepActive();
}

/** For tests: what the panel of a message last posted to its view (`loading`, `render`, `error`), if it is open. */
export function panelPhase(messageId: string): HostMessage['type'] | undefined {
  return panels.ofMessage(messageId)?.phase();
}

/** For tests: sends a request to a panel as if its view had posted it (after validation, like a real one). */
export async function simulateViewRequest(messageId: string, data: unknown): Promise<void> {
  const p = panels.ofMessage(messageId);
  if (!p) throw new Error(`No message panel is open for ${messageId}.`);
  await p.onMessage(data);
}

function panelKey(api: InboxApi, ref: MessageRef): string {
  return `${api.baseUrl}\n${ref.domain}\n${ref.id}`;
}

/**
 * Opens the message in its panel (or reveals it) and loads it. Resolves once loading has
 * started. Without `keep`, a panel the user has not kept shows it instead of what it showed;
 * with `keep`, the message gets (or its panel becomes) a kept panel.
 */
export async function showMessage(deps: MessagePanelDeps, ref: MessageRef, opts: { keep?: boolean } = {}): Promise<void> {
  const requested = deps.requestedAt ?? Date.now();
  const key = panelKey(deps.api, ref);
  const existing = panels.get(key);
  if (existing) {
    existing.updateDeps(deps);
    if (opts.keep) existing.keep();
    existing.panel.reveal(undefined, false);
    // Opening a message whose panel shows an error is a retry.
    if (existing.phase() === 'error') await existing.reload(requested);
    return;
  }
  if (!opts.keep && panels.preview) {
    const reused = panels.preview;
    panels.delete(reused.key);
    panels.set(key, reused);
    reused.panel.reveal(undefined, false);
    await reused.show(deps, ref, key, requested);
    return;
  }
  const panel = new MessagePanel(deps, ref, key, opts.keep === true, requested);
  panels.set(key, panel);
  if (!panel.kept) panels.preview = panel;
  watchSettings();
  await panel.start();
}

/** Applies a new `testInbox.remoteImages` setting to the open panels (they re-render when it changes). */
function updateRemoteImagesSetting(allowRemoteImages: boolean): void {
  for (const p of panels.values()) p.updateDeps({ ...p.currentDeps(), allowRemoteImages });
}

/** Applies a new `testInbox.themeSimpleMail` setting to the open panels (they re-render when it changes). */
function updateThemeSimpleMailSetting(themeSimpleMail: boolean): void {
  for (const p of panels.values()) p.updateDeps({ ...p.currentDeps(), themeSimpleMail });
}

/**
 * Listens for `testInbox.remoteImages` and `testInbox.themeSimpleMail` changes while any message panel is open: registered
 * with the first panel, disposed with the last, so the module needs no wiring from activate().
 */
let settingsListener: vscode.Disposable | undefined;

function watchSettings(): void {
  settingsListener ??= vscode.workspace.onDidChangeConfiguration((e) => {
    const remote = e.affectsConfiguration(`${SETTINGS_SECTION}.${SettingKey.remoteImages}`);
    const theme = e.affectsConfiguration(`${SETTINGS_SECTION}.${SettingKey.themeSimpleMail}`);
    if (!remote && !theme) return;
    const settings = readSettings(vscode.workspace.getConfiguration(SETTINGS_SECTION)).settings;
    if (remote) updateRemoteImagesSetting(settings.remoteImages);
    if (theme) updateThemeSimpleMailSetting(settings.themeSimpleMail);
  });
}

function unwatchSettingsIfIdle(): void {
  if (panels.size > 0 || !settingsListener) return;
  settingsListener.dispose();
  settingsListener = undefined;
}

/** For tests: whether the settings listener is registered (it is exactly while a panel is open). */
export function watchingSettings(): boolean {
  return settingsListener !== undefined;
}

/** Closes every message panel (extension deactivation, tests). */
export function disposeMessagePanels(): void {
  panels.disposeAll();
}

class MessagePanel {
  readonly panel: vscode.WebviewPanel;
  private deps: MessagePanelDeps;
  private ready = false;
  private lastPosted: HostMessage | undefined;
  private state: ViewContent | undefined;
  private loaded: LoadedMessage | undefined;
  private abort: AbortController | undefined;
  private disposed = false;
  private htmlRemote: boolean | undefined;
  private timing: OpenTiming;

  constructor(
    deps: MessagePanelDeps,
    public ref: MessageRef,
    public key: string,
    public kept = false,
    requested = Date.now(),
  ) {
    this.deps = deps;
    this.timing = { requested };
    const root = deps.context.extensionUri;
    this.panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      ref.id,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      {
        enableScripts: true,
        enableCommandUris: false,
        enableFindWidget: true,
        localResourceRoots: [vscode.Uri.joinPath(root, 'dist'), vscode.Uri.joinPath(root, 'media')],
      },
    );
    this.timing.panel = Date.now();
    this.panel.onDidDispose(() => this.dispose());
    this.panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.active) this.publishKept();
    });
    this.publishKept();
    this.panel.webview.onDidReceiveMessage((data: unknown) => void this.onMessage(data));
  }

  /** The user keeps this panel: the next opened message gets a panel of its own. */
  keep(): void {
    this.kept = true;
    if (panels.preview === this) panels.preview = undefined;
    this.publishKept();
  }

  /** Tells the title bar whether this (active) panel is kept. */
  private publishKept(): void {
    if (this.panel.active) void vscode.commands.executeCommand('setContext', KEPT_CONTEXT_KEY, this.kept);
  }

  /** Shows another message in this (unkept) panel, as a preview editor does. */
  async show(deps: MessagePanelDeps, ref: MessageRef, key: string, requested = Date.now()): Promise<void> {
    this.abort?.abort();
    this.timing = { requested };
    this.deps = deps;
    this.ref = ref;
    this.key = key;
    this.loaded = undefined;
    this.state = undefined;
    this.panel.title = ref.id;
    this.setHtml();
    await this.load();
  }

  currentDeps(): MessagePanelDeps {
    return this.deps;
  }

  phase(): HostMessage['type'] | undefined {
    return this.lastPosted?.type;
  }

  updateDeps(deps: MessagePanelDeps): void {
    const settingChanged = deps.allowRemoteImages !== this.deps.allowRemoteImages || Boolean(deps.themeSimpleMail) !== Boolean(this.deps.themeSimpleMail);
    this.deps = deps;
    if (settingChanged && this.loaded) this.rerender();
  }

  reload(requested = Date.now()): Promise<void> {
    this.timing = { requested };
    return this.load();
  }

  async start(): Promise<void> {
    this.setHtml();
    await this.load();
  }

  private remoteAllowed(): boolean {
    return this.deps.allowRemoteImages || remoteAllowedKeys.has(this.key);
  }

  /** (Re)writes the view's document; its CSP allows remote images only when this message may load them. */
  private setHtml(): void {
    const remote = this.remoteAllowed();
    if (this.htmlRemote === remote) return;
    this.htmlRemote = remote;
    this.ready = false;
    this.panel.webview.html = viewHtml(this.panel.webview, this.deps.context.extensionUri, remote);
    this.timing.html = Date.now();
  }

  private post(message: HostMessage): void {
    this.lastPosted = message;
    if (this.ready && !this.disposed) this.send(message);
  }

  private send(message: HostMessage): void {
    if (message.type === 'render') this.timing.posted = Date.now();
    void this.panel.webview.postMessage(message);
  }

  private notice(level: 'info' | 'error', text: string): void {
    if (this.ready && !this.disposed) void this.panel.webview.postMessage({ type: 'notice', level, text } satisfies HostMessage);
  }

  private async load(): Promise<void> {
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    const { api, log } = this.deps;
    const { id } = this.ref;
    this.post({ type: 'loading', id });
    this.timing.fetchStart = Date.now();
    try {
      const loaded = await loadMessage(api, this.ref, log, abort.signal);
      if (abort.signal.aborted || this.disposed) return;
      this.timing.fetched = Date.now();
      this.loaded = loaded;
      this.rerender();
    } catch (e) {
      if (this.disposed || abort.signal.aborted) return;
      if (isCancelled(e)) return;
      log.error(`message view: ${id} could not be loaded: ${(e as Error).message ?? String(e)}`);
      const d = describeLoadError(e);
      this.state = undefined;
      this.post({ type: 'error', id, message: d.message, retryable: d.retryable });
    }
  }

  /** Builds the view content from what was loaded and posts it (again after "Load remote images"). */
  private rerender(): void {
    if (!this.loaded) return;
    this.setHtml();
    const { message, attachments, raw, notes, inline } = this.loaded;
    this.state = buildViewContent({ domain: this.ref.domain, message, attachments, raw, notes, allowRemoteImages: this.remoteAllowed(), themeSimpleMail: this.deps.themeSimpleMail === true, inlineImages: inline });
    // The tab's title is the editor's chrome: plain text, no bidi override, cut.
    this.panel.title = plainText(this.state.kind === 'sms' || message.subject ? viewTitle(this.state) : this.ref.id);
    this.post({ type: 'render', state: this.state });
    this.deps.onCode?.(this.ref.id, this.state.code?.code);
  }

  async onMessage(data: unknown): Promise<void> {
    const parsed = parseWebviewMessage(data);
    if (!parsed.ok) {
      this.deps.log.warn(`message view: ignored a malformed request from the view: ${parsed.error}`);
      return;
    }
    try {
      await this.handle(parsed.value);
    } catch (e) {
      if (isCancelled(e)) return;
      this.deps.log.error(`message view: ${parsed.value.type} failed: ${(e as Error).message}`);
      this.notice('error', (e as Error).message);
    }
  }

  private async handle(m: WebviewMessage): Promise<void> {
    const state = this.state;
    switch (m.type) {
      case 'ready':
        this.ready = true;
        this.timing.ready = Date.now();
        if (this.lastPosted) this.send(this.lastPosted);
        return;
      case 'rendered':
        if (state && m.id === state.id) {
          lastRendered = {
            id: state.id,
            kind: state.kind,
            tabs: m.tabs,
            ...(state.code ? { code: state.code.code } : {}),
            ...(state.verification ? { verificationLink: state.verification.url } : {}),
            linkCount: state.links.length,
            attachmentCount: state.attachments.length,
            remoteImagesAllowed: state.html?.remoteAllowed ?? this.remoteAllowed(),
            blockedRemoteImages: m.blockedRemote,
            timing: { ...this.timing, ...m.timing },
          };
        }
        return;
      case 'retry':
        await this.load();
        return;
      case 'copyCode':
        if (!state?.code) return;
        await vscode.env.clipboard.writeText(state.code.code);
        this.notice('info', `Copied code ${state.code.code}`);
        return;
      case 'copyVerificationLink':
        if (!state?.verification) return;
        await vscode.env.clipboard.writeText(state.verification.url);
        this.notice('info', `Copied the ${state.verification.label.toLowerCase()}`);
        return;
      case 'copyId':
        await vscode.env.clipboard.writeText(this.ref.id);
        this.notice('info', 'Copied message ID');
        return;
      case 'openLink':
        await this.openLink(m.url);
        return;
      case 'saveAttachment':
        await this.saveAttachment(m.index);
        return;
      case 'allowRemoteImages':
        remoteAllowedKeys.add(this.key);
        this.rerender();
        return;
    }
  }

  private async openLink(url: string): Promise<void> {
    // Only a link the view was given, and only a safe scheme: the view is not trusted to choose.
    const known = this.state?.links.some((l) => l.url === url) ?? false;
    const safe = safeLinkTarget(url);
    if (!known || safe === undefined) {
      this.deps.log.warn('message view: refused to open a link that is not one of the message links');
      return;
    }
    // The whole URL, bidi controls removed (one could make it read as another address): the user decides on it.
    const detail = `${plainText(safe, MAX_LINK_SHOWN)}\n\nMessages in test inboxes can contain links to anything. Open it only if you expected it.` as Plain;
    const choice = await showModalWarning(inert`Open this link from the message?`, detail, 'Open Link');
    if (choice !== 'Open Link') return;
    vscode.Uri.parse(safe, true); // throws on a URL VS Code cannot represent
    // The exact string, not a Uri: Uri#toString() re-encodes the query (`=` → `%3D`), which breaks
    // verification links; the extension host's openExternal keeps a string as written (vscode#85930).
    const opened = await vscode.env.openExternal(safe as unknown as vscode.Uri);
    if (!opened) this.notice('error', 'The link could not be opened.');
  }

  private async saveAttachment(index: number): Promise<void> {
    const a = this.state?.attachments.find((x) => x.index === index);
    if (!a) {
      this.deps.log.warn(`message view: refused to save attachment ${index}: not one of the message attachments`);
      return;
    }
    const name = cleanFileName(a.filename, `attachment-${a.index}`);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      title: `Save Attachment ${name}`,
      saveLabel: 'Save Attachment',
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}),
    });
    if (!target) return;
    const abort = new AbortController();
    const file = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: inert`Downloading ${name}…`, cancellable: true },
      (_progress, token) => {
        token.onCancellationRequested(() => abort.abort());
        return this.deps.api.downloadAttachment(this.ref.domain, this.ref.inbox, this.ref.id, a.index, { signal: abort.signal });
      },
    );
    await vscode.workspace.fs.writeFile(target, file.bytes);
    this.deps.log.info(`message view: saved attachment ${a.index} of ${this.ref.id} (${file.bytes.byteLength} bytes)`);
    this.notice('info', `Saved ${name}`);
  }

  private dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.abort?.abort();
    if (panels.get(this.key) === this) panels.delete(this.key);
    if (panels.preview === this) panels.preview = undefined;
    unwatchSettingsIfIdle();
  }
}
