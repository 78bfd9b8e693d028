// How a failed command tells the user: the error's message and the actions that fix it, as
// buttons or as a server notice (serverNotice.ts). Used by commands/index.ts for every command
// and by the commands that offer an error's actions themselves.
import * as vscode from 'vscode';
import { ApiError } from '../../api/errors';
import { inertMessage } from '../../core/inert';
import type { Connection } from '../connection/connection';
import { ACTION_TITLES, describeError, ExtensionError, LocalServerError, type ErrorAction } from '../errors';
import { errorText, type Logger } from '../log';
import { commandFor } from '../tree/actions';
import { showServerNotice } from './serverNotice';
import { showError } from './shown';

/**
 * Shows what went wrong and what to do, with the matching buttons; cancellation is silent.
 * Used by commands (user-initiated): the tree itself never pops notifications. A failure while
 * the connection is not ready (the server stopped, unreachable, failed to start, refused the
 * token) is a server notice, withdrawn once the connection is ready (ui/serverNotice.ts).
 */
export async function reportError(s: { log: Logger; connection: Connection }, e: unknown, what: string): Promise<void> {
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

export async function runAction(action: ErrorAction): Promise<void> {
  const c = commandFor(action);
  await vscode.commands.executeCommand(c.command, ...(c.args ?? []));
}
