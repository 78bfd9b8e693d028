// Asks the user whether to use a hosted-server URL they did not choose themselves (workspace
// settings) or that would carry the token unencrypted. "Do not use it" comes first, so an
// accidental Enter sends nothing.
import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { REASON_TEXT, type TrustReason } from '../config/serverTrust';

export async function askToUseServer(baseUrl: string, reasons: TrustReason[]): Promise<boolean> {
  const items: Array<vscode.QuickPickItem & { use: boolean }> = [
    { label: '$(close) Do not use it', detail: 'Nothing is sent to it. Switch Server picks another one.', use: false },
    { label: inert`$(check) Use ${baseUrl}`, detail: reasons.map((r) => REASON_TEXT[r]).join(' '), use: true },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: inert`Use the inbox server ${baseUrl}?`,
    placeHolder: 'Test Inbox would send this server your API token.',
    ignoreFocusOut: true,
  });
  return picked?.use === true;
}
