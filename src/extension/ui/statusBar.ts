// The status bar item: which server, its state, and a click for the quick menu.
import * as vscode from 'vscode';
import type { Connection, ConnectionState } from '../connection/connection';
import { COMMANDS } from '../commandIds';
import { describeError } from '../errors';
import { inert, inertMessage } from '../../core/inert';
import type { FaultRulesWatch } from '../chaos/watch';
import { describeRule } from '../chaos/presets';
import { ContextKey } from '../config/contextKeys';

/** What the item shows now, for the debug state (tests): text, tooltip and background colour id. */
let shown: { text: string; tooltip: string; background?: string } | undefined;

export function statusBarShown(): typeof shown {
  return shown;
}

/** What the fault-rules mark shows now (undefined while hidden), for the debug state. */
let faultsShown: { text: string; tooltip: string } | undefined;

export function faultRulesMarkShown(): typeof faultsShown {
  return faultsShown;
}

/** Most rules the mark's tooltip lists one by one; the rest are counted. */
const MAX_RULES_IN_TOOLTIP = 8;

/**
 * A second item, shown only while the server has fault rules (docs/chaos.md): their count, and
 * a click for Simulate Failures…. Its disposal stops the watch too (the mark is its one reader).
 */
export function createFaultRulesMark(watch: FaultRulesWatch, connection: Connection): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('testInbox.faultRules', vscode.StatusBarAlignment.Left, 9);
  item.name = 'Test Inbox: failure rules';
  item.command = COMMANDS.simulateFailures.id;
  item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  const update = () => {
    const rules = watch.rules;
    if (rules.length === 0) {
      item.hide();
      faultsShown = undefined;
      return;
    }
    item.text = `$(debug-disconnect) ${rules.length} failure rule${rules.length === 1 ? '' : 's'}`;
    const lines = rules.slice(0, MAX_RULES_IN_TOOLTIP).map((r) => {
      const d = describeRule(r);
      return inert`${d.label}: ${d.detail}`;
    });
    if (rules.length > MAX_RULES_IN_TOOLTIP) lines.push(inert`… and ${String(rules.length - MAX_RULES_IN_TOOLTIP)} more`);
    item.tooltip = `The Test Inbox server fails on purpose while these rules are active (each ends by itself when its time to live is over):\n${lines.join('\n')}\nClick to add or clear failures.`;
    item.accessibilityInformation = { label: `${rules.length} failure rules active on the Test Inbox server. Click to add or clear failures.` };
    faultsShown = { text: item.text, tooltip: item.tooltip };
    item.show();
  };
  update();
  const sub = watch.onDidChange(update);
  // Simulate Failures… is offered in menus only for a Test Inbox server.
  let isTestInbox: boolean | undefined;
  const setKey = () => {
    const now = connection.testInbox !== undefined;
    if (now !== isTestInbox) void vscode.commands.executeCommand('setContext', ContextKey.testInboxServer, (isTestInbox = now));
  };
  setKey();
  const connSub = connection.onDidChangeState(setKey);
  return { dispose: () => (sub.dispose(), connSub.dispose(), watch.dispose(), item.dispose(), (faultsShown = undefined)) };
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
