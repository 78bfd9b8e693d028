// The notification a command shows when the server it needs is not there (stopped, detached,
// unreachable, failed to start, refused its token). Unlike an error message, which VS Code
// keeps on screen until it is closed, this one is withdrawn by itself once the connection is
// ready again: a "Start Local Server failed" must not stay up over a server that now runs.
// VS Code offers no way to close an error message, so it is a progress notification (which
// ends when its task does) whose text carries the fixes as command links; its Cancel button
// dismisses it. One at a time: a newer one replaces it.
import * as vscode from 'vscode';
import type { Inert } from '../../core/inert';
import { commandFor } from '../tree/actions';
import type { ConnectionState } from '../connection/connection';
import { ACTION_TITLES, type ErrorAction } from '../errors';
import { noteShown } from './shown';

interface Notice {
  text: string;
  actions: ErrorAction[];
  end(): void;
}

let current: Notice | undefined;

/** The server notice on screen (the debug state), else undefined. */
export function serverNoticeShown(): { text: string; actions: string[] } | undefined {
  return current && { text: current.text, actions: current.actions.map((a) => ACTION_TITLES[a]) };
}

/** `[Title](command:id?args)`: a link in a notification that runs the action's command. */
function actionLink(action: ErrorAction): string {
  const c = commandFor(action);
  const args = c.args && c.args.length > 0 ? `?${encodeURIComponent(JSON.stringify(c.args))}` : '';
  return `[${ACTION_TITLES[action]}](command:${c.command}${args})`;
}

/**
 * Shows `text` (built with `inert`, so no value in it is a link) with its fixes as links, until
 * the connection is ready, the user cancels it, or another notice replaces it.
 */
export function showServerNotice(connection: { onDidChangeState(listener: (st: ConnectionState) => void): { dispose(): void } }, text: Inert, actions: ErrorAction[]): void {
  current?.end();
  noteShown('error', text);
  const links = actions.map(actionLink).join(' · ');
  void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: links ? `${text} ${links}` : text, cancellable: true }, (_progress, token) =>
    new Promise<void>((resolve) => {
      const notice: Notice = {
        text,
        actions,
        end: () => {
          sub.dispose();
          cancel.dispose();
          if (current === notice) current = undefined;
          resolve();
        },
      };
      const sub = connection.onDidChangeState((st) => {
        if (st.kind === 'ready') notice.end();
      });
      const cancel = token.onCancellationRequested(() => notice.end());
      current = notice;
    }),
  );
}
