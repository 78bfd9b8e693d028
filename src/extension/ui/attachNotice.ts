// Says so when the extension attaches to a local server this window did not start (another
// window's, or one run in a terminal): it proved it serves our data folder, and stopping it
// here only disconnects.
import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import type { Connection } from '../connection';
import { showInfo } from './shown';
import { COMMANDS, commandTitle } from '../commandIds';

const SHOW_LOG = commandTitle('showLog');

export function announceAttach(connection: Connection): vscode.Disposable {
  let announced: string | undefined;
  return connection.onDidChangeState((st) => {
    if (st.kind !== 'ready' || st.server.mode !== 'attached') {
      if (st.kind !== 'starting' && st.kind !== 'idle') announced = undefined;
      return;
    }
    const what = `${st.server.baseUrl}#${st.server.pid ?? ''}`;
    if (announced === what) return; // reconnecting to the same server says nothing new
    announced = what;
    void showInfo(
      inert`Attached to the Test Inbox server at ${st.server.baseUrl} (pid ${st.server.pid ?? '?'}) that this window did not start; it proved it serves this window's data folder. Stopping it here only disconnects.`,
      SHOW_LOG,
    ).then((c) => (c === SHOW_LOG ? vscode.commands.executeCommand(COMMANDS.showLog.id) : undefined));
  });
}
