import * as vscode from 'vscode';
import type { Services } from '../services';
import { inert } from '../../core/inert';
import { resolveMessage } from '../ui/pick';
import { showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.exportEml.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/**
 * Saves a message's RFC 5322 source as a .eml file, always through the save dialog: a
 * `{ target }` argument (a command call) is only the dialog's proposed path.
 */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveMessage(s, arg, 'Export as .eml');
  if (!ref) return undefined;
  const target = typeof arg === 'object' && arg !== null ? (arg as { target?: unknown }).target : undefined;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const name = `${ref.id.replace(/[^A-Za-z0-9._+-]/g, '_')}.eml`;
  const uri = await vscode.window.showSaveDialog({
    title: 'Export as .eml',
    defaultUri: typeof target === 'string' ? vscode.Uri.file(target) : folder ? vscode.Uri.joinPath(folder, name) : undefined,
    filters: { 'Email message': ['eml'] },
  });
  if (!uri) return undefined;
  const api = await s.connection.ensure();
  const raw = await api.getRaw(ref.domain, ref.inbox, ref.id);
  await vscode.workspace.fs.writeFile(uri, Buffer.from(raw, 'utf8'));
  s.log.info(`Exported ${ref.id} to ${uri.fsPath}.`);
  void showInfo(inert`Saved ${ref.id} as ${uri.fsPath}.`);
  return uri.fsPath;
}
