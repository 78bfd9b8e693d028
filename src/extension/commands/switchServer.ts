import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { trustReasons } from '../config/serverTrust';
import { LOCAL_SERVER, normalizeBaseUrl, serverUrlProblem, SETTINGS_SECTION, SettingKey } from '../config/settings';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { askToUseServer } from '../ui/confirmServer';
import { COMMANDS, commandTitle } from '../commandIds';

export const id = COMMANDS.switchServer.id;

/** The hosted service offered in the picker. */
export const HOSTED_URL = 'https://api.mailinator.com';

/**
 * Sets `testInbox.server` in the user settings, always through the picker: a string argument
 * (a command call) is only offered as its first item, for the user to accept. Plain http to
 * another machine is used only after the user confirms it.
 */
export async function run(s: Services, proposed?: unknown): Promise<string | undefined> {
  const current = s.settings().server;
  const items: Array<vscode.QuickPickItem & { value?: string }> = [
    { label: '$(server-process) Local server', description: current.kind === 'local' ? 'current' : undefined, detail: 'The embedded server on this machine (SMTP + HTTP API)', value: LOCAL_SERVER },
    { label: '$(cloud) Mailinator', description: current.kind === 'remote' && current.baseUrl === HOSTED_URL ? 'current' : undefined, detail: HOSTED_URL, value: HOSTED_URL },
    { label: '$(link) Other server…', detail: 'Any server speaking the same API' },
  ];
  if (typeof proposed === 'string') {
    const problem = proposed === LOCAL_SERVER ? undefined : serverUrlProblem(proposed);
    if (problem) throw new ExtensionError('invalid_input', `${problem}.`);
    const value = proposed === LOCAL_SERVER ? LOCAL_SERVER : normalizeBaseUrl(proposed)!;
    items.unshift({ label: inert`$(arrow-right) ${value === LOCAL_SERVER ? 'Local server' : value}`, description: 'proposed by a command call', value });
  }
  const picked = await vscode.window.showQuickPick(items, { title: commandTitle('switchServer') });
  if (!picked) return undefined;
  let target = picked.value;
  if (target === undefined) {
    target = await vscode.window.showInputBox({
      title: 'Server base URL',
      placeHolder: 'https://inbox.example.com',
      validateInput: (v) => serverUrlProblem(v),
    });
    if (target === undefined) return undefined;
  }
  if (target !== LOCAL_SERVER) {
    const url = normalizeBaseUrl(target);
    if (!url) throw new ExtensionError('invalid_input', `${serverUrlProblem(target) ?? 'not a server URL'}.`);
    target = url;
    const reasons = trustReasons({ kind: 'remote', baseUrl: url });
    if (reasons.length > 0) {
      if (!(await askToUseServer(url, reasons))) return undefined;
      await s.connection.confirmServer(url, reasons);
    }
  }
  await vscode.workspace.getConfiguration(SETTINGS_SECTION).update(SettingKey.server, target, vscode.ConfigurationTarget.Global);
  s.log.info(`Server switched to ${target}.`);
  return target;
}
