// The testInbox.local.smtpTls setting in a real extension host: the extension restarts its
// local server with STARTTLS, Copy SMTP Settings names the certificate to trust, and an app
// that requires TLS (nodemailer requireTLS, verifying that certificate) delivers into the tree.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import nodemailer from 'nodemailer';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { messageLabels, setSetting, uniqueInbox, useLocalServer, waitForState } from './support/state';

describe('SMTP TLS setting', function () {
  this.timeout(90_000);

  after(async () => {
    await setSetting('local.smtpTls', undefined);
  });

  it('restarts the local server with STARTTLS; Copy SMTP Settings names the certificate; a requireTLS sender delivers', async () => {
    const plain = await useLocalServer();
    const plainPort = plain.connection.smtp.port;
    const before = (await vscode.commands.executeCommand<string>('testInbox.copySmtpSettings')) ?? '';
    assert.match(before, /Security: none/);

    await setSetting('local.smtpTls', true);
    const st = await waitForState((s) => s.connection.kind === 'ready' && s.connection.smtp !== undefined && s.connection.smtp.port !== plainPort, 'the local server restarted with STARTTLS');
    const port = st.connection.smtp!.port;
    const text = (await vscode.commands.executeCommand<string>('testInbox.copySmtpSettings')) ?? '';
    const certFile = /Security: STARTTLS \(self-signed certificate (\S+\.pem):/.exec(text)?.[1];
    assert.ok(certFile, text);
    const ca = await fs.readFile(certFile, 'utf8');

    const inbox = uniqueInbox('tls');
    const sent = await nodemailer
      .createTransport({ host: '127.0.0.1', port, requireTLS: true, tls: { ca } })
      .sendMail({ from: 'app@example.test', to: `${inbox}@${DEFAULT_DOMAIN}`, subject: 'Sent over STARTTLS', text: 'Your code is 246810.' });
    assert.match(sent.response, /^250 /);
    await waitForState((s) => messageLabels(s.tree, DEFAULT_DOMAIN, inbox).includes('Sent over STARTTLS'), 'the message sent over STARTTLS');
  });
});
