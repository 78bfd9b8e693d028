// Shared by the four token commands: ask with a password box, store in SecretStorage only.
import * as vscode from 'vscode';
import { tokenProblem, type TokenKind } from '../config/secrets';
import type { Services } from '../services';

const NAMES: Record<TokenKind, string> = { api: 'API token', webhook: 'webhook token', twilio: 'Twilio auth token' };

/** `value` (a string argument) skips the prompt, for scripts and tests. */
export async function setToken(s: Services, kind: TokenKind, value: unknown): Promise<boolean> {
  const key = s.connection.tokenKey();
  let token = typeof value === 'string' ? value : undefined;
  if (token === undefined) {
    token = await vscode.window.showInputBox({
      title: `Set ${NAMES[kind]} for ${key}`,
      prompt: kind === 'api' ? 'Paste the API token (kept in VS Code secret storage).' : 'Paste the webhook token from the team settings (kept in VS Code secret storage).',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => tokenProblem(v),
    });
    if (token === undefined) return false;
  }
  await s.tokens.set(kind, key, token); // validates again: a bad argument is refused with the reason
  s.log.addSecret(token.trim());
  s.log.info(`Stored the ${NAMES[kind]} for ${key}.`);
  if (kind === 'api') await s.connection.reset();
  s.model.invalidate();
  if (typeof value !== 'string') void vscode.window.setStatusBarMessage(`$(check) ${NAMES[kind]} saved`, 4000);
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
