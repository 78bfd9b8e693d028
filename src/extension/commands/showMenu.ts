import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import type { Services } from '../services';
import * as copyApiToken from './copyApiToken';
import * as copySmsSettings from './copySmsSettings';
import * as copyProviderSettings from './copyProviderSettings';
import * as copySmtpSettings from './copySmtpSettings';
import * as injectMessage from './injectMessage';
import * as openInBrowser from './openInBrowser';
import * as refresh from './refresh';
import * as setApiToken from './setApiToken';
import * as setWebhookToken from './setWebhookToken';
import * as showLog from './showLog';
import * as simulateFailures from './simulateFailures';
import * as startLocalServer from './startLocalServer';
import * as stopLocalServer from './stopLocalServer';
import * as switchServer from './switchServer';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.showMenu.id;

/** The status bar's quick menu. */
export async function run(s: Services): Promise<void> {
  const local = s.connection.isLocal;
  const st = s.connection.state.kind;
  const items: Array<vscode.QuickPickItem & { command?: string }> = [];
  if (st === 'unreachable') items.push({ label: '$(refresh) Retry', description: 'the server cannot be reached', command: refresh.id });
  if (local) {
    if (st === 'ready') items.push({ label: '$(debug-stop) Stop Local Server', command: stopLocalServer.id });
    else if (st === 'detached') items.push({ label: '$(plug) Attach to Local Server', description: 'it kept running in another process', command: startLocalServer.id });
    else items.push({ label: '$(play) Start Local Server', command: startLocalServer.id });
    items.push({ label: '$(copy) Copy SMTP Settings', command: copySmtpSettings.id });
    items.push({ label: '$(device-mobile) Copy SMS Settings', command: copySmsSettings.id });
    items.push({ label: '$(key) Copy API Token', description: 'for curl, CI and the test library', command: copyApiToken.id });
    items.push({ label: '$(cloud-upload) Copy Provider Settings…', description: 'Resend, SendGrid, Postmark, Mailgun, SES, Twilio', command: copyProviderSettings.id });
  }
  // The web UI is every Test Inbox server's (not the hosted service's).
  if (st === 'ready' && s.connection.testInbox) {
    items.push({ label: '$(globe) Open in Browser', description: 'the web UI, signed in', command: openInBrowser.id });
    items.push({ label: '$(debug-disconnect) Simulate Failures…', description: 'SMTP, provider and Twilio faults, late delivery', command: simulateFailures.id });
  }
  items.push(
    { label: '$(arrow-swap) Switch Server…', command: switchServer.id },
    { label: '$(key) Set API Token…', command: setApiToken.id },
    { label: '$(key) Set Webhook Token…', command: setWebhookToken.id },
    { label: '$(mail) Inject Test Message…', command: injectMessage.id },
    { label: '$(output) Show Log', command: showLog.id },
  );
  const picked = await vscode.window.showQuickPick(items, { title: inert`Test Inbox — ${s.connection.describe()}` });
  if (picked?.command) await vscode.commands.executeCommand(picked.command);
}
