// The Test Inbox tree in a real extension host: contents after an inject and after an SMTP
// delivery, live updates without a click, the badge, paging, added inboxes and empty states.
import * as assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { debugState, inboxNode, messageLabels, uniqueInbox, useLocalServer, waitForState } from './support/state';

/** The local server's default domain, which the extension's local.domain setting defaults to. */
const DOMAIN = DEFAULT_DOMAIN;

describe('Test Inbox tree', function () {
  this.timeout(60_000);
  let smtp: { host: string; port: number };

  before(async () => {
    await vscode.commands.executeCommand('testInbox.refresh');
    const st = await useLocalServer();
    smtp = st.connection.smtp;
  });

  it('shows an injected message under its domain and inbox, newest first', async () => {
    const inbox = uniqueInbox('tree-inject');
    const first = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Older', text: 'one' });
    const second = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: 'Newer', text: 'two' });
    assert.ok(first?.id.startsWith(`${inbox}-`) && second?.id.startsWith(`${inbox}-`));
    const st = await waitForState((s) => messageLabels(s.tree, DOMAIN, inbox).length === 2, `two messages in ${inbox}`);
    assert.deepEqual(messageLabels(st.tree, DOMAIN, inbox), ['Newer', 'Older']);
    const domainNode = st.tree.find((n) => n.id === `domain:${DOMAIN}`);
    assert.ok(domainNode, 'the local default domain is a root node');
    assert.equal(domainNode.icon, 'globe');
    const msg = inboxNode(st.tree, DOMAIN, inbox)!.children![0];
    assert.equal(msg.contextValue, 'testInbox.message');
    assert.match(msg.description ?? '', /· just now$/);
    assert.equal(msg.command?.command, 'testInbox.openMessage');
    assert.ok(msg.accessibilityLabel && msg.accessibilityLabel.includes('Newer'));
  });

  it('shows mail delivered over SMTP without a refresh, and counts it in the badge', async () => {
    const inbox = uniqueInbox('tree-smtp');
    // Load the tree once so the delivery has to arrive by live update.
    await waitForState((s) => s.viewState === 'ready' || s.tree.length > 0, 'a loaded tree');
    const before = await debugState();
    const transport = nodemailer.createTransport({ host: smtp.host, port: smtp.port, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'Shop <orders@shop.test>', to: `${inbox}@${DOMAIN}`, subject: 'Order confirmed', text: 'Thanks! Your code: 918273' });
    transport.close();
    const st = await waitForState((s) => messageLabels(s.tree, DOMAIN, inbox).includes('Order confirmed'), `the SMTP message in ${inbox}`);
    const node = inboxNode(st.tree, DOMAIN, inbox)!;
    assert.equal(node.label, inbox);
    const msg = node.children!.find((n) => n.label === 'Order confirmed')!;
    assert.equal(msg.unread, true, 'new mail is unread');
    assert.match(msg.description ?? '', /^● Shop · /);
    assert.ok(st.badge > before.badge || st.badge >= 1, 'the badge counts unread mail');
  });

  it('keeps an added inbox with an empty-state node, and removes it again', async () => {
    const inbox = uniqueInbox('tree-added');
    await vscode.commands.executeCommand('testInbox.addInbox', { domain: DOMAIN, inbox });
    let st = await waitForState((s) => inboxNode(s.tree, DOMAIN, inbox) !== undefined, `added inbox ${inbox}`);
    const node = inboxNode(st.tree, DOMAIN, inbox)!;
    assert.equal(node.contextValue, 'testInbox.inbox.added');
    assert.equal(node.children?.[0].contextValue, 'testInbox.empty');
    assert.match(node.children?.[0].tooltip ?? '', new RegExp(`${inbox}@${DOMAIN.replace('.', '\\.')} \\(SMTP 127\\.0\\.0\\.1:${smtp.port}\\)`));
    await vscode.commands.executeCommand('testInbox.removeInbox', { domain: DOMAIN, inbox });
    st = await waitForState((s) => inboxNode(s.tree, DOMAIN, inbox) === undefined, `removed inbox ${inbox}`);
    assert.equal(inboxNode(st.tree, DOMAIN, inbox), undefined);
  });

  it('shows the domain of an inbox added under a domain without mail', async () => {
    const inbox = uniqueInbox('tree-other');
    await vscode.commands.executeCommand('testInbox.addInbox', { domain: 'other.test', inbox });
    const st = await waitForState((s) => inboxNode(s.tree, 'other.test', inbox) !== undefined, `inbox ${inbox} under other.test`);
    assert.ok(st.tree.some((n) => n.id === 'domain:other.test'));
    await vscode.commands.executeCommand('testInbox.removeInbox', { domain: 'other.test', inbox });
  });

  it('refuses a bad inbox name without adding anything', async () => {
    const result = await vscode.commands.executeCommand('testInbox.addInbox', { domain: DOMAIN, inbox: '../etc' });
    assert.equal(result, undefined);
    const st = await debugState();
    assert.ok(!JSON.stringify(st.mementos.global).includes('../etc'));
  });

  it('pages a long inbox with "Load more…"', async () => {
    const inbox = uniqueInbox('tree-page');
    for (let i = 0; i < 27; i++) await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox, subject: `m${i}`, text: 'x' });
    await vscode.commands.executeCommand('testInbox.refresh');
    let st = await waitForState((s) => (inboxNode(s.tree, DOMAIN, inbox)?.children?.length ?? 0) > 0, `first page of ${inbox}`);
    const kids = inboxNode(st.tree, DOMAIN, inbox)!.children!;
    assert.equal(kids.filter((n) => n.contextValue === 'testInbox.message').length, 25);
    const more = kids[kids.length - 1];
    assert.equal(more.contextValue, 'testInbox.loadMore');
    await vscode.commands.executeCommand(more.command!.command, { kind: 'loadMore', domain: DOMAIN, inbox });
    st = await debugState();
    assert.equal(messageLabels(st.tree, DOMAIN, inbox).length, 27);
    assert.equal(messageLabels(st.tree, DOMAIN, inbox)[0], 'm26');
  });
});
