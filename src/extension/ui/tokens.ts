// Shared by the four token commands: ask with a password box, store in SecretStorage only.
// Only the user enters a token: a command argument never stores one without the box.
import * as vscode from 'vscode';
import { ApiError } from '../../api/errors';
import { inert, inertMessage } from '../../core/inert';
import { ACTION_TITLES } from '../errors';
import { tokenProblem, type TokenKind } from '../config/secrets';
import type { Services } from '../services';
import { TOKENS_FILE } from '../../shared/contract';
import { askToUseServer } from './confirmServer';
import { showInfo, showStatus, showWarning } from './shown';

/** How long the status bar says the token was saved. */
const SAVED_MESSAGE_MS = 4000;

const NAMES: Record<TokenKind, string> = { api: 'API token', webhook: 'webhook token', twilio: 'Twilio auth token' };
const TITLES: Record<TokenKind, string> = { api: 'API Token', webhook: 'Webhook Token', twilio: 'Twilio Auth Token' };

/**
 * The local server's tokens live in its data folder, read once the server proved it is that
 * folder's server: a token set here would never be used. Says so, and returns true, for a local server.
 */
function refusedForLocal(s: Services, verb: 'Set' | 'Clear', kind: TokenKind): boolean {
  if (!s.connection.isLocal) return false;
  s.log.info(`${verb} ${TITLES[kind]} was run against the local server: it uses the tokens of its data folder.`);
  void showInfo(
    inert`${verb} ${TITLES[kind]} is for remote servers. The local server's tokens are in ${TOKENS_FILE} of its data folder; Test Inbox reads them there once the server proves it is that folder's server.`,
  );
  return true;
}

/**
 * Asks for a token in a password box and stores it in SecretStorage. Always asks: a string
 * argument (a command call) is only proposed as the box's value, for the user to accept. A
 * hosted URL the user has not confirmed (workspace-set, or plain http elsewhere) is confirmed
 * first: no token is asked for a URL the user did not choose.
 */
export async function setToken(s: Services, kind: TokenKind, proposed: unknown): Promise<boolean> {
  if (refusedForLocal(s, 'Set', kind)) return false;
  const pending = s.connection.unconfirmed();
  if (pending) {
    if (!(await askToUseServer(pending.baseUrl, pending.reasons))) return false;
    await s.connection.confirmServer(pending.baseUrl, pending.reasons);
  }
  const key = s.connection.tokenKey();
  const token = await vscode.window.showInputBox({
    title: `Set ${NAMES[kind]} for ${key}`,
    prompt:
      typeof proposed === 'string'
        ? `A command call proposes this ${NAMES[kind]}: press Enter to store it, Escape to cancel.`
        : kind === 'api'
          ? 'Paste the API token (kept in VS Code secret storage).'
          : 'Paste the webhook token from the team settings (kept in VS Code secret storage).',
    value: typeof proposed === 'string' ? proposed : undefined,
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => tokenProblem(v),
  });
  if (token === undefined) return false;
  await s.tokens.set(kind, key, token); // validates again: a bad value is refused with the reason
  s.log.addSecret(token.trim());
  s.log.info(`Stored the ${NAMES[kind]} for ${key}.`);
  if (kind === 'api') await s.connection.reset();
  s.model.invalidate();
  if (kind === 'api') {
    // Said as the server answers it: a refused token is not "saved" as if all were well.
    const refused = await s.connection.ensure().then(
      () => undefined,
      (e: unknown) => (ApiError.is(e, 'unauthorized') ? e : undefined),
    );
    if (refused) {
      s.log.warn(`${key} refused the API token just set: ${refused.message}`);
      void showWarning(inertMessage`The API token was saved, but ${key} refused it: ${refused.message}`, ACTION_TITLES.setApiToken).then((c) => {
        if (c === ACTION_TITLES.setApiToken) void setToken(s, 'api', undefined);
      });
      return true;
    }
  }
  showStatus(inert`$(check) ${NAMES[kind]} saved`, SAVED_MESSAGE_MS);
  return true;
}

export async function clearToken(s: Services, kind: TokenKind): Promise<boolean> {
  if (refusedForLocal(s, 'Clear', kind)) return false;
  const key = s.connection.tokenKey();
  await s.tokens.clear(kind, key);
  s.log.info(`Cleared the ${NAMES[kind]} for ${key}.`);
  if (kind === 'api') await s.connection.reset();
  s.model.invalidate();
  return true;
}
