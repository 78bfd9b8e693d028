// Shared by the four token commands: ask with a password box, store in SecretStorage only.
// Only the user enters a token: a command argument never stores one without the box.
import * as vscode from 'vscode';
import { tokenProblem, type TokenKind } from '../config/secrets';
import type { Services } from '../services';
import { askToUseServer } from './confirmServer';
import { showStatus } from './shown';

/** How long the status bar says the token was saved. */
const SAVED_MESSAGE_MS = 4000;

const NAMES: Record<TokenKind, string> = { api: 'API token', webhook: 'webhook token', twilio: 'Twilio auth token' };

/**
 * Asks for a token in a password box and stores it in SecretStorage. Always asks: a string
 * argument (a command call) is only proposed as the box's value, for the user to accept. A
 * hosted URL the user has not confirmed (workspace-set, or plain http elsewhere) is confirmed
 * first: no token is asked for a URL the user did not choose.
 */
export async function setToken(s: Services, kind: TokenKind, proposed: unknown): Promise<boolean> {
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
  showStatus(`$(check) ${NAMES[kind]} saved`, SAVED_MESSAGE_MS);
  return true;
}

export async function clearToken(s: Services, kind: TokenKind): Promise<boolean> {
  const key = s.connection.tokenKey();
  await s.tokens.clear(kind, key);
  s.log.info(`Cleared the ${NAMES[kind]} for ${key}.`);
  if (kind === 'api') await s.connection.reset();
  s.model.invalidate();
  return true;
}
