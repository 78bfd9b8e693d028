// The status bar item: which server, its state, and a click for the quick menu.
import * as vscode from 'vscode';
import type { Connection, ConnectionState } from './connection';
import { COMMANDS } from './commandIds';
import { describeError } from './errors';
import { inert, inertMessage } from '../core/inert';

/** What the item shows now, for the debug state (tests): text, tooltip and background colour id. */
let shown: { text: string; tooltip: string; background?: string } | undefined;

export function statusBarShown(): typeof shown {
  return shown;
}

export function createStatusBar(connection: Connection): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('testInbox.status', vscode.StatusBarAlignment.Left, 10);
  item.name = 'Test Inbox';
  item.command = COMMANDS.showMenu.id;
  const update = (st: ConnectionState) => {
    item.backgroundColor = undefined;
    switch (st.kind) {
      case 'idle':
        item.text = connection.isLocal ? '$(inbox) Test Inbox: local' : inert`$(cloud) Test Inbox: ${connection.describe().replace(/^https?:\/\//, '')}`;
        item.tooltip = 'Test Inbox: not connected yet. Click for the menu.';
        break;
      case 'starting':
        item.text = '$(loading~spin) Test Inbox';
        item.tooltip = `Connecting to ${connection.describe()}…`;
        break;
      case 'ready':
        if (st.server.local) {
          item.text = `$(inbox) Test Inbox: SMTP ${st.server.smtp?.port ?? '?'}`;
          item.tooltip = `Local server ${st.server.baseUrl}${st.server.mode === 'attached' ? ' (started elsewhere: another window, a terminal or npm start; Stop only disconnects)' : ''}\nSMTP ${st.server.smtp?.host}:${st.server.smtp?.port}\nClick for the menu.`;
        } else if (st.server.testInbox) {
          item.text = inert`$(server) Test Inbox: ${st.server.baseUrl.replace(/^https?:\/\//, '')}`;
          item.tooltip = `Test Inbox server ${st.server.baseUrl} (it proved it takes your API token): live updates and its own domains.\nClick for the menu.`;
        } else {
          item.text = inert`$(cloud) Test Inbox: ${st.server.baseUrl.replace(/^https?:\/\//, '')}`;
          item.tooltip = `Hosted server ${st.server.baseUrl}\nClick for the menu.`;
        }
        break;
      case 'noToken':
        item.text = '$(key) Test Inbox: no token';
        item.tooltip = `No API token for ${st.baseUrl}. Click for the menu.`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      case 'stopped':
        item.text = '$(debug-stop) Test Inbox: stopped';
        item.tooltip = 'The local server is stopped. Click for the menu.';
        break;
      case 'detached':
        item.text = '$(debug-disconnect) Test Inbox: detached';
        item.tooltip = inert`Detached from the local server at ${st.baseUrl}. It belongs to process ${String(st.pid ?? '?')} (another window or a terminal) and keeps running. Click for the menu.`;
        break;
      case 'unreachable':
        item.text = '$(warning) Test Inbox: unreachable';
        item.tooltip = inert`The server at ${st.baseUrl} cannot be reached: ${st.reason}\nTest Inbox checks again by itself. Click for the menu.`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      case 'failed':
        item.text = '$(warning) Test Inbox';
        item.tooltip = inertMessage`${describeError(st.error).message}\nClick for the menu.`;
        item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
    item.accessibilityInformation = { label: `${item.text.replace(/\$\([^)]+\)\s*/g, '')}. ${item.tooltip}` };
    shown = { text: item.text, tooltip: String(item.tooltip), background: item.backgroundColor?.id };
  };
  update(connection.state);
  const sub = connection.onDidChangeState(update);
  item.show();
  return { dispose: () => (sub.dispose(), item.dispose()) };
}
