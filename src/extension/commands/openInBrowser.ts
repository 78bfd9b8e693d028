// Open in Browser (palette, and the view's title bar): the server's web UI in the user's browser,
// signed in by a one-time link. The extension asks the server, with the API token in a header,
// for a ticket that works once and for seconds (POST /ui/ticket, docs/api.md "Web UI"), and opens
// `<server>/#ticket=…`: a fragment reaches no server, no proxy log and no Referer, and the page
// takes it out of the address before spending it. The API token is never in the URL, and the
// ticket is never logged. The hosted service has no web UI of ours: against it the command says so.
import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { COMMANDS } from '../commandIds';
import { ACTION_TITLES, ExtensionError } from '../errors';
import { runAction, type Services } from '../services';
import { showStatus, showWarning } from '../ui/shown';

export const id = COMMANDS.openInBrowser.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** How long the status bar confirms the opening. */
const OPENED_MESSAGE_MS = 8000;
const SWITCH = ACTION_TITLES.switchServer;

export async function run(s: Services): Promise<boolean> {
  const api = await s.connection.ensure();
  if (!s.connection.testInbox) {
    // Not awaited: the command returns while the message waits for the user.
    void showWarning(inert`The hosted service has no Test Inbox web UI. Open in Browser opens the web UI of a Test Inbox server: the local one, or a team server.`, SWITCH).then((choice) => (choice === SWITCH ? runAction('switchServer') : undefined));
    return false;
  }
  const { url } = await api.webUiSignInUrl();
  // The exact string, not a Uri: the extension host's openExternal keeps a string as written (vscode#85930).
  const opened = await vscode.env.openExternal(url as unknown as vscode.Uri);
  if (!opened) throw new ExtensionError('unreachable', `The browser could not be opened. Open ${api.baseUrl}/ and sign in with the API token.`);
  s.log.info(`Opened the web UI of ${api.baseUrl} in the browser, signed in by a one-time link.`);
  showStatus(inert`$(globe) Opened the web UI of ${api.baseUrl} in the browser`, OPENED_MESSAGE_MS);
  return true;
}
