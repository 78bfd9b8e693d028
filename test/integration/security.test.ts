// Security of the extension in a real extension host: hostile subjects never
// become links or icons where VS Code renders syntax but stay plain in the tree; a server URL
// set by the workspace gets nothing until the user confirms it; commands called with
// arguments still ask the user. Servers here are real: the embedded local server, and a
// recording HTTP server on a free port.
import * as assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { answering, debugState, findNode, messageLabels, setSetting, uniqueInbox, useLocalServer, waitForState } from './support/state';

const HOSTILE = 'Invoice [Open](command:workbench.action.terminal.new) $(alert) <https://evil.test/x>';
/** VS Code's link syntax in notifications and progress messages. */
const LINK = /\[[^\]]+\]\((?:https?:\/\/|command:|file:)[^)\s]+\)/i;

function assertInert(text: string, where: string): void {
  assert.doesNotMatch(text, LINK, `${where}: ${JSON.stringify(text)}`);
  assert.ok(!text.includes(']('), `${where} has no "](": ${JSON.stringify(text)}`);
  assert.ok(!text.includes('$('), `${where} has no "$(": ${JSON.stringify(text)}`);
  assert.ok(text.replaceAll('\u200B', '').includes(HOSTILE), `${where} still reads the subject as sent`);
}

