// What commands, the tree and the status bar share; built once by activate().
import * as vscode from 'vscode';
import type { TokenStore } from './config/secrets';
import type { Settings } from './config/settings';
import type { Connection } from './connection';
import { ACTION_TITLES, describeError, type ErrorAction } from './errors';
import { errorText, type Logger } from './log';
import type { LiveUpdates } from './live';
import type { InboxModel } from './tree/model';
import type { InboxView } from './tree/view';
import { commandFor } from './commands/actions';
import type { AddedInboxes, ReadState } from './tree/state';
import { inertMessage } from '../core/inert';
import { showError } from './ui/shown';

export interface Services {
  context: vscode.ExtensionContext;
  channel: vscode.LogOutputChannel;
  log: Logger;
  settings(): Settings;
  tokens: TokenStore;
  connection: Connection;
  model: InboxModel;
  live: LiveUpdates;
  added(): AddedInboxes;
  readState(): ReadState;
  /** The tree view; it redraws (badge included) when the model changes: model.refreshView() to redraw, model.invalidate() to reload. */
  tree: InboxView;
}

/**
 * Shows what went wrong and what to do, with the matching buttons; cancellation is silent.
 * Used by commands (user-initiated): the tree itself never pops notifications.
 */
export async function reportError(s: Pick<Services, 'log'>, e: unknown, what: string): Promise<void> {
  const d = describeError(e);
  if (d.silent) return;
  s.log.error(`${what} failed: ${errorText(e)}`);
  const labels = d.actions.map((a) => ACTION_TITLES[a]);
  // The message may quote a subject or a server's answer: inert, so it cannot carry a link.
  const choice = await showError(inertMessage`${what} failed. ${d.message}`, ...labels);
  const action = d.actions.find((a) => ACTION_TITLES[a] === choice);
  if (action) await runAction(action);
}

export async function runAction(action: ErrorAction): Promise<void> {
  const c = commandFor(action);
  await vscode.commands.executeCommand(c.command, ...(c.args ?? []));
}
