import * as vscode from 'vscode';
import { LOCAL_TWILIO_ACCOUNT_SID } from '../../shared/contract';
import { inert } from '../../core/inert';
import { COMMANDS } from '../commandIds';
import { ExtensionError } from '../errors';
import { PROVIDERS, type ProviderId, providerSettingsText } from '../../shared/providerSettings';
import type { Services } from '../services';
import { showStatus } from '../ui/shown';

export const id = COMMANDS.copyProviderSettings.id;

/**
 * Copies what an app needs to send through one provider's SDK into the local server: the
 * base-URL setting and the key in `.env` form, and the one line of SDK configuration
 * (providerSettings.ts). The provider is picked, or given as the argument (its id).
 */
export async function run(s: Services, provider?: unknown): Promise<string | undefined> {
  if (!s.connection.isLocal) {
    throw new ExtensionError('not_supported', 'A hosted server has no provider APIs; provider settings are for the local server.');
  }
  let choice = PROVIDERS.find((p) => p.id === provider)?.id;
  if (!choice) {
    const picked = await vscode.window.showQuickPick(
      PROVIDERS.map((p) => ({ label: p.label, description: p.sdk, id: p.id })),
      { title: 'Copy Provider Settings', placeHolder: 'The API your app sends through' },
    );
    if (!picked) return undefined;
    choice = picked.id;
  }
  await s.connection.ensure();
  const st = s.connection.state;
  if (st.kind !== 'ready') return undefined;
  const text = await settingsFor(s, choice, st.server.baseUrl);
  await vscode.env.clipboard.writeText(text);
  showStatus(inert`$(check) Copied ${PROVIDERS.find((p) => p.id === choice)!.label} settings (${st.server.baseUrl})`, 5000);
  return text;
}

async function settingsFor(s: Services, choice: ProviderId, baseUrl: string): Promise<string> {
  const domain = s.settings().localDomain;
  if (choice === 'twilio') {
    const token = await s.connection.twilioAuthToken();
    if (!token) throw new ExtensionError('not_supported', 'The Twilio auth token of this server is not known: it was started elsewhere without one in its data folder. Start it from VS Code, or pass --twilio-auth-token.');
    return providerSettingsText('twilio', { baseUrl, domain, twilioAccountSid: LOCAL_TWILIO_ACCOUNT_SID, twilioAuthToken: token });
  }
  const providerKey = await s.connection.providerKey();
  if (!providerKey) throw new ExtensionError('not_supported', 'The provider key of this server is not known: it was started elsewhere without one in its data folder. Start it from VS Code, or pass --provider-key.');
  return providerSettingsText(choice, { baseUrl, domain, providerKey });
}
