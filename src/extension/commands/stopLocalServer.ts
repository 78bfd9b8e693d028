import * as vscode from 'vscode';
import type { Services } from '../services';

export const id = 'testInbox.stopLocalServer';

export async function run(s: Services): Promise<string> {
  const result = await s.connection.stopLocal();
  s.live.sync();
  s.model.invalidate();
  if (result === 'detached') void vscode.window.showInformationMessage('Disconnected. The local server belongs to another window (or a terminal) and keeps running there.');
  return result;
}
