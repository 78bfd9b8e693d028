import * as vscode from 'vscode';
import type { Services } from '../services';

export const id = 'testInbox.showMenu';

/** The status bar's quick menu. */
export async function run(s: Services): Promise<void> {
  const local = s.connection.isLocal;
  const st = s.connection.state.kind;
  const items: Array<vscode.QuickPickItem & { command?: string }> = [];
  if (local) {
    if (st === 'ready') items.push({ label: '$(debug-stop) Stop Local Server', command: 'testInbox.stopLocalServer' });
    else items.push({ label: '$(play) Start Local Server', command: 'testInbox.startLocalServer' });
    items.push({ label: '$(copy) Copy SMTP Settings', command: 'testInbox.copySmtpSettings' });
  }
  items.push(
    { label: '$(arrow-swap) Switch Server…', command: 'testInbox.switchServer' },
    { label: '$(key) Set API Token…', command: 'testInbox.setApiToken' },
    { label: '$(key) Set Webhook Token…', command: 'testInbox.setWebhookToken' },
    { label: '$(mail) Inject Test Message…', command: 'testInbox.injectMessage' },
    { label: '$(output) Show Log', command: 'testInbox.showLog' },
  );
  const picked = await vscode.window.showQuickPick(items, { title: `Test Inbox — ${s.connection.describe()}` });
  if (picked?.command) await vscode.commands.executeCommand(picked.command);
}
