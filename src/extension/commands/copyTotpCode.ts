import * as vscode from 'vscode';
import { inert, plain } from '../../core/inert';
import { totpAt } from '../../core/totp';
import { parseTotpInput, suggestedTotpName } from '../../core/totpInput';
import { TotpSecretStore, totpNameProblem, type StoredTotpSecret } from '../config/secrets';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { showInfo, showModalWarning, showStatus } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copyTotpCode.id;

/** How long the status bar confirms the copy. */
const COPIED_MESSAGE_MS = 8000;

/** What the command gives back (tests, other commands): never the secret. */
export interface TotpCopied {
  name: string;
  code: string;
  secondsLeft: number;
}

/** From tests and other commands: `{ name }` copies that secret's code; `{ name, secret }` stores it first; `{ remove }` removes one. */
interface Args {
  name?: unknown;
  secret?: unknown;
  remove?: unknown;
}

type Item = vscode.QuickPickItem & { action: 'copy' | 'add' | 'remove'; name?: string };

function describeSecret(s: StoredTotpSecret): string {
  return `${s.digits} digits · ${s.algorithm} · ${s.period} s`;
}

/**
 * Copies the current code of a named TOTP secret, computed here with otpauth (the secret never
 * leaves the machine). Secrets are pasted as base32 or as an otpauth:// URI and kept in
 * SecretStorage under a name; the picker adds and removes them.
 */
export async function run(s: Services, arg?: unknown): Promise<TotpCopied | undefined> {
  const store = new TotpSecretStore(s.context.secrets);
  const a = (typeof arg === 'object' && arg !== null ? arg : {}) as Args;
  if (typeof a.remove === 'string') {
    await store.remove(a.remove);
    return undefined;
  }
  if (typeof a.name === 'string') {
    if (typeof a.secret === 'string') await add(store, a.name, a.secret);
    return copy(s, store, a.name);
  }
  const names = await store.names();
  const items: Item[] = [];
  for (const name of names) {
    const secret = await store.get(name);
    if (secret) items.push({ label: inert`$(key) ${name}`, description: describeSecret(secret), action: 'copy', name });
  }
  if (items.length > 0) items.push({ label: '', kind: vscode.QuickPickItemKind.Separator, action: 'copy' });
  items.push({ label: '$(add) Add TOTP Secret…', detail: 'Paste a base32 secret or an otpauth:// URI; it is kept in VS Code\'s secret storage.', action: 'add' });
  if (names.length > 0) items.push({ label: '$(trash) Remove TOTP Secret…', action: 'remove' });
  const picked = await vscode.window.showQuickPick(items, { title: 'Copy TOTP Code', placeHolder: names.length > 0 ? 'Pick a secret to copy its current code' : 'No TOTP secrets yet: add one' });
  if (!picked) return undefined;
  if (picked.action === 'copy' && picked.name) return copy(s, store, picked.name);
  if (picked.action === 'remove') {
    await removeInteractive(store, names);
    return undefined;
  }
  const name = await addInteractive(store, names);
  return name ? copy(s, store, name) : undefined;
}

async function add(store: TotpSecretStore, name: string, raw: string): Promise<void> {
  const parsed = parseTotpInput(raw);
  if (!parsed.ok) throw new ExtensionError('invalid_input', parsed.problem);
  const problem = totpNameProblem(name);
  if (problem) throw new ExtensionError('invalid_input', problem);
  const { secret, algorithm, digits, period } = parsed.value;
  await store.set(name, { secret, algorithm, digits, period });
}

async function addInteractive(store: TotpSecretStore, names: string[]): Promise<string | undefined> {
  const raw = await vscode.window.showInputBox({
    title: 'Add TOTP Secret (1/2)',
    prompt: 'The base32 secret (the "manual entry" key) or the otpauth:// URI of the QR code. It stays on this machine.',
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => {
      const r = parseTotpInput(v);
      return r.ok ? undefined : r.problem;
    },
  });
  if (raw === undefined) return undefined;
  const parsed = parseTotpInput(raw);
  if (!parsed.ok) throw new ExtensionError('invalid_input', parsed.problem);
  const name = await vscode.window.showInputBox({
    title: 'Add TOTP Secret (2/2)',
    prompt: 'A name for this secret, e.g. the app and the test account',
    value: suggestedTotpName(parsed.value),
    ignoreFocusOut: true,
    validateInput: (v) => totpNameProblem(v) ?? (names.includes(v.trim()) ? { message: `Replaces the secret named "${v.trim()}".`, severity: vscode.InputBoxValidationSeverity.Warning } : undefined),
  });
  if (name === undefined) return undefined;
  const { secret, algorithm, digits, period } = parsed.value;
  await store.set(name, { secret, algorithm, digits, period });
  return name.trim();
}

async function removeInteractive(store: TotpSecretStore, names: string[]): Promise<void> {
  const name = await vscode.window.showQuickPick(
    names.map((n) => ({ label: inert`${n}`, name: n })),
    { title: 'Remove TOTP Secret', placeHolder: 'Pick the secret to remove' },
  );
  if (!name) return;
  const remove = 'Remove';
  const choice = await showModalWarning(inert`Remove the TOTP secret "${name.name}"?`, plain`Its codes can no longer be copied until you add it again.`, remove);
  if (choice !== remove) return;
  await store.remove(name.name);
  void showInfo(inert`Removed the TOTP secret "${name.name}".`);
}

async function copy(s: Services, store: TotpSecretStore, name: string): Promise<TotpCopied> {
  const secret = await store.get(name.trim());
  if (!secret) throw new ExtensionError('invalid_input', inert`No TOTP secret is named "${name}". Add it from Copy TOTP Code….`);
  const now = totpAt(secret.secret, secret, Date.now());
  await vscode.env.clipboard.writeText(now.code);
  showStatus(inert`$(check) Copied the TOTP code of ${name.trim()}: ${now.code}, valid ${now.seconds_left} s more`, Math.min(COPIED_MESSAGE_MS, now.seconds_left * 1000));
  s.log.info(`Copied the TOTP code of a stored secret (${now.seconds_left} s left).`);
  return { name: name.trim(), code: now.code, secondsLeft: now.seconds_left };
}
