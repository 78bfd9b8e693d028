// What a user meets when something is off, in a real extension host: a server that cannot be
// reached (a real closed port, then a real server started on it), Set API Token against the
// local server, the unread mark, the preview message panel, and Inject revealing what it posted.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { closedPort } from '../support/ports';
import { answering, debugState, findNode, inboxNode, uniqueInbox, useLocalServer, waitForState, type DebugState } from './support/state';

const API_TOKEN = 'it-unreachable-api-3e9a7c1d5b';
/** The connection re-checks an unreachable server at most every 15 s (RECOVERY_MAX_MS); room for a busy machine. */
const RECOVERY_TIMEOUT_MS = 30_000;

type Extra = DebugState & {
  statusBar: { text: string; tooltip: string; background?: string } | null;
  selection: string[];
  messageView: DebugState['messageView'] & { panels: Array<{ id: string; kept: boolean }> };
};
const state = async (): Promise<Extra> => (await debugState()) as Extra;

describe('Test Inbox when things go wrong', function () {
  this.timeout(120_000);

  describe('a server that cannot be reached', () => {
    let dir: string;
    let server: InboxServer | undefined;

    before(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-unreachable-'));
    });
    after(async () => {
      await vscode.commands.executeCommand('testInbox.clearApiToken');
      await useLocalServer();
      await server?.close();
      await fs.rm(dir, { recursive: true, force: true });
    });

    it('shows the unreachable view, a warning status bar item with the reason, commands that say so with Retry, and recovers by itself', async () => {
      const port = await closedPort();
      const url = `http://127.0.0.1:${port}`;
      await vscode.workspace.getConfiguration('testInbox').update('server', url, vscode.ConfigurationTarget.Global);
      // No token yet: nothing listens, and that is what is said (not "needs an API token").
      let st = (await waitForState((s) => s.viewState === 'unreachable', 'the unreachable view', RECOVERY_TIMEOUT_MS)) as Extra;
      st = await state();
      assert.deepEqual(st.tree.map((n) => [n.label, n.command?.command]), [['Retry', 'testInbox.refresh'], ['Show Log', 'testInbox.showLog'], ['Switch Server', 'testInbox.switchServer']], 'the fixes, as rows under the message');
      assert.ok(visible((st as { viewMessage?: string }).viewMessage ?? '').startsWith(`${url} cannot be reached: nothing is listening there`), (st as { viewMessage?: string }).viewMessage);
      assert.equal(st.connection.kind, 'unreachable');
      assert.ok(st.statusBar, 'the status bar item is shown');
      assert.match(st.statusBar.text, /unreachable/);
      assert.equal(st.statusBar.background, 'statusBarItem.warningBackground');
      assert.ok(visible(st.statusBar.tooltip).includes(`The server at ${url} cannot be reached: nothing is listening there`), st.statusBar.tooltip);

      // Commands that would open a picker say where and why instead, with Retry.
      for (const [command, title] of [
        ['testInbox.copyCode', 'Copy One-Time Code'],
        ['testInbox.injectMessage', 'Inject Test Message'],
        ['testInbox.copyVerificationLink', 'Copy Verification Link'],
        // Before asking for a webhook token it has none of: that nothing listens is what is wrong.
        ['testInbox.copyWebhookUrl', 'Copy Webhook URL'],
      ]) {
        const before = (await state()).shown.at(-1)?.n ?? 0;
        await vscode.commands.executeCommand(command);
        const after = await state();
        const told = after.shown.filter((m) => m.n > before && m.where === 'error' && m.text.startsWith(`${title} failed.`)).pop();
        assert.ok(told, `${command} said something: ${JSON.stringify(after.shown.filter((m) => m.n > before))}`);
        assert.ok(visible(told.text).includes(`The server at ${url} cannot be reached`), told.text);
        assert.ok(!after.shown.slice(-1)[0]?.text.includes('No webhook token'), 'no token advice for a server that is not there');
      }
      // The agent's tools answer the same, as their error (the model reads it).
      for (const [tool, input] of [
        ['testInbox_listInboxes', {}],
        ['testInbox_readNewestMessage', { inbox: 'back' }],
        ['testInbox_getNewestCode', { inbox: 'back' }],
        ['testInbox_getVerificationLink', { inbox: 'back' }],
      ] as const) {
        await assert.rejects(async () => vscode.lm.invokeTool(tool, { input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token), (e: Error) => {
          assert.ok(visible(e.message).includes(`The server at ${url} cannot be reached`), `${tool}: ${e.message}`);
          return true;
        });
      }
      // Copy TOTP Code computes its code here, from a secret in secret storage: it needs no server and keeps working.
      const totp = await vscode.commands.executeCommand<{ code: string }>('testInbox.copyTotpCode', { name: 'it unreachable', secret: 'JBSWY3DPEHPK3PXP' });
      assert.match(totp?.code ?? '', /^\d{6}$/);
      await vscode.commands.executeCommand('testInbox.copyTotpCode', { remove: 'it unreachable' });

      // A token set meanwhile does not hide that nothing listens.
      assert.equal(await answering(vscode.commands.executeCommand('testInbox.setApiToken', API_TOKEN)), true);
      await waitForState((s) => s.viewState === 'unreachable' && s.connection.kind === 'unreachable', 'still unreachable with a token');

      // A real server starts on that port: the view recovers without a click.
      server = await startInboxServer({ host: '127.0.0.1', httpPort: port, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'it-unreachable-wh-8d2f4b6a0c', defaultDomain: 'back.test' });
      const r = await fetch(`${url}/api/v2/domains/private/inboxes/back`, {
        method: 'POST',
        headers: { authorization: API_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'svc@back.test', subject: 'The server is back', text: 'hi' }),
      });
      assert.equal(r.status, 200);
      st = (await waitForState((s) => findNode(s.tree, (n) => n.label === 'The server is back') !== undefined, 'the tree after recovery', RECOVERY_TIMEOUT_MS)) as Extra;
      st = await state();
      assert.equal(st.viewState, 'ready');
      assert.equal(st.connection.kind, 'ready');
      assert.equal(st.statusBar?.background, undefined, 'no warning once it answers');
    });
  });

  describe('the local server', () => {
    before(async () => {
      await useLocalServer();
    });

    it('Set API Token and Clear API Token say they are for remote servers, and store nothing', async () => {
      assert.equal(await vscode.commands.executeCommand('testInbox.setApiToken', 'local-attempt-4f6b8d0e2a'), false);
      assert.equal(await vscode.commands.executeCommand('testInbox.clearApiToken'), false);
      const st = await state();
      const told = st.shown.filter((m) => m.where === 'info' && m.text.includes('is for remote servers'));
      assert.equal(told.length, 2, JSON.stringify(st.shown));
      assert.match(told[0].text, /^Set API Token is for remote servers\. The local server's tokens are in tokens\.json of its data folder/);
      assert.ok(!JSON.stringify(st).includes('local-attempt-4f6b8d0e2a'));
      await waitForState((s) => s.connection.kind === 'ready', 'the local server still connected');
    });

    it('marks unread mail at the start of the row and in its accessible label, and opening it clears the mark', async () => {
      const inbox = uniqueInbox('unread');
      const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, from: 'QA <qa@example.test>', subject: 'Fresh', text: 'x' });
      let st = await waitForState((s) => (inboxNode(s.tree, DEFAULT_DOMAIN, inbox)?.children?.length ?? 0) > 0, 'the new message');
      const row = inboxNode(st.tree, DEFAULT_DOMAIN, inbox)!.children![0];
      assert.match(row.description ?? '', /^● QA · /);
      assert.match(row.accessibilityLabel ?? '', /^Unread email from QA, Fresh/);
      await vscode.commands.executeCommand('testInbox.openMessage', { domain: DEFAULT_DOMAIN, inbox, id: r!.id });
      st = await waitForState((s) => inboxNode(s.tree, DEFAULT_DOMAIN, inbox)?.children?.[0]?.unread !== true, 'the read row');
      const read = inboxNode(st.tree, DEFAULT_DOMAIN, inbox)!.children![0];
      assert.doesNotMatch(read.description ?? '', /●/);
      assert.doesNotMatch(read.accessibilityLabel ?? '', /^Unread/);
    });

    it('Inject Test Message reveals and selects the new message, its inbox expanded, and confirms with Open', async () => {
      const inbox = uniqueInbox('reveal');
      const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject: 'Look here', text: 'x' });
      const id = `message:${DEFAULT_DOMAIN}/${inbox}/${r!.id}`;
      const st = await waitFor(async () => {
        const s = await state();
        return s.selection.includes(id) ? s : undefined;
      }, 'the selected row');
      assert.deepEqual(st.selection, [id]);
      const told = st.shown.filter((m) => m.where === 'info' && m.text === `Injected "Look here" into ${inbox}.`);
      assert.equal(told.length, 1, JSON.stringify(st.shown));
    });

    it('Inject Test Message selects its message even when the tree redrew a moment before (the redraw window is still open)', async () => {
      const inbox = uniqueInbox('reveal-busy');
      for (const subject of ['First', 'Second', 'Third']) {
        // A redraw right before: the tree's change for the new row falls inside the window in
        // which VS Code (and the extension's pacer) hold tree changes back.
        await vscode.commands.executeCommand('testInbox.refresh');
        const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject, text: subject });
        const id = `message:${DEFAULT_DOMAIN}/${inbox}/${r!.id}`;
        const st = await waitFor(async () => {
          const s = await state();
          return s.selection.includes(id) ? s : undefined;
        }, `the selected row of "${subject}"`);
        assert.deepEqual(st.selection, [id]);
      }
    });

    it('opens messages in one preview panel until it is kept; Open in New Panel opens a kept one', async () => {
      const inbox = uniqueInbox('panels');
      const ids: string[] = [];
      for (const subject of ['One', 'Two', 'Three', 'Four']) {
        ids.push((await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DEFAULT_DOMAIN, inbox, subject, text: subject }))!.id);
      }
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      const open = (id: string, command = 'testInbox.openMessage') => vscode.commands.executeCommand(command, { domain: DEFAULT_DOMAIN, inbox, id });
      const panels = async () => (await state()).messageView.panels;

      await open(ids[0]);
      await open(ids[1]);
      assert.deepEqual(await panels(), [{ id: ids[1], kept: false }], 'the second message replaced the first in the same panel');
      await waitFor(async () => (await state()).messageView.lastRendered?.id === ids[1], 'the second message rendered');
      await waitFor(async () => tabCount() === 1, 'one tab');

      // The title action acts on the active message panel (the one just opened, once the workbench says it is active).
      await waitFor(async () => (await vscode.commands.executeCommand<boolean>('testInbox.keepMessageOpen')) === true, 'Keep Open on the active panel');
      await open(ids[2]);
      assert.deepEqual(await panels(), [{ id: ids[1], kept: true }, { id: ids[2], kept: false }]);
      await open(ids[3], 'testInbox.openMessageInNewPanel');
      await open(ids[0]);
      assert.deepEqual((await panels()).sort(byId), [{ id: ids[1], kept: true }, { id: ids[0], kept: false }, { id: ids[3], kept: true }].sort(byId), 'the preview panel showed the last message; the kept ones stayed');
      await waitFor(async () => tabCount() === 3, `three tabs (now ${tabCount()})`);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    });
  });
});

/** Tabs of every editor group (the workbench tells the extension host a moment after a panel opens). */
function tabCount(): number {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs).length;
}

/** Text as the user reads it: without the zero-width characters that keep a URL in a message from becoming a link (core/inert). */
function visible(text: string): string {
  return text.replace(/[\u200b-\u200d\u2060\ufeff]/g, '');
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

async function waitFor<T>(get: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
