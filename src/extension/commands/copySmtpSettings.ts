import * as path from 'node:path';
import * as vscode from 'vscode';
import { SMTP_TLS_CERT_FILE, SMTP_TLS_DIR } from '../../shared/contract';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { inert } from '../../core/inert';
import { showStatus } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copySmtpSettings.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** The settings an app under test needs to send mail into the local server; `tlsCertFile` when it offers STARTTLS. */
export function smtpSettingsText(host: string, port: number, domain: string, tlsCertFile?: string): string {
  return [
    `SMTP host: ${host}`,
    `SMTP port: ${port}`,
    tlsCertFile
      ? `Security: STARTTLS (self-signed certificate ${tlsCertFile}: trust that file, or turn off certificate verification in the app)`
      : 'Security: none (plain SMTP, no STARTTLS)',
    'Authentication: none (any user name and password are accepted)',
    `Recipients: any address @${domain} (the part before @ names the inbox)`,
    `SMTP_URL=smtp://${host}:${port}`,
  ].join('\n');
}

export async function run(s: Services): Promise<string | undefined> {
  if (!s.connection.isLocal) {
    throw new ExtensionError('not_supported', 'A hosted server receives mail on its own domains; SMTP settings are for the local server.');
  }
  await s.connection.ensure();
  const st = s.connection.state;
  if (st.kind !== 'ready' || !st.server.smtp) return undefined;
  const settings = s.settings();
  const certFile = settings.smtpTls && st.server.dataDir ? path.join(st.server.dataDir, SMTP_TLS_DIR, SMTP_TLS_CERT_FILE) : undefined;
  const text = smtpSettingsText(st.server.smtp.host, st.server.smtp.port, settings.localDomain, certFile);
  await vscode.env.clipboard.writeText(text);
  showStatus(inert`$(check) Copied SMTP settings (${st.server.smtp.host}:${st.server.smtp.port})`, 5000);
  return text;
}
