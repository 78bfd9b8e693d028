// Tokens in a real extension host: set with the commands, kept in SecretStorage only (never
// in settings or mementos), a change refreshes the tree. The "hosted" server is a real
// local inbox server started by this suite on a free port with known tokens.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { answering, clipboard, debugState, findNode, setSetting, useLocalServer, waitForState } from './support/state';

const API_TOKEN = 'it-hosted-api-7c1e5a9d3b';
const WEBHOOK_TOKEN = 'it-hosted-wh-2f8b6d0e4a';

describe('Test Inbox tokens', function () {
  this.timeout(60_000);
  let dir: string;
  let hosted: InboxServer;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-hosted-'));
    hosted = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, defaultDomain: 'hosted.test' });
    await setSetting('server', hosted.httpUrl);
  });

  after(async () => {
    await vscode.commands.executeCommand('testInbox.clearApiToken');
    await vscode.commands.executeCommand('testInbox.clearWebhookToken');
    await useLocalServer();
    await hosted.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('shows the "no token" welcome state for a hosted server without a token', async () => {
    await vscode.commands.executeCommand('testInbox.clearApiToken');
    const st = await waitForState((s) => s.viewState === 'noToken', 'the noToken state');
    assert.equal(st.tokenKey, hosted.httpUrl);
    assert.deepEqual(st.tree.map((n) => [n.label, n.command?.command]), [['Set API Token', 'testInbox.setApiToken'], ['Switch Server', 'testInbox.switchServer']], 'the fixes, as rows under the message');
  });

  it('turns a wrong token into an error node with "Set API Token"', async () => {
    assert.equal(await answering(vscode.commands.executeCommand('testInbox.setApiToken', 'wrong-token-123456')), true);
    const st = await waitForState((s) => findNode(s.tree, (n) => n.contextValue === 'testInbox.error') !== undefined, 'an error node');
    const err = findNode(st.tree, (n) => n.contextValue === 'testInbox.error')!;
    assert.equal(err.command?.command, 'testInbox.setApiToken');
    assert.match(err.label, /token/i);
  });

  it('says a refused token is refused (not "saved"), and the view\'s message gives the URL and the reason in full', async () => {
    const before = (await debugState()).shown.at(-1)?.n ?? 0;
    assert.equal(await answering(vscode.commands.executeCommand('testInbox.setApiToken', 'refused-token-987654')), true);
    const st = (await waitForState((s) => s.connection.kind === 'failed', 'the refused token')) as Awaited<ReturnType<typeof debugState>> & { viewMessage?: string };
    const shown = st.shown.filter((m) => m.n > before).map((m) => ({ ...m, text: m.text.replace(/\u200b/g, '') }));
    assert.ok(shown.some((m) => m.where === 'warning' && m.text.startsWith(`The API token was saved, but ${hosted.httpUrl} refused it`)), JSON.stringify(shown));
    assert.ok(!shown.some((m) => m.text.includes('API token saved')), 'no "saved" as if all were well');
    assert.ok(st.viewMessage?.startsWith(`${hosted.httpUrl}: `), st.viewMessage);
    assert.match(st.viewMessage ?? '', /token/i);
  });

  it('lists the hosted inboxes once the right token is set, and keeps it only in SecretStorage', async () => {
    const r = await fetch(`${hosted.httpUrl}/api/v2/domains/private/inboxes/hosted-inbox`, {
      method: 'POST',
      headers: { authorization: API_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'svc@hosted.test', subject: 'From the hosted side', text: 'hi' }),
    });
    assert.equal(r.status, 200);
    assert.equal(await answering(vscode.commands.executeCommand('testInbox.setApiToken', API_TOKEN)), true);
    const st = await waitForState((s) => findNode(s.tree, (n) => n.label === 'From the hosted side') !== undefined, 'the hosted message');
    // A Test Inbox server at a remote URL proved it takes the token: its own domain, not `private`.
    assert.deepEqual(st.tree.map((n) => n.label), ['hosted.test']);
    assert.equal(st.connection.kind, 'ready');
    assert.equal(st.connection.baseUrl, hosted.httpUrl);

    const everywhereElse = JSON.stringify({
      settings: vscode.workspace.getConfiguration('testInbox'),
      inspect: ['server', 'domains', 'local.dataFolder'].map((k) => vscode.workspace.getConfiguration('testInbox').inspect(k)),
      mementos: st.mementos,
      tree: st.tree,
      debug: { ...st, tree: undefined },
    });
    assert.ok(!everywhereElse.includes(API_TOKEN), 'the API token is in no setting, memento or tree text');
  });

  it('copies a webhook URL only after the webhook token is set, and never the API token', async () => {
    await vscode.commands.executeCommand('testInbox.clearWebhookToken');
    assert.equal(await vscode.commands.executeCommand('testInbox.copyWebhookUrl', { inbox: 'hooked', form: 'tokenInPath' }), undefined);
    assert.equal(await answering(vscode.commands.executeCommand('testInbox.setWebhookToken', WEBHOOK_TOKEN)), true);
    const url = await vscode.commands.executeCommand<string>('testInbox.copyWebhookUrl', { inbox: 'hooked', form: 'tokenInPath' });
    assert.equal(url, `${hosted.httpUrl}/api/v2/domains/${WEBHOOK_TOKEN}/webhook/hooked/`);
    assert.equal(await clipboard(), url);
    assert.ok(!url.includes(API_TOKEN));
    const st = await debugState();
    assert.ok(!JSON.stringify(st.mementos).includes(WEBHOOK_TOKEN));
  });

  it('refuses a token with spaces and keeps the old one', async () => {
    // The box refuses to accept it (its validation message says why); the user gives up.
    const refused = vscode.commands.executeCommand('testInbox.setApiToken', 'two words');
    await new Promise((r) => setTimeout(r, 1500));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await answering(refused, 'close'), false);
    await vscode.commands.executeCommand('testInbox.refresh');
    await waitForState((s) => findNode(s.tree, (n) => n.label === 'From the hosted side') !== undefined, 'the tree still listing with the old token');
  });

  it('clearing the API token empties the tree and shows the "no token" state again', async () => {
    await vscode.commands.executeCommand('testInbox.clearApiToken');
    const st = await waitForState((s) => s.viewState === 'noToken', 'the noToken state');
    assert.deepEqual(st.tree.map((n) => n.contextValue), ['testInbox.action', 'testInbox.action'], 'only the fixes, nothing of the listing');
  });
});