describe('Test Inbox security', function () {
  this.timeout(90_000);

  describe('hostile subjects', () => {
    before(async () => {
      await useLocalServer();
    });
    after(async () => {
      await setSetting('notifyNewMail', undefined);
    });

    it('the new-mail notification shows the subject without a link, the tree shows it as sent', async () => {
      const inbox = uniqueInbox('sec-notify');
      await setSetting('notifyNewMail', true);
      await vscode.commands.executeCommand('testInbox.addInbox', { domain: DEFAULT_DOMAIN, inbox });
      await waitForState((s) => s.live[DEFAULT_DOMAIN] === 'stream:open' && findNode(s.tree, (n) => n.label === inbox) !== undefined, 'the added inbox and the open push stream');
      await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject: HOSTILE, text: 'no code here' });
      const st = await waitForState((s) => s.shown.some((m) => m.where === 'info' && m.text.includes(`New message in ${inbox}`)), 'the new-mail notification');
      assertInert(st.shown.find((m) => m.text.includes(`New message in ${inbox}`))!.text, 'notification');
      const tree = await waitForState((s) => messageLabels(s.tree, DEFAULT_DOMAIN, inbox).length > 0, 'the message in the tree');
      assert.deepEqual(messageLabels(tree.tree, DEFAULT_DOMAIN, inbox), [HOSTILE], 'plain text in the tree: no escaping visible');
    });

    it('no bidi control of a subject or a sender reaches the notification, the tree row or its screen-reader label; a very long subject is cut', async () => {
      const inbox = uniqueInbox('sec-bidi');
      await setSetting('notifyNewMail', true);
      await vscode.commands.executeCommand('testInbox.addInbox', { domain: DEFAULT_DOMAIN, inbox });
      await waitForState((s) => s.live[DEFAULT_DOMAIN] === 'stream:open' && findNode(s.tree, (n) => n.label === inbox) !== undefined, 'the added inbox and the open push stream');
      // U+202E: "gnp.exe" would read "exe.png", a sender written backwards would read "bank-finance".
      await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, from: '"\u202Eecnanif-knab" <x@evil.test>', subject: 'Invoice \u202Egnp.exe', text: 'no code' });
      const st = await waitForState((s) => s.shown.some((m) => m.where === 'info' && m.text.includes(`New message in ${inbox}`)), 'the new-mail notification');
      const bidi = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
      const notice = st.shown.find((m) => m.text.includes(`New message in ${inbox}`))!.text;
      assert.equal(notice, `New message in ${inbox}: Invoice gnp.exe`);
      for (const m of st.shown) assert.doesNotMatch(m.text, bidi, `shown ${m.where}: ${JSON.stringify(m.text)}`);
      const tree = await waitForState((s) => messageLabels(s.tree, DEFAULT_DOMAIN, inbox).length > 0, 'the message in the tree');
      const row = findNode(tree.tree, (n) => n.label === 'Invoice gnp.exe');
      assert.ok(row, JSON.stringify(messageLabels(tree.tree, DEFAULT_DOMAIN, inbox)));
      for (const text of [row.label, row.description, row.tooltip, row.accessibilityLabel]) assert.doesNotMatch(text ?? '', bidi, JSON.stringify(text));
      assert.match(row.accessibilityLabel ?? '', /email from ecnanif-knab, Invoice gnp\.exe/);
      const long = 'A very long subject, '.repeat(60);
      await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject: long, text: 'x' });
      const cut = await waitForState((s) => messageLabels(s.tree, DEFAULT_DOMAIN, inbox).length > 1, 'the long subject in the tree');
      const label = messageLabels(cut.tree, DEFAULT_DOMAIN, inbox).find((l) => l.startsWith('A very long subject'))!;
      assert.ok(label.endsWith('…') && label.length < 200, label);
      const told = await waitForState((s) => s.shown.some((m) => m.text.startsWith(`New message in ${inbox}: A very long`)), 'the long subject notified');
      assert.ok(told.shown.filter((m) => m.text.startsWith(`New message in ${inbox}: A very long`)).every((m) => m.text.endsWith('…') && m.text.length < 250));
    });

    it('Copy One-Time Code says "no code" without a link', async () => {
      const inbox = uniqueInbox('sec-copy');
      const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject: HOSTILE, text: 'nothing to copy' });
      assert.equal(await vscode.commands.executeCommand('testInbox.copyCode', { domain: DEFAULT_DOMAIN, inbox, id: r!.id }), undefined);
      const st = await waitForState((s) => s.shown.some((m) => m.where === 'error' && m.text.includes('No one-time code')), 'the error message');
      assertInert(st.shown.filter((m) => m.text.includes('No one-time code')).pop()!.text, 'Copy One-Time Code error');
    });

    it('Wait for Next Code reports a skipped message and the result without links', async () => {
      const inbox = uniqueInbox('sec-wait');
      const waiting = vscode.commands.executeCommand<string>('testInbox.waitForCode', { domain: DEFAULT_DOMAIN, inbox });
      await new Promise((r) => setTimeout(r, 1500));
      await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject: HOSTILE, text: 'no code' });
      const skipped = await waitForState((s) => s.shown.some((m) => m.where === 'progress' && m.text.includes('had no code')), 'the progress message');
      assertInert(skipped.shown.filter((m) => m.text.includes('had no code')).pop()!.text, 'progress');
      await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject: HOSTILE, text: 'Your verification code is 482913.' });
      assert.equal(await waiting, '482913');
      const st = await debugState();
      assertInert(st.shown.filter((m) => m.text.includes('Copied code 482913')).pop()!.text, 'Wait for Next Code result');
    });
  });

  describe('server URLs the user did not choose', () => {
    let recorder: http.Server;
    let url: string;
    const requests: string[] = [];

    before(async () => {
      recorder = http.createServer((req, res) => {
        requests.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"domains":[]}');
      });
      await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
    });
    after(async () => {
      await vscode.workspace.getConfiguration('testInbox').update('server', undefined, vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand('testInbox.clearApiToken');
      await useLocalServer();
      await new Promise<void>((r) => recorder.close(() => r()));
    });

    it('a server URL from the workspace settings is used only after the user confirms it, and no token is asked before', async () => {
      await vscode.workspace.getConfiguration('testInbox').update('server', url, vscode.ConfigurationTarget.Workspace);
      const st = await waitForState((s) => s.tokenKey === url && findNode(s.tree, (n) => n.contextValue === 'testInbox.error') !== undefined, 'the confirmation error node');
      const err = findNode(st.tree, (n) => n.contextValue === 'testInbox.error')!;
      assert.match(err.tooltip ?? err.label, /workspace settings chose this server/);
      assert.equal(err.command?.command, 'testInbox.confirmServer');
      assert.notEqual(st.viewState, 'noToken', 'the "Set API Token" welcome is not offered');

      // Set API Token asks about the URL first; "Do not use it" (the first item) asks for no token.
      assert.equal(await answering(vscode.commands.executeCommand('testInbox.setApiToken')), false);
      assert.deepEqual(requests, [], 'nothing reached the workspace-chosen server');

      assert.equal(await answering(vscode.commands.executeCommand('testInbox.confirmServer'), { next: 1 }), true);
      await waitForState((s) => s.viewState === 'noToken', 'the confirmed server, asking for its token');
      // Once confirmed, only whether anything answers there (so a missing token does not hide a
      // server that is down): a bare GET, no token, for there is none.
      assert.deepEqual(requests, ['GET / '], 'no token sent');
    });
  });

  describe('plain http to another machine', () => {
    after(async () => {
      await useLocalServer();
    });

    it('is not used until the user confirms it, and the message says the token would travel unencrypted', async () => {
      // TEST-NET-1 (RFC 5737): no host answers there, and nothing is sent before confirmation anyway.
      const remote = 'http://192.0.2.10:8080';
      await setSetting('server', remote);
      const st = await waitForState((s) => s.tokenKey === remote && findNode(s.tree, (n) => n.contextValue === 'testInbox.error') !== undefined, 'the confirmation error node');
      const err = findNode(st.tree, (n) => n.contextValue === 'testInbox.error')!;
      assert.match(err.tooltip ?? err.label, /unencrypted/);
      assert.equal(err.command?.command, 'testInbox.confirmServer');
      assert.equal(st.connection.kind, 'failed');
      assert.match(st.connection.error ?? '', /waits for you to confirm it/, 'refused before any connection attempt, not after a network error');
    });
  });

  describe('commands called with arguments ask the user', () => {
    it('Set API Token with a token argument stores nothing when the user cancels the box', async () => {
      const before = await useLocalServer();
      assert.equal(await answering(vscode.commands.executeCommand('testInbox.setApiToken', 'injected-token-123456'), 'close'), false);
      await vscode.commands.executeCommand('testInbox.refresh');
      await waitForState((s) => s.connection.kind === 'ready' && s.localPid === before.localPid, 'the same server, its token unchanged');
    });

    it('Switch Server with an argument changes nothing when the user cancels the picker', async () => {
      const before = vscode.workspace.getConfiguration('testInbox').inspect('server')?.globalValue;
      assert.equal(await answering(vscode.commands.executeCommand('testInbox.switchServer', 'https://elsewhere.example'), 'close'), undefined);
      assert.equal(vscode.workspace.getConfiguration('testInbox').inspect('server')?.globalValue, before);
    });
  });
});
