import * as vscode from 'vscode';
import { webhookUrls } from '../../api/webhooks';
import type { WebhookForm } from '../../api/types';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import * as setWebhookToken from './setWebhookToken';

export const id = 'testInbox.copyWebhookUrl';

interface Args {
  domain?: string;
  inbox?: string;
  form?: WebhookForm;
}

/** Copies one of the four webhook URL forms (docs/api.md); from an inbox node it names that inbox. */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const a = (typeof arg === 'object' && arg !== null ? arg : {}) as Args;
  const token = await s.connection.webhookToken();
  if (!token) {
    const set = 'Set Webhook Token';
    void vscode.window.showWarningMessage(`No webhook token is set for ${s.connection.describe()}. Set the webhook token from the team settings first.`, set).then((c) => {
      if (c === set) void vscode.commands.executeCommand(setWebhookToken.id);
    });
    return undefined;
  }
  await s.connection.ensure();
  const st = s.connection.state;
  const base = st.kind === 'ready' ? st.server.baseUrl : s.connection.tokenKey();
  const urls = webhookUrls(base, { token, domain: a.domain, inbox: typeof a.inbox === 'string' ? a.inbox : undefined });
  let chosen = a.form ? urls.find((u) => u.form === a.form) : undefined;
  if (a.form && !chosen) throw new ExtensionError('invalidInput', `The webhook form "${a.form}" needs ${a.form === 'namedDomain' ? 'a named domain' : 'an inbox'}.`);
  if (!chosen) {
    const picked = await vscode.window.showQuickPick(
      urls.map((u) => ({ label: u.label, detail: u.url.replace(encodeURIComponent(token), '<webhook token>'), u })),
      { title: 'Copy Webhook URL', placeHolder: a.inbox ? `Webhook URL forms for inbox ${a.inbox}` : 'Pick a webhook URL form' },
    );
    chosen = picked?.u;
  }
  if (!chosen) return undefined;
  await vscode.env.clipboard.writeText(chosen.url);
  void vscode.window.showInformationMessage(`Copied the webhook URL (${chosen.label}). It contains the webhook token.`);
  return chosen.url;
}
