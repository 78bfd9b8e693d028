// Copy Verification Link and the marked link of the message view in a real extension host,
// against the embedded local server: from a message row, from an inbox (its newest message),
// from the palette with a message panel in front, and what the view confirmed it marked.
import * as assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { answering, clipboard, inboxNode, uniqueInbox, useLocalServer, waitForState } from './support/state';

const DOMAIN = DEFAULT_DOMAIN;
const VERIFY_URL = 'https://app.acme.test/email/verify?token=Zx81Qk&lang=de';

describe('Copy Verification Link', function () {
  this.timeout(60_000);
  let smtpPort: number;

  before(async () => {
    smtpPort = (await useLocalServer()).connection.smtp.port;
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  async function sendSignup(inbox: string): Promise<string> {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({
      from: 'Acme <no-reply@acme.test>',
      to: `${inbox}@${DOMAIN}`,
      subject: 'Bitte bestätige deine E-Mail-Adresse',
      headers: { 'List-Unsubscribe': '<https://acme.test/u/1>' },
      text: `Hallo! E-Mail bestätigen: ${VERIFY_URL}`,
      // A tracker first, the unsubscribe link, then the button: only the button is the verification link.
      html: `<p><a href="https://click.acme.test/ls/click?upn=abc">Unsere Angebote</a></p><p><a href="${VERIFY_URL.replace(/&/g, '&amp;')}">E-Mail-Adresse bestätigen</a></p><p><a href="https://acme.test/u/1">Abmelden</a></p>`,
    });
    const st = await waitForState((s) => (inboxNode(s.tree, DOMAIN, inbox)?.children?.length ?? 0) > 0, 'the mail in the tree');
    const row = inboxNode(st.tree, DOMAIN, inbox)!.children![0];
    const id = row.id.slice(`message:${DOMAIN}/${inbox}/`.length);
    assert.match(id, new RegExp(`^${inbox}-`));
    return id;
  }

  it('copies the link of a message row, and of the newest message of an inbox', async () => {
    const inbox = uniqueInbox('vl-row');
    const id = await sendSignup(inbox);
    await vscode.env.clipboard.writeText('before');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyVerificationLink', { domain: DOMAIN, inbox, id }), VERIFY_URL);
    assert.equal(await clipboard(), VERIFY_URL);
    await vscode.env.clipboard.writeText('before');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyVerificationLink', { domain: DOMAIN, inbox }), VERIFY_URL);
    assert.equal(await clipboard(), VERIFY_URL);
  });

  it('the message view marks the link, and from the palette the command copies the link of the panel in front', async () => {
    const inbox = uniqueInbox('vl-view');
    const id = await sendSignup(inbox);
    await vscode.commands.executeCommand('testInbox.openMessage', { domain: DOMAIN, inbox, id });
    const st = await waitForState((s) => s.messageView.lastRendered?.id === id, 'the rendered message');
    assert.equal(st.messageView.lastRendered?.verificationLink, VERIFY_URL);
    await vscode.env.clipboard.writeText('before');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyVerificationLink'), VERIFY_URL);
    assert.equal(await clipboard(), VERIFY_URL);
  });

  it('from the palette, Copy One-Time Code and Copy Verification Link both use the open message, and ask only when none is open', async () => {
    const inbox = uniqueInbox('vl-both');
    const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Verify', text: `Your code is 604219. Confirm: ${VERIFY_URL}` });
    // A newer message in another inbox: "the latest" would not be the open one.
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox: uniqueInbox('vl-other'), subject: 'Other', text: 'Your code is 111111.' });
    await vscode.commands.executeCommand('testInbox.openMessage', { domain: DOMAIN, inbox, id: r!.id });
    await waitForState((s) => s.messageView.lastRendered?.id === r!.id, 'the rendered message');
    // No picker is answered: a command that asked for an inbox would wait until the test times out.
    assert.equal(await vscode.commands.executeCommand('testInbox.copyCode'), '604219');
    assert.equal(await clipboard(), '604219');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyVerificationLink'), VERIFY_URL);
    // With no message open, it asks (closed here: nothing is copied).
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.env.clipboard.writeText('unchanged');
    assert.equal(await answering(vscode.commands.executeCommand('testInbox.copyCode'), 'close'), undefined);
    assert.equal(await clipboard(), 'unchanged');
  });

  it('says so as information, not as a failure, when the message has none, and leaves the clipboard alone', async () => {
    const inbox = uniqueInbox('vl-none');
    // A subject of its own: other suites of the run show messages about their own "Newsletter".
    const subject = `Newsletter ${inbox}`;
    const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject, text: 'Read more: https://news.acme.test/4 — unsubscribe: https://acme.test/unsubscribe?u=2' });
    await vscode.env.clipboard.writeText('unchanged');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyVerificationLink', { domain: DOMAIN, inbox, id: r!.id }), undefined);
    assert.equal(await clipboard(), 'unchanged');
    const st = await waitForState((s) => s.shown.some((x) => x.where === 'info' && x.text.includes(subject)), 'the information message');
    assert.match(st.shown.filter((x) => x.where === 'info' && x.text.includes(subject)).pop()!.text, new RegExp(`^No verification, sign-in or password reset link in "${subject}"`));
    assert.ok(!st.shown.some((x) => x.where === 'error' && x.text.includes(subject)), 'no error message');
  });
});
