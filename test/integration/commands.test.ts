// Every Test Inbox command in a real extension host against the embedded local server,
// with the clipboard checked where a command copies.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { COMMAND_IDS } from '../../src/extension/commands';
import { answering, clipboard, inboxNode, messageLabels, uniqueInbox, useLocalServer, waitForState } from './support/state';

/** The local server's default domain, which the extension's local.domain setting defaults to. */
const DOMAIN = DEFAULT_DOMAIN;

describe('Test Inbox commands', function () {
  this.timeout(60_000);
  let baseUrl: string;
  let smtpPort: number;

  before(async () => {
    const st = await useLocalServer();
    baseUrl = st.connection.baseUrl;
    smtpPort = st.connection.smtp.port;
  });

  it('contributes every command with the "Test Inbox" category and hides node-only ones from the palette', async () => {
    const pkg = vscode.extensions.getExtension('test-inbox.test-inbox')!.packageJSON as {
      contributes: { commands: Array<{ command: string; category: string; icon?: string }>; menus: { commandPalette: Array<{ command: string; when: string }> } };
    };
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const c of pkg.contributes.commands) {
      assert.ok(registered.has(c.command), `${c.command} is registered`);
      assert.equal(c.category, 'Test Inbox');
      assert.match(c.icon ?? '', /^\$\([a-z-]+\)$/, `${c.command} has a codicon`);
    }
    const hidden = pkg.contributes.menus.commandPalette.filter((m) => m.when === 'false').map((m) => m.command);
    assert.ok(hidden.includes('testInbox._loadMore'));
    // A test hook: registered in this test host (ExtensionMode.Test), never contributed.
    assert.ok(registered.has('testInbox._debugState') && !pkg.contributes.commands.some((c) => c.command === 'testInbox._debugState'));
  });

  it('registers a command module for every contributed command and contributes every registered one', async () => {
    const pkg = vscode.extensions.getExtension('test-inbox.test-inbox')!.packageJSON as { contributes: { commands: Array<{ command: string }> } };
    assert.deepEqual([...COMMAND_IDS].sort(), pkg.contributes.commands.map((c) => c.command).sort());
    assert.equal(new Set(COMMAND_IDS).size, COMMAND_IDS.length, 'no id registered twice');
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of COMMAND_IDS) assert.ok(registered.has(id), `${id} is registered`);
  });

  it('Inject Test Message returns the id and the message lands in the tree', async () => {
    const inbox = uniqueInbox('cmd-inject');
    const r = await vscode.commands.executeCommand<{ id: string; inbox: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, from: 'QA <qa@example.test>', subject: 'Hello', text: 'Code 314159' });
    assert.equal(r?.inbox, inbox);
    const st = await waitForState((s) => messageLabels(s.tree, DOMAIN, inbox).includes('Hello'), 'the injected message');
    assert.match(inboxNode(st.tree, DOMAIN, inbox)!.children![0].description ?? '', /^● QA · /);
  });

  it('Copy One-Time Code copies the code of a message, and of the latest message of an inbox', async () => {
    const inbox = uniqueInbox('cmd-code');
    const older = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Login', text: 'Your verification code is 551177.' });
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Login again', text: 'Your verification code is 662288.' });
    const fromMessage = await vscode.commands.executeCommand<string>('testInbox.copyCode', { domain: DOMAIN, inbox, id: older!.id });
    assert.equal(fromMessage, '551177');
    assert.equal(await clipboard(), '551177');
    const latest = await vscode.commands.executeCommand<string>('testInbox.copyCode', { domain: DOMAIN, inbox });
    assert.equal(latest, '662288');
    assert.equal(await clipboard(), '662288');
  });

  it('Copy One-Time Code leaves the clipboard alone when the message has no code', async () => {
    const inbox = uniqueInbox('cmd-nocode');
    await vscode.env.clipboard.writeText('unchanged');
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Newsletter', text: 'Nothing to see here.' });
    const r = await vscode.commands.executeCommand('testInbox.copyCode', { domain: DOMAIN, inbox });
    assert.equal(r, undefined);
    assert.equal(await clipboard(), 'unchanged');
  });

  it('Wait for Next Code copies the code of the next message that arrives', async () => {
    const inbox = uniqueInbox('cmd-wait');
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'old', text: 'Your code is 000111' });
    const waiting = vscode.commands.executeCommand<string>('testInbox.waitForCode', { domain: DOMAIN, inbox });
    // Give the command time to read the inbox as it is now, then send the next code.
    await new Promise((r) => setTimeout(r, 1500));
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Your sign-in code', text: 'Use 739104 to sign in.' });
    assert.equal(await waiting, '739104');
    assert.equal(await clipboard(), '739104');
  });

  it('Copy Message Id copies the id', async () => {
    const inbox = uniqueInbox('cmd-id');
    const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'x', text: 'y' });
    const id = await vscode.commands.executeCommand<string>('testInbox.copyMessageId', { domain: DOMAIN, inbox, id: r!.id });
    assert.equal(id, r!.id);
    assert.equal(await clipboard(), r!.id);
  });

  it('Copy Webhook URL copies the chosen form naming the inbox, and a delivery to it lands in the tree', async () => {
    const inbox = uniqueInbox('cmd-hook');
    const url = await vscode.commands.executeCommand<string>('testInbox.copyWebhookUrl', { domain: DOMAIN, inbox, form: 'privateInboxQuery' });
    assert.ok(url);
    assert.equal(await clipboard(), url);
    assert.ok(url.startsWith(`${baseUrl}/api/v2/domains/private/webhook/${inbox}?whtoken=`), url);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: 'twilio', subject: 'SMS relay', text: 'Code 4455' }) });
    assert.equal(res.status, 200);
    await waitForState((s) => messageLabels(s.tree, DOMAIN, inbox).includes('SMS relay'), 'the webhook message');
    const inPath = await vscode.commands.executeCommand<string>('testInbox.copyWebhookUrl', { domain: DOMAIN, inbox, form: 'tokenInPath' });
    assert.match(inPath ?? '', new RegExp(`/api/v2/domains/[^/]+/webhook/${inbox}/$`));
  });

  it('Copy SMTP Settings copies the local host and port', async () => {
    const text = await vscode.commands.executeCommand<string>('testInbox.copySmtpSettings');
    assert.equal(await clipboard(), text);
    assert.match(text ?? '', new RegExp(`SMTP port: ${smtpPort}\\b`));
    assert.match(text ?? '', /SMTP host: 127\.0\.0\.1/);
  });

  it('Export as .eml writes the RFC 5322 source', async () => {
    const inbox = uniqueInbox('cmd-eml');
    const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Exported subject', text: 'body text' });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-eml-'));
    try {
      const target = path.join(dir, 'out.eml');
      // The target is only proposed: the save dialog shows it and the user accepts.
      const written = await answering(vscode.commands.executeCommand<string>('testInbox.exportEml', { domain: DOMAIN, inbox, id: r!.id, target }));
      assert.equal(written, target);
      const eml = await fs.readFile(target, 'utf8');
      assert.match(eml, /^Subject: Exported subject\r?$/m);
      assert.match(eml, /body text/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('Delete Message removes it from the server and the tree', async () => {
    const inbox = uniqueInbox('cmd-del');
    const keep = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'keep', text: 'k' });
    const gone = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'delete me', text: 'd' });
    await waitForState((s) => messageLabels(s.tree, DOMAIN, inbox).length === 2, 'two messages');
    assert.equal(await vscode.commands.executeCommand('testInbox.deleteMessage', { domain: DOMAIN, inbox, id: gone!.id }), gone!.id);
    const st = await waitForState((s) => messageLabels(s.tree, DOMAIN, inbox).length === 1, 'one message left');
    assert.deepEqual(messageLabels(st.tree, DOMAIN, inbox), ['keep']);
    assert.ok(keep);
  });

  it('Clear Inbox deletes every message of the inbox', async () => {
    const inbox = uniqueInbox('cmd-clear');
    await vscode.commands.executeCommand('testInbox.addInbox', { domain: DOMAIN, inbox });
    for (const subject of ['a', 'b', 'c']) await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox, subject, text: 't' });
    const count = await vscode.commands.executeCommand<number>('testInbox.clearInbox', { domain: DOMAIN, inbox, confirm: false });
    assert.equal(count, 3);
    const st = await waitForState((s) => inboxNode(s.tree, DOMAIN, inbox)?.children?.[0]?.contextValue === 'testInbox.empty', 'the cleared inbox');
    assert.deepEqual(messageLabels(st.tree, DOMAIN, inbox), []);
    await vscode.commands.executeCommand('testInbox.removeInbox', { domain: DOMAIN, inbox });
  });

  it('Open Message shows it in the message view and marks it read', async () => {
    const inbox = uniqueInbox('cmd-open');
    const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Open me', text: 'Your code is 808080' });
    await waitForState((s) => inboxNode(s.tree, DOMAIN, inbox)?.children?.[0]?.unread === true, 'the unread message');
    await vscode.commands.executeCommand('testInbox.openMessage', { domain: DOMAIN, inbox, id: r!.id });
    const st = await waitForState((s) => s.messageView.lastRendered?.id === r!.id, 'the message view to render the message');
    assert.equal(st.messageView.lastRendered?.code, '808080');
    assert.notEqual(inboxNode(st.tree, DOMAIN, inbox)!.children![0].unread, true, 'opened mail is read');
    const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('testInbox.message'));
    assert.ok(tab, 'a message view tab is open');
  });

  it('Stop and Start Local Server stop the process and bring the tree back', async () => {
    assert.equal(await vscode.commands.executeCommand('testInbox.stopLocalServer'), 'stopped');
    let st = await waitForState((s) => s.viewState === 'stopped', 'the stopped state');
    assert.equal(st.connection.kind, 'stopped');
    assert.deepEqual(st.tree.map((n) => [n.label, n.command?.command]), [['Start Local Server', 'testInbox.startLocalServer'], ['Show Log', 'testInbox.showLog']], 'the fixes of the "stopped" state, as rows under its message');
    const message = ((st as { viewMessage?: string }).viewMessage ?? '').replace(/\u200b/g, '');
    assert.ok(message.endsWith('is stopped.'), message);
    const started = await vscode.commands.executeCommand<{ http: string; smtp: string }>('testInbox.startLocalServer');
    assert.match(started?.http ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    st = await waitForState((s) => s.connection.kind === 'ready' && s.tree.length > 0, 'the restarted server');
    assert.ok(st.localPid);
    const again = await useLocalServer();
    baseUrl = again.connection.baseUrl;
    smtpPort = again.connection.smtp.port;
  });

  it('Refresh, Show Log and Switch Server run without error', async () => {
    await vscode.commands.executeCommand('testInbox.refresh');
    await vscode.commands.executeCommand('testInbox.showLog');
    assert.equal(await answering(vscode.commands.executeCommand('testInbox.switchServer', 'local')), 'local');
    await waitForState((s) => s.connection.kind === 'ready', 'still connected');
  });

  it('the status bar menu opens a quick pick and closes quietly', async () => {
    const shown = vscode.commands.executeCommand('testInbox.showMenu');
    await new Promise((r) => setTimeout(r, 500));
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.equal(await shown, undefined);
  });
});
