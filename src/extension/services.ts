// What commands, the tree and the status bar share; built once by activate().
import * as vscode from 'vscode';
import type { TokenStore } from './config/secrets';
import type { Settings } from './config/settings';
import type { Connection } from './connection/connection';
import type { Logger } from './log';
import type { LiveUpdates } from './tree/live';
import type { FaultRulesWatch } from './chaos/watch';
import type { InboxModel } from './tree/model';
import type { InboxView } from './tree/view';
import type { AddedInboxes, ReadState } from './tree/state';

export interface Services {
  context: vscode.ExtensionContext;
  channel: vscode.LogOutputChannel;
  log: Logger;
  settings(): Settings;
  tokens: TokenStore;
  connection: Connection;
  model: InboxModel;
  live: LiveUpdates;
  /** The connected Test Inbox server's fault rules (docs/chaos.md), for the status-bar mark and Simulate Failures…. */
  faults: FaultRulesWatch;
  added(): AddedInboxes;
  readState(): ReadState;
  /** The tree view; it redraws (badge included) when the model changes: model.refreshView() to redraw, model.invalidate() to reload. */
  tree: InboxView;
}

/**
 * The one check every command that needs the server goes through (commands/index.ts, for each
 * command that exports `needsServer`), before it asks anything: connects (starting the local
 * server on first use) and, when the server is stopped, detached, unreachable, failed or needs
 * a token, rejects with the error that says so and names the fix. A command then never opens
 * an empty picker or walks through its prompts for nothing.
 */
export async function requireServer(s: Pick<Services, 'connection'>): Promise<void> {
  await s.connection.ensure();
}
