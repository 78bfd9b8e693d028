import * as vscode from 'vscode';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.startLocalServer.id;

export async function run(s: Services): Promise<{ http: string; smtp?: string } | undefined> {
  if (!s.connection.isLocal) {
    throw new ExtensionError('not_supported', 'The server setting names a hosted server. Switch to the local server first (status bar menu → Switch Server).');
  }
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Starting the local inbox server…' }, () => s.connection.startLocal());
  s.model.invalidate();
  const st = s.connection.state;
  if (st.kind !== 'ready') return undefined;
  return { http: st.server.baseUrl, smtp: st.server.smtp ? `${st.server.smtp.host}:${st.server.smtp.port}` : undefined };
}
