import * as vscode from 'vscode';
import { LOCAL_SERVER, normalizeBaseUrl, SETTINGS_SECTION, SettingKey } from '../config/settings';
import { ExtensionError } from '../errors';
import type { Services } from '../services';

export const id = 'testInbox.switchServer';

/** The hosted service offered in the picker. */
export const HOSTED_URL = 'https://api.mailinator.com';

/** Sets `testInbox.server` (user settings); a string argument skips the picker. */
export async function run(s: Services, value?: unknown): Promise<string | undefined> {
  let target = typeof value === 'string' ? value : undefined;
  if (target === undefined) {
    const current = s.settings().server;
    const items: Array<vscode.QuickPickItem & { value?: string }> = [
      { label: '$(server-process) Local server', description: current.kind === 'local' ? 'current' : undefined, detail: 'The embedded server on this machine (SMTP + HTTP API)', value: LOCAL_SERVER },
      { label: '$(cloud) Mailinator', description: current.kind === 'remote' && current.baseUrl === HOSTED_URL ? 'current' : undefined, detail: HOSTED_URL, value: HOSTED_URL },
      { label: '$(link) Other server…', detail: 'Any server speaking the same API' },
    ];
    const picked = await vscode.window.showQuickPick(items, { title: 'Switch Server' });
    if (!picked) return undefined;
    target = picked.value;
    if (target === undefined) {
      target = await vscode.window.showInputBox({
        title: 'Server base URL',
        placeHolder: 'https://inbox.example.com',
        validateInput: (v) => (normalizeBaseUrl(v) ? undefined : 'Enter an http:// or https:// URL.'),
      });
      if (target === undefined) return undefined;
    }
  }
  if (target !== LOCAL_SERVER) {
    const url = normalizeBaseUrl(target);
    if (!url) throw new ExtensionError('invalidInput', `"${target}" is neither "local" nor an http(s) URL.`);
    target = url;
  }
  await vscode.workspace.getConfiguration(SETTINGS_SECTION).update(SettingKey.server, target, vscode.ConfigurationTarget.Global);
  s.log.info(`Server switched to ${target}.`);
  return target;
}
