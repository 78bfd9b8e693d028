// Open in Browser (palette, and the view's title bar): the server's web UI in the user's browser,
// signed in by a one-time link. The extension asks the server, with the API token in a header,
// for a ticket that works once and for seconds (POST /ui/ticket, docs/api.md "Web UI"), and opens
// `<server>/#ticket=…` (declaring the page's origin when the editor reaches the server through a
// proxy, below): a fragment reaches no server, no proxy log and no Referer, and the page
// takes it out of the address before spending it. The API token is never in the URL, and the
// ticket is never logged. The hosted service has no web UI of ours: against it the command says so.
import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { COMMANDS } from '../commandIds';
import { ACTION_TITLES, ExtensionError } from '../errors';
import type { Services } from '../services';
import { runAction } from '../ui/reportError';
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
  // In a browser-based editor (code-server, a cloud editor) the browser reaches the server at
  // another address, asExternalUri's: when a proxy there rewrites Host, the server cannot see
  // the page's origin, so the ticket declares it (its session accepts that origin, and only it).
  const serverOrigin = new URL(api.baseUrl).origin;
  const external = await vscode.env.asExternalUri(vscode.Uri.parse(`${serverOrigin}/`));
  const externalOrigin = new URL(external.toString(true)).origin;
  const { url } = await api.webUiSignInUrl(externalOrigin !== serverOrigin && externalOrigin !== 'null' ? { origin: externalOrigin } : {});
  // The exact string, not a Uri: the extension host's openExternal keeps a string as written (vscode#85930).
  const opened = await vscode.env.openExternal(url as unknown as vscode.Uri);
  if (!opened) throw new ExtensionError('unreachable', `The browser could not be opened. Open ${api.baseUrl}/ and sign in with the API token.`);
  s.log.info(`Opened the web UI of ${api.baseUrl} in the browser, signed in by a one-time link.`);
  showStatus(inert`$(globe) Opened the web UI of ${api.baseUrl} in the browser`, OPENED_MESSAGE_MS);
  return true;
}
