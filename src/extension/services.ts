// What commands, the tree and the status bar share; built once by activate().
import * as vscode from 'vscode';
import type { TokenStore } from './config/secrets';
import type { Settings } from './config/settings';
import type { Connection } from './connection/connection';
import { ApiError } from '../api/errors';
import { ACTION_TITLES, describeError, ExtensionError, LocalServerError, type ErrorAction } from './errors';
import { showServerNotice } from './ui/serverNotice';
import { errorText, type Logger } from './log';
import type { LiveUpdates } from './tree/live';
import type { FaultRulesWatch } from './chaos/watch';
import type { InboxModel } from './tree/model';
import type { InboxView } from './tree/view';
import { commandFor } from './tree/actions';
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
  /** The connected Test Inbox server's fault rules (docs/chaos.md), for the status-bar mark and Simulate Failures…. */
  faults: FaultRulesWatch;
  added(): AddedInboxes;
  readState(): ReadState;
  /** The tree view; it redraws (badge included) when the model changes: model.refreshView() to redraw, model.invalidate() to reload. */
  tree: InboxView;
}

/**
 * Shows what went wrong and what to do, with the matching buttons; cancellation is silent.
 * Used by commands (user-initiated): the tree itself never pops notifications. A failure while
 * the connection is not ready (the server stopped, unreachable, failed to start, refused the
 * token) is a server notice, withdrawn once the connection is ready (ui/serverNotice.ts).
 */
export async function reportError(s: Pick<Services, 'log' | 'connection'>, e: unknown, what: string): Promise<void> {
  const d = describeError(e);
  if (d.silent) return;
  s.log.error(`${what} failed: ${errorText(e)}`);
  // The message may quote a subject or a server's answer: inert, so it cannot carry a link.
  const text = inertMessage`${what} failed. ${d.message}`;
  if (s.connection.state.kind !== 'ready' && isServerProblem(e)) {
    showServerNotice(s.connection, text, d.actions);
    return;
  }
  const labels = d.actions.map((a) => ACTION_TITLES[a]);
  const choice = await showError(text, ...labels);
  const action = d.actions.find((a) => ACTION_TITLES[a] === choice);
  if (action) await runAction(action);
}

/** Whether a failure is about the server not being there or not taking us (its fix is the server, not the input). */
function isServerProblem(e: unknown): boolean {
  return LocalServerError.is(e) || ExtensionError.is(e, 'no_server') || ExtensionError.is(e, 'unreachable') || ApiError.is(e, 'network') || ApiError.is(e, 'timeout') || ApiError.is(e, 'unauthorized');
}

/**
 * The one check every command that needs the server goes through (commands/index.ts, for each
 * command that exports `needsServer`), before it asks anything: connects (starting the local
 * server on first use) and, when the server is stopped, detached, unreachable, failed or needs
 * a token, rejects with the error that says so and names the fix. A command then never opens
 * an empty picker or walks through its prompts for nothing.
 */
export async function requireServer(s: Pick<Services, 'connection'>): Promise<void> {
  await s.connection.ensure();
}

export async function runAction(action: ErrorAction): Promise<void> {
  const c = commandFor(action);
  await vscode.commands.executeCommand(c.command, ...(c.args ?? []));
}
