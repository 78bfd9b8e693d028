// Registers every command. Each runs inside one error boundary: failures get a message with
// actions (never thrown into VS Code's generic "command failed" toast), cancellation is silent.
import * as vscode from 'vscode';
import { requireServer, type Services } from '../services';
import { reportError } from '../ui/reportError';
import type { InboxTreeProvider } from '../tree/provider';
import { commandTitle, testHooksOn } from '../commandIds';
import * as addInbox from './addInbox';
import * as clearApiToken from './clearApiToken';
import * as clearInbox from './clearInbox';
import * as clearWebhookToken from './clearWebhookToken';
import * as confirmServer from './confirmServer';
import * as copyApiToken from './copyApiToken';
import * as copyCode from './copyCode';
import * as copyMcpConfig from './copyMcpConfig';
import * as copyMessageId from './copyMessageId';
import * as copyProviderSettings from './copyProviderSettings';
import * as copySmtpSettings from './copySmtpSettings';
import * as copySmsSettings from './copySmsSettings';
import * as copyTotpCode from './copyTotpCode';
import * as copyVerificationLink from './copyVerificationLink';
import * as copyWebhookUrl from './copyWebhookUrl';
import * as debugState from './debugState';
import * as deleteMessage from './deleteMessage';
import * as exportEml from './exportEml';
import * as injectMessage from './injectMessage';
import * as keepMessageOpen from './keepMessageOpen';
import * as loadMore from './loadMore';
import * as openInBrowser from './openInBrowser';
import * as openMessage from './openMessage';
import * as openMessageInNewPanel from './openMessageInNewPanel';
import * as refresh from './refresh';
import * as removeInbox from './removeInbox';
import * as searchMessages from './searchMessages';
import * as setApiToken from './setApiToken';
import * as setWebhookToken from './setWebhookToken';
import * as showLog from './showLog';
import * as showMenu from './showMenu';
import * as simulateFailures from './simulateFailures';
import * as startLocalServer from './startLocalServer';
import * as stopLocalServer from './stopLocalServer';
import * as switchServer from './switchServer';
import * as waitForCode from './waitForCode';

type Runner = (s: Services, ...args: unknown[]) => unknown;
/** A command module: its id and run, and `needsServer` when it cannot do anything without the server. */
type CommandModule = { id: string; title: string; run: Runner; needsServer?: boolean };

/** Each command with its title as said in error messages ("<title> failed. …"). */
const COMMANDS: CommandModule[] = [
  { ...refresh, title: commandTitle('refresh') },
  { ...addInbox, title: commandTitle('addInbox') },
  { ...removeInbox, title: commandTitle('removeInbox') },
  { ...openMessage, title: commandTitle('openMessage') },
  { ...openMessageInNewPanel, title: commandTitle('openMessageInNewPanel') },
  { ...keepMessageOpen, title: commandTitle('keepMessageOpen') },
  { ...injectMessage, title: commandTitle('injectMessage') },
  { ...copyWebhookUrl, title: commandTitle('copyWebhookUrl') },
  { ...copyCode, title: commandTitle('copyCode') },
  { ...copyVerificationLink, title: commandTitle('copyVerificationLink') },
  { ...copyTotpCode, title: commandTitle('copyTotpCode') },
  { ...waitForCode, title: commandTitle('waitForCode') },
  { ...searchMessages, title: commandTitle('searchMessages') },
  { ...openInBrowser, title: commandTitle('openInBrowser') },
  { ...simulateFailures, title: commandTitle('simulateFailures') },
  { ...copyMessageId, title: commandTitle('copyMessageId') },
  { ...deleteMessage, title: commandTitle('deleteMessage') },
  { ...clearInbox, title: commandTitle('clearInbox') },
  { ...exportEml, title: commandTitle('exportEml') },
  { ...setApiToken, title: commandTitle('setApiToken') },
  { ...clearApiToken, title: commandTitle('clearApiToken') },
  { ...setWebhookToken, title: commandTitle('setWebhookToken') },
  { ...clearWebhookToken, title: commandTitle('clearWebhookToken') },
  { ...startLocalServer, title: commandTitle('startLocalServer') },
  { ...stopLocalServer, title: commandTitle('stopLocalServer') },
  { ...copySmtpSettings, title: commandTitle('copySmtpSettings') },
  { ...copySmsSettings, title: commandTitle('copySmsSettings') },
  { ...copyApiToken, title: commandTitle('copyApiToken') },
  { ...copyProviderSettings, title: commandTitle('copyProviderSettings') },
  { ...copyMcpConfig, title: commandTitle('copyMcpConfig') },
  { ...showLog, title: commandTitle('showLog') },
  { ...switchServer, title: commandTitle('switchServer') },
  { ...confirmServer, title: commandTitle('confirmServer') },
  { ...showMenu, title: commandTitle('showMenu') },
  { ...loadMore, title: commandTitle('loadMore') },
] as CommandModule[];

export function registerCommands(s: Services, provider: InboxTreeProvider): vscode.Disposable[] {
  const out = COMMANDS.map((c) =>
    vscode.commands.registerCommand(c.id, async (...args: unknown[]) => {
      try {
        // Before the command asks anything: the server it needs is there, or the user is told why not and how to fix it.
        if (c.needsServer) await requireServer(s);
        return await c.run(s, ...args);
      } catch (e) {
        // Not awaited: the command returns while the message waits for the user.
        void reportError(s, e, c.title);
        return undefined;
      }
    }),
  );
  if (testHooksOn(s.context.extensionMode === vscode.ExtensionMode.Production, process.env)) out.push(vscode.commands.registerCommand(debugState.id, () => debugState.run(s, provider)));
  return out;
}

/** Every contributed command id; test/integration/commands.test.ts checks it against the manifest. The test hooks are not contributed. */
export const COMMAND_IDS = COMMANDS.map((c) => c.id);
