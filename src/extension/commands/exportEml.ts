import * as vscode from 'vscode';
import type { Services } from '../services';
import { resolveMessage } from '../ui/pick';

export const id = 'testInbox.exportEml';

/** Saves a message's RFC 5322 source as a .eml file (`{ target }` gives the path for scripts). */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveMessage(s, arg, 'Export as .eml');
  if (!ref) return undefined;
  const target = typeof arg === 'object' && arg !== null ? (arg as { target?: unknown }).target : undefined;
  let uri: vscode.Uri | undefined;
  if (typeof target === 'string') uri = vscode.Uri.file(target);
  else {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const name = `${ref.id.replace(/[^A-Za-z0-9._+-]/g, '_')}.eml`;
    uri = await vscode.window.showSaveDialog({
      title: 'Export as .eml',
      defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
      filters: { 'Email message': ['eml'] },
    });
  }
  if (!uri) return undefined;
  const api = await s.connection.ensure();
  const raw = await api.getRaw(ref.domain, ref.inbox, ref.id);
  await vscode.workspace.fs.writeFile(uri, Buffer.from(raw, 'utf8'));
  s.log.info(`Exported ${ref.id} to ${uri.fsPath}.`);
  if (typeof target !== 'string') void vscode.window.showInformationMessage(`Saved ${ref.id} as ${uri.fsPath}.`);
  return uri.fsPath;
}
