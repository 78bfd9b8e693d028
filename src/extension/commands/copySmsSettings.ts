import * as vscode from 'vscode';
import { LOCAL_TWILIO_ACCOUNT_SID } from '../../shared/contract';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { inert } from '../../core/inert';
import { showStatus } from '../ui/shown';
import { TWILIO_NODE_CLIENT } from '../../shared/providerSettings';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copySmsSettings.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/**
 * What an app needs to send SMS into the local server through a Twilio SDK, in `.env` form:
 * the base URL, an Account SID and the Twilio auth token — never the API token, which reads all mail.
 */
export function smsSettingsText(baseUrl: string, accountSid: string, twilioAuthToken: string): string {
  return [
    '# Test Inbox: SMS and Verify through the Twilio-compatible API (point your Twilio client at TWILIO_API_BASE_URL)',
    `TWILIO_API_BASE_URL=${baseUrl}`,
    `TWILIO_ACCOUNT_SID=${accountSid}`,
    `TWILIO_AUTH_TOKEN=${twilioAuthToken}`,
    `# Node: ${TWILIO_NODE_CLIENT}`,
    '',
  ].join('\n');
}

export async function run(s: Services): Promise<string | undefined> {
  if (!s.connection.isLocal) {
    throw new ExtensionError('not_supported', 'A hosted server has no Twilio-compatible API; SMS settings are for the local server.');
  }
  await s.connection.ensure();
  const st = s.connection.state;
  if (st.kind !== 'ready') return undefined;
  const token = await s.connection.twilioAuthToken();
  if (!token) {
    throw new ExtensionError('not_supported', 'The Twilio auth token of this server is not known: it was started elsewhere without one in its data folder. Start it from VS Code, or pass --twilio-auth-token.');
  }
  const text = smsSettingsText(st.server.baseUrl, LOCAL_TWILIO_ACCOUNT_SID, token);
  await vscode.env.clipboard.writeText(text);
  showStatus(inert`$(check) Copied SMS settings (${st.server.baseUrl})`, 5000);
  return text;
}
