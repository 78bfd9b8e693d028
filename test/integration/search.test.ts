// Search Messages… in a real extension host: against the embedded local server, the picker
// searches as the query is typed (here given as the command's initial value, then changed),
// shows sender, subject, inbox and age, names what is wrong with a malformed query, and Enter
// opens the message in the panel. Against a hosted service (a stand-in that is not a Test
// Inbox server, as the hosted one is not) it says that there is no search.
import * as assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { answering, type DebugState, setSetting, uniqueInbox, useLocalServer, waitForState } from './support/state';

const DOMAIN = DEFAULT_DOMAIN;

type SearchState = DebugState & { search: { title: string; items: Array<{ label: string; description?: string }> } | null; messageView: { panels: Array<{ id: string }> } };

const searchState = (pred: (s: SearchState['search']) => boolean, what: string): Promise<SearchState> =>
  waitForState((s) => pred((s as SearchState).search), what) as Promise<SearchState>;

describe('Search Messages… command', function () {
  this.timeout(90_000);

  before(async () => {
    await useLocalServer();
  });

  it('shows what matches as the query changes, and Enter opens the message in the panel', async () => {
    const word = `zebra${Date.now().toString(36)}`;
    const inbox = uniqueInbox('search');
    const other = uniqueInbox('search-other');
    await vscode.commands.executeCommand('testInbox.injectMessage', { domain: DOMAIN, inbox: other, from: 'Bob <bob@shop.test>', subject: 'Not this one', text: `${word} but from Bob` });
    const wanted = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, from: 'Acme Support <support@acme.test>', subject: 'Your Acme receipt', text: `Thanks! Reference ${word}.` });

    // The picker opens with a malformed query: it names what is wrong, and offers nothing to open.
    const running = vscode.commands.executeCommand<{ domain: string; inbox: string; id: string } | undefined>('testInbox.searchMessages', `${word} size:10`);
    const bad = await searchState((s) => s !== null && s.items.some((i) => i.label.includes('unknown operator')), 'the malformed query named');
    assert.match(bad.search!.items[0].label, /^\$\(error\) .*unknown operator "size:"/);
    // Closed without a choice: nothing opens.
    assert.equal(await answering(running, 'close'), undefined);

    // Both messages hold the word; `from:acme` narrows to one. Each row: subject; sender, inbox and age.
    const both = vscode.commands.executeCommand('testInbox.searchMessages', word);
    const two = await searchState((s) => s !== null && s.items.length === 2, 'two results');
    assert.match(two.search!.title, /: 2 found/);
    assert.deepEqual(two.search!.items.map((i) => i.label), ['Your Acme receipt', 'Not this one']);
    assert.match(two.search!.items[0].description ?? '', new RegExp(`^Acme Support · ${inbox}@${DOMAIN.replace(/\./g, '\\.')} · `));
    await answering(both, 'close');

    const opened = await answering(vscode.commands.executeCommand<{ domain: string; inbox: string; id: string } | undefined>('testInbox.searchMessages', `${word} from:acme`));
    assert.deepEqual(opened, { domain: DOMAIN, inbox, id: wanted!.id });
    const st = (await waitForState((s) => (s as SearchState).messageView.panels.some((p) => p.id === wanted!.id), 'the message in the panel')) as SearchState;
    assert.equal(st.search, null, 'the picker closed');
  });

  it('against the hosted service, says there is no search', async () => {
    // The hosted service: not a Test Inbox server (no identity proof), lists `private` inboxes.
    const hosted = http.createServer((req, res) => {
      if ((req.url ?? '').startsWith('/api/v2/domains/private/inboxes/')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ domain: 'private', to: 'x', msgs: [] }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', message: 'not found' }));
    });
    await new Promise<void>((resolve) => hosted.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hosted.address() as AddressInfo).port}`;
    try {
      await setSetting('server', url);
      await answering(vscode.commands.executeCommand('testInbox.setApiToken', 'hosted-search-token-1234'));
      await waitForState((s) => s.connection.kind === 'ready' && s.connection.testInbox === false, 'attached to the hosted stand-in');
      const r = await vscode.commands.executeCommand('testInbox.searchMessages', 'anything');
      assert.equal(r, undefined);
      const st = await waitForState((s) => s.shown.some((m) => m.where === 'warning' && /hosted service has no search/.test(m.text)), 'the warning');
      assert.equal((st as SearchState).search, null, 'no picker opened');
    } finally {
      await vscode.commands.executeCommand('testInbox.clearApiToken');
      await useLocalServer();
      await new Promise<void>((resolve) => hosted.close(() => resolve()));
    }
  });
});
