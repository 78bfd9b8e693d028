import * as vscode from 'vscode';
import { ExtensionError } from '../errors';
import type { Services } from '../services';

export const id = 'testInbox.copySmtpSettings';

/** The settings an app under test needs to send mail into the local server. */
export function smtpSettingsText(host: string, port: number, domain: string): string {
  return [
    `SMTP host: ${host}`,
    `SMTP port: ${port}`,
    'Security: none (plain SMTP, no STARTTLS)',
    'Authentication: none',
    `Recipients: any address @${domain} (the part before @ names the inbox)`,
    `SMTP_URL=smtp://${host}:${port}`,
  ].join('\n');
}

export async function run(s: Services): Promise<string | undefined> {
  if (!s.connection.isLocal) {
    throw new ExtensionError('notSupported', 'A hosted server receives mail on its own domains; SMTP settings are for the local server.');
  }
  await s.connection.ensure();
  const st = s.connection.state;
  if (st.kind !== 'ready' || !st.server.smtp) return undefined;
  const text = smtpSettingsText(st.server.smtp.host, st.server.smtp.port, s.settings().localDomain);
  await vscode.env.clipboard.writeText(text);
  void vscode.window.setStatusBarMessage(`$(check) Copied SMTP settings (${st.server.smtp.host}:${st.server.smtp.port})`, 5000);
  return text;
}
