// Copy API Token (local server): the token of the local server's data folder (tokens.json),
// for curl, a CI script or the test library on this machine. It is read once the server proved
// it is that folder's server (connection/connection.ts), goes only to the clipboard, and is never logged
// or shown. A hosted server's token is the user's own: set with Set API Token.
import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { TOKENS_FILE } from '../../shared/contract';
import { COMMANDS } from '../commandIds';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { showStatus } from '../ui/shown';

export const id = COMMANDS.copyApiToken.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** How long the status bar confirms the copy. */
const COPIED_MESSAGE_MS = 8000;

export async function run(s: Services): Promise<boolean> {
  if (!s.connection.isLocal) {
    throw new ExtensionError('not_supported', `The API token of ${s.connection.describe()} is yours: it is the one you set with Set API Token. Copy API Token copies the local server's.`);
  }
  const token = await s.connection.localApiToken();
  await vscode.env.clipboard.writeText(token);
  const st = s.connection.state;
  const where = st.kind === 'ready' ? st.server.baseUrl : 'the local server';
  s.log.info(`Copied the API token of ${where} (from ${TOKENS_FILE} of its data folder).`);
  showStatus(inert`$(check) Copied the API token of ${where}: it reads all mail, keep it out of commits`, COPIED_MESSAGE_MS);
  return true;
}
