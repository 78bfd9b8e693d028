// Registers every command. Each runs inside one error boundary: failures get a message with
// actions (never thrown into VS Code's generic "command failed" toast), cancellation is silent.
import * as vscode from 'vscode';
import { reportError, type Services } from '../services';
import type { InboxTreeProvider } from '../tree/provider';
import * as addInbox from './addInbox';
import * as clearApiToken from './clearApiToken';
import * as clearInbox from './clearInbox';
import * as clearWebhookToken from './clearWebhookToken';
import * as confirmServer from './confirmServer';
import * as copyCode from './copyCode';
import * as copyMcpConfig from './copyMcpConfig';
import * as copyMessageId from './copyMessageId';
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
import * as openMessage from './openMessage';
import * as openMessageInNewPanel from './openMessageInNewPanel';
import * as refresh from './refresh';
import * as removeInbox from './removeInbox';
import * as searchMessages from './searchMessages';
import * as setApiToken from './setApiToken';
import * as setWebhookToken from './setWebhookToken';
import * as showLog from './showLog';
import * as showMenu from './showMenu';
import * as startLocalServer from './startLocalServer';
import * as stopLocalServer from './stopLocalServer';
import * as switchServer from './switchServer';
import * as waitForCode from './waitForCode';

type Runner = (s: Services, ...args: unknown[]) => unknown;

/** Titles used in error messages ("<title> failed. …"). */
const COMMANDS: Array<{ id: string; title: string; run: Runner }> = [
  { ...refresh, title: 'Refresh' },
  { ...addInbox, title: 'Add Inbox' },
  { ...removeInbox, title: 'Remove Inbox' },
  { ...openMessage, title: 'Open Message' },
  { ...openMessageInNewPanel, title: 'Open in New Panel' },
  { ...keepMessageOpen, title: 'Keep Open' },
  { ...injectMessage, title: 'Inject Test Message' },
  { ...copyWebhookUrl, title: 'Copy Webhook URL' },
  { ...copyCode, title: 'Copy One-Time Code' },
  { ...copyVerificationLink, title: 'Copy Verification Link' },
  { ...copyTotpCode, title: 'Copy TOTP Code' },
  { ...waitForCode, title: 'Wait for Next Code' },
  { ...searchMessages, title: 'Search Messages' },
  { ...copyMessageId, title: 'Copy Message Id' },
  { ...deleteMessage, title: 'Delete Message' },
  { ...clearInbox, title: 'Clear Inbox' },
  { ...exportEml, title: 'Export as .eml' },
  { ...setApiToken, title: 'Set API Token' },
  { ...clearApiToken, title: 'Clear API Token' },
  { ...setWebhookToken, title: 'Set Webhook Token' },
  { ...clearWebhookToken, title: 'Clear Webhook Token' },
  { ...startLocalServer, title: 'Start Local Server' },
  { ...stopLocalServer, title: 'Stop Local Server' },
  { ...copySmtpSettings, title: 'Copy SMTP Settings' },
  { ...copySmsSettings, title: 'Copy SMS Settings' },
  { ...copyMcpConfig, title: 'Copy MCP Server Config' },
  { ...showLog, title: 'Show Log' },
  { ...switchServer, title: 'Switch Server' },
  { ...confirmServer, title: 'Review Server' },
  { ...showMenu, title: 'Test Inbox menu' },
  { ...loadMore, title: 'Load more' },
] as Array<{ id: string; title: string; run: Runner }>;

export function registerCommands(s: Services, provider: InboxTreeProvider): vscode.Disposable[] {
  const out = COMMANDS.map((c) =>
    vscode.commands.registerCommand(c.id, async (...args: unknown[]) => {
      try {
        return await c.run(s, ...args);
      } catch (e) {
        // Not awaited: the command returns while the message waits for the user.
        void reportError(s, e, c.title);
        return undefined;
      }
    }),
  );
  out.push(vscode.commands.registerCommand(debugState.id, () => debugState.run(s, provider)));
  return out;
}

/** Every command id; test/integration/commands.test.ts checks it against the manifest. */
export const COMMAND_IDS = [...COMMANDS.map((c) => c.id), debugState.id];
