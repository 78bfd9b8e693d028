// Composition only: build the pieces, wire their events, register commands. Nothing here
// does I/O; the local server starts when the view first asks for its children.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { createClient } from '../api/client';
import { resolveDefaultDataDir } from '../shared/contract';
import { ACTIVATED_LOG_PREFIX } from './activationLog';
import { registerCommands } from './commands';
import { useRemoteName } from './tree/actions';
import { TokenStore } from './config/secrets';
import { LOCAL_SERVER, serverKey, type Settings, shownDomains } from './config/settings';
import { ConfirmedServers } from './config/serverTrust';
import { SettingsWatcher } from './config/watch';
import { Connection } from './connection/connection';
import { LiveUpdates } from './tree/live';
import { Logger } from './log';
import { notifyNewMail } from './ui/notify';
import type { Services } from './services';
import { createFaultRulesMark, createStatusBar } from './ui/statusBar';
import { FaultRulesWatch } from './chaos/watch';
import { InboxModel } from './tree/model';
import { readMarksFile, SharedMemento } from './tree/sharedMemento';
import { AddedInboxes, ReadState } from './tree/state';
import { InboxView } from './tree/view';
import { registerTools } from './tools';
import { withEditorUi } from './ui/notifications';
import { disposeMessagePanels } from './messagePanel/messagePanel';

let shutdown: (() => Promise<void>) | undefined;

/**
 * The read state of the configured server (the local server's mail all starts unread,
 * tree/state.ts). Its marks live in a file every window reads (tree/sharedMemento.ts), placed
 * once connected and again on each connection change; `reset()` after a server switch.
 */
function readMarks(context: vscode.ExtensionContext, connection: Connection, settings: () => Settings, log: Logger) {
  let store: SharedMemento;
  let state: ReadState;
  const place = (): void => {
    const st = connection.state;
    if (st.kind === 'ready') store.use(readMarksFile(st.server, serverKey(settings()), context.globalStorageUri.fsPath));
  };
  const reset = (): void => {
    const key = serverKey(settings());
    const keys = ReadState.keys(key);
    store = new SharedMemento(context.globalState, [keys.read, keys.baseline], log);
    place();
    state = new ReadState(store, key, Date.now(), { allUnread: key === LOCAL_SERVER });
  };
  reset();
  return { current: () => state, reset, place };
}

/** Reconnects or reloads when another window changes the API token or the user changes a setting. */
function followChanges(o: { tokens: TokenStore; config: SettingsWatcher; connection: Connection; model: InboxModel; live: LiveUpdates; resetReadState: () => void }): vscode.Disposable[] {
  const { tokens, config, connection, model, live } = o;
  return [
    tokens.onDidChange((c) => {
      if (c.kind === 'api' && !connection.isLocal && c.baseUrl === connection.tokenKey()) void connection.reset().then(() => model.invalidate());
    }),
    config.onDidChange((fx) => {
      if (fx.resetReadState) o.resetReadState();
      if (fx.restartPollTimer) live.restartTimer();
      if (fx.reconnect) void connection.reset(true).then(() => model.invalidate());
      else if (fx.reloadTree) model.invalidate();
    }),
  ];
}

export function activate(context: vscode.ExtensionContext): void {
  const activationStarted = performance.now();
  // Actions that open a setting land on the Remote tab in a remote window.
  useRemoteName(vscode.env.remoteName);
  const channel = vscode.window.createOutputChannel('Test Inbox', { log: true });
  const log = new Logger(channel);
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '0');
  const config = new SettingsWatcher(log);
  const settings = () => config.current;
  const tokens = new TokenStore(context.secrets);
  const connection = new Connection({
    settings,
    tokens,
    log,
    trust: new ConfirmedServers(context.globalState),
    createApi: (o) => createClient({ ...o, userAgent: `test-inbox-vscode/${version}`, log: (level, msg) => log[level](msg) }),
    cliPath: context.asAbsolutePath(path.join('dist', 'cli.js')),
    // One local inbox per user: the data folder `test-inbox serve` uses by default too
    // (resolved when the local server is first needed: it looks at the folders).
    defaultDataDir: () => resolveDefaultDataDir(process.env),
    legacyDataDir: path.join(context.globalStorageUri.fsPath, 'server'),
  });
  const marks = readMarks(context, connection, settings, log);
  const added = () => new AddedInboxes(context.globalState, serverKey(settings()));
  const model = new InboxModel({
    api: () => connection.ensure(),
    domains: async (api) => shownDomains(settings(), connection.serverDomains(api), () => added().list()),
    added,
    readState: marks.current,
    smtp: () => (connection.state.kind === 'ready' ? connection.state.server.smtp : undefined),
  });
  const notify = withEditorUi({ enabled: () => settings().notifyNewMail, isWatched: (ref) => added().has(ref), api: () => connection.current(), log });
  const live = new LiveUpdates({ model, api: () => connection.current(), pollSeconds: () => settings().pollSeconds, log, onNewMail: (mail) => void notifyNewMail(notify, mail) });
  const tree = new InboxView({ model, connection, live, log });
  const services: Services = { context, channel, log, settings, tokens, connection, model, live, faults: new FaultRulesWatch(connection, log), added, readState: marks.current, tree };

  context.subscriptions.push(
    channel,
    config,
    tree,
    ...followChanges({ tokens, config, connection, model, live, resetReadState: marks.reset }),
    connection.onDidChangeState(() => {
      marks.place();
      model.syncReadState();
    }),
    createStatusBar(connection),
    createFaultRulesMark(services.faults, connection),
    ...registerCommands(services, tree.provider),
    ...registerTools(services),
    { dispose: () => live.dispose() },
    { dispose: disposeMessagePanels },
    { dispose: () => model.dispose() },
  );
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
