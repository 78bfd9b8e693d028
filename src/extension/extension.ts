// Composition only: build the pieces, wire their events, register commands. Nothing here
// does I/O; the local server starts when the view first asks for its children.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { createClient } from '../api/client';
import { ACTIVATED_LOG_PREFIX } from './activationLog';
import { bestCode } from '../core/otp';
import { registerCommands } from './commands';
import * as openMessage from './commands/openMessage';
import { ContextKey } from './config/contextKeys';
import { TokenStore } from './config/secrets';
import { defaultDomains, readSettings, SETTINGS_SECTION, type Settings } from './config/settings';
import { Connection } from './connection';
import { errorText, Logger } from './log';
import { LiveUpdates, type NewMail } from './live';
import { messageTexts } from './messageText';
import { noticeFor } from './notify';
import type { Services } from './services';
import { createStatusBar } from './statusBar';
import { InboxModel } from './tree/model';
import { InboxTreeProvider } from './tree/provider';
import { AddedInboxes, ReadState } from './tree/state';
import { disposeMessagePanels } from './webview/messagePanel';

/** Relative times in the tree ("5 min ago") are redrawn this often while it is visible. */
const RELATIVE_TIME_REFRESH_MS = 60_000;
/** Settings whose change needs a new local server process. */
const LOCAL_SERVER_KEYS = ['local', 'retention'];

let shutdown: (() => Promise<void>) | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const activationStarted = performance.now();
  const channel = vscode.window.createOutputChannel('Test Inbox', { log: true });
  const log = new Logger(channel);
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0');

  const load = (): Settings => {
    const { settings, problems } = readSettings(vscode.workspace.getConfiguration(SETTINGS_SECTION));
    for (const p of problems) log.warn(`Setting ${p.key}: ${p.message}; using the default.`);
    return settings;
  };
  let current = load();
  const settings = () => current;
  const serverKey = () => (current.server.kind === 'remote' ? current.server.baseUrl : 'local');

  const tokens = new TokenStore(context.secrets);
  const connection = new Connection({
    settings,
    tokens,
    log,
    createApi: (o) => createClient({ ...o, userAgent: `test-inbox-vscode/${version}`, log: (level, msg) => log[level](msg) }),
    cliPath: context.asAbsolutePath(path.join('dist', 'cli.js')),
    defaultDataDir: path.join(context.globalStorageUri.fsPath, 'server'),
  });

  let readState = new ReadState(context.globalState, serverKey(), Date.now());
  const added = () => new AddedInboxes(context.globalState, serverKey());
  const model = new InboxModel({
    api: () => connection.ensure(),
    domains: async (api) => {
      const s = settings();
      const fromServer = s.server.kind === 'local' && s.domains.length === 0 ? (await api.listDomains()).domains.map((d) => d.name) : undefined;
      const shown = defaultDomains(s, fromServer);
      // An inbox added under another domain brings its domain along (unless the user listed domains).
      if (s.domains.length === 0) for (const r of added().list()) if (!shown.includes(r.domain)) shown.push(r.domain);
      return shown;
    },
    added,
    readState: () => readState,
    smtp: () => (connection.state.kind === 'ready' ? connection.state.server.smtp : undefined),
  });

  const onNewMail = (mail: NewMail) => void notifyNewMail(mail);
  const live = new LiveUpdates({ model, api: () => connection.current(), pollSeconds: () => settings().pollSeconds, log, onNewMail });
  const provider = new InboxTreeProvider({ model, connection, log, onRootsLoaded: () => live.sync() });
  const view = vscode.window.createTreeView('testInbox.inboxes', { treeDataProvider: provider, showCollapseAll: true });

  const updateBadge = () => {
    const n = model.unreadCount();
    view.badge = n > 0 ? { value: n, tooltip: `${n} unread message${n === 1 ? '' : 's'}` } : undefined;
  };

  const services: Services = {
    context,
    channel,
    log,
    settings,
    tokens,
    connection,
    model,
    live,
    added,
    readState: () => readState,
    view,
  };

  async function notifyNewMail(mail: NewMail): Promise<void> {
    if (!settings().notifyNewMail) return;
    const list = added();
    const notice = noticeFor(mail, (ref) => list.has(ref));
    if (!notice) return;
    let code: string | undefined;
    try {
      const api = connection.current();
      if (api) code = bestCode(messageTexts(await api.getMessage(notice.domain, notice.inbox, notice.summary.id)));
    } catch (e) {
      log.debug(`Could not read ${notice.summary.id} for the notification: ${errorText(e)}`);
    }
    const choice = await vscode.window.showInformationMessage(notice.text, 'Open', ...(code ? ['Copy Code'] : []));
    if (choice === 'Open') await vscode.commands.executeCommand(openMessage.id, { domain: notice.domain, inbox: notice.inbox, id: notice.summary.id });
    else if (choice === 'Copy Code' && code) await vscode.env.clipboard.writeText(code);
  }

  let timeTimer: ReturnType<typeof setInterval> | undefined;
  const onVisible = (visible: boolean) => {
    live.setVisible(visible);
    if (visible && !timeTimer) timeTimer = setInterval(() => model.refreshView(), RELATIVE_TIME_REFRESH_MS);
    else if (!visible && timeTimer) {
      clearInterval(timeTimer);
      timeTimer = undefined;
    }
  };

  const setServerKind = () => void vscode.commands.executeCommand('setContext', ContextKey.serverKind, current.server.kind);
  setServerKind();

  context.subscriptions.push(
    channel,
    provider,
    view,
    view.onDidChangeVisibility((e) => onVisible(e.visible)),
    { dispose: model.onDidChange(updateBadge).dispose },
    { dispose: model.onDidChange(() => live.sync()).dispose },
    {
      dispose: connection.onDidChangeState((st) => {
        if (st.kind === 'starting') return;
        live.sync();
        model.refreshView();
      }).dispose,
    },
    tokens.onDidChange((change) => {
      if (change.baseUrl !== connection.tokenKey() || change.kind !== 'api') return;
      // Another window (or a command here) changed the API token: reconnect with it.
      void connection.reset().then(() => model.invalidate());
    }) as vscode.Disposable,
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SETTINGS_SECTION)) return;
      const before = current;
      current = load();
      setServerKind();
      const serverChanged = JSON.stringify(before.server) !== JSON.stringify(current.server);
      const localChanged = LOCAL_SERVER_KEYS.some((k) => e.affectsConfiguration(`${SETTINGS_SECTION}.${k}`));
      if (serverChanged) readState = new ReadState(context.globalState, serverKey(), Date.now());
      if (e.affectsConfiguration(`${SETTINGS_SECTION}.pollIntervalSeconds`)) live.restartTimer();
      if (serverChanged || localChanged) {
        void connection.reset(true).then(() => model.invalidate());
      } else if (e.affectsConfiguration(`${SETTINGS_SECTION}.domains`)) {
        model.invalidate();
      }
    }),
    createStatusBar(connection),
    ...registerCommands(services, provider),
    { dispose: () => live.dispose() },
    { dispose: () => clearInterval(timeTimer) },
    { dispose: disposeMessagePanels },
    { dispose: () => model.dispose() },
  );
  onVisible(view.visible);

  shutdown = async () => {
    live.dispose();
    await connection.dispose();
  };
  // `npm run bench` reads this line (bench/install.ts).
  log.info(`${ACTIVATED_LOG_PREFIX}${(performance.now() - activationStarted).toFixed(1)} ms.`);
}

export async function deactivate(): Promise<void> {
  const s = shutdown;
  shutdown = undefined;
  await s?.();
}
