// The tree model and its presentation against the real local server (in-process, port 0,
// temp Maildir) through the real client; mail arrives by HTTP inject and by SMTP (nodemailer).
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { ApiError } from '../../src/api/errors';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { describeError, ExtensionError, LocalServerError } from '../../src/extension/errors';
import { InboxModel, PAGE_SIZE, type TreeNode } from '../../src/extension/tree/model';
import { present } from '../../src/extension/tree/present';
import { senderName } from '../../src/core/sender';
import { AddedInboxes, MAX_READ_IDS, ReadState } from '../../src/extension/tree/state';
import { findCode } from '../../src/api/queries';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { memoryMemento as memento } from '../support/memory';

const API_TOKEN = 'tree-api-token-0001';
const WEBHOOK_TOKEN = 'tree-wh-token-0002';
const DOMAIN = 'inbox.test';

function modelFor(api: InboxApi, store = memento(), baseline = 0): { model: InboxModel; added: AddedInboxes; read: ReadState } {
  const added = new AddedInboxes(store, 'local');
  const read = new ReadState(store, 'local', baseline);
  const model = new InboxModel({
    api: async () => api,
    domains: async (a) => [DOMAIN, ...(await a.listDomains()).domains.map((d) => d.name).filter((d) => d !== DOMAIN)],
    added: () => added,
    readState: () => read,
    smtp: () => ({ host: '127.0.0.1', port: 2525 }),
  });
  return { model, added, read };
}

const kinds = (nodes: TreeNode[]) => nodes.map((n) => n.kind);

describe('extension tree model', function () {
  this.timeout(30_000);
  let dir: string;
  let server: InboxServer;
  let api: InboxApi;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-tree-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, defaultDomain: DOMAIN });
    api = createClient({ baseUrl: server.httpUrl, apiToken: API_TOKEN });
  });
  afterEach(async () => {
    await api.dispose();
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('lists domains, the inboxes seen in recent mail, and messages newest first', async () => {
    await api.inject(DOMAIN, 'alice', { from: 'Acme <no-reply@acme.test>', subject: 'first', text: 'one' });
    await api.inject(DOMAIN, 'alice', { from: 'Acme <no-reply@acme.test>', subject: 'second', text: 'two' });
    await api.inject(DOMAIN, 'bob', { from: 'x@y.test', subject: 'hi bob', text: 'three' });
    const { model } = modelFor(api);
    const roots = await model.roots();
    assert.deepEqual(kinds(roots), ['domain']);
    assert.equal((roots[0] as { domain: string }).domain, DOMAIN);
    const inboxes = await model.domainChildren(DOMAIN);
    assert.deepEqual(inboxes.map((n) => (n.kind === 'inbox' ? n.inbox : n.kind)).sort(), ['alice', 'bob']);
    const msgs = await model.inboxChildren(DOMAIN, 'alice');
    assert.deepEqual(msgs.map((n) => (n.kind === 'message' ? n.summary.subject : n.kind)), ['second', 'first']);
  });

  it('shows mail delivered over SMTP', async () => {
    const transport = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'App <app@example.test>', to: `carol@${DOMAIN}`, subject: 'Your code', text: 'Code: 482913' });
    transport.close();
    const { model } = modelFor(api);
    await model.roots();
    const inboxes = await model.domainChildren(DOMAIN);
    const carol = inboxes.find((n) => n.kind === 'inbox' && n.inbox === 'carol');
    assert.ok(carol, 'the SMTP recipient appears as an inbox');
    const msgs = await model.inboxChildren(DOMAIN, 'carol');
    assert.equal(msgs.length, 1);
    const p = present(msgs[0], Date.now());
    assert.equal(p.label, 'Your code');
    assert.match(p.description ?? '', /^● App · just now$/);
  });

  it('says which rows have a code (found by the server at ingest) and offers Copy One-Time Code only there', async () => {
    await api.inject(DOMAIN, 'dave', { from: 'Acme <no-reply@acme.test>', subject: 'Your sign-in code', text: 'Your verification code is 482913.' });
    await api.inject(DOMAIN, 'dave', { from: 'Acme <no-reply@acme.test>', subject: 'Welcome', text: 'Thanks for joining.' });
    await api.inject(DOMAIN, 'erin', { from: 'x@y.test', subject: 'hi', text: 'hello' });
    const { model } = modelFor(api);
    const [domain] = await model.roots();
    assert.equal(present(domain, Date.now()).accessibilityLabel, `Domain ${DOMAIN}, 2 inboxes, 3 unread`);
    const msgs = await model.inboxChildren(DOMAIN, 'dave');
    const [welcome, signin] = msgs.map((n) => present(n, Date.now()));
    assert.equal(signin.contextValue, 'testInbox.message.code');
    assert.match(signin.accessibilityLabel ?? '', /^Unread email from Acme, Your sign-in code, just now, has code 482913$/);
    assert.equal(signin.icon, 'key');
    assert.equal(welcome.contextValue, 'testInbox.message');
    assert.doesNotMatch(welcome.accessibilityLabel ?? '', /code/);
  });

  it('learns the code of a fetched message when the listing has none (hosted servers)', async () => {
    await api.inject(DOMAIN, 'fay', { from: 'Acme <no-reply@acme.test>', subject: 'Welcome', text: 'Thanks for joining.' });
    const { model } = modelFor(api);
    const [row] = await model.inboxChildren(DOMAIN, 'fay');
    assert.equal(present(row, Date.now()).contextValue, 'testInbox.message');
    let changed = 0;
    model.onDidChange(() => changed++);
    model.noteCode((row as { summary: { id: string } }).summary.id, '771204');
    model.noteCode((row as { summary: { id: string } }).summary.id, '771204');
    assert.equal(changed, 1, 'the tree redraws once, when the code is new');
    const [again] = await model.inboxChildren(DOMAIN, 'fay');
    assert.equal(present(again, Date.now()).contextValue, 'testInbox.message.code');
    assert.match(present(again, Date.now()).accessibilityLabel ?? '', /, has code 771204$/);
  });

  it('keeps added inboxes without mail and shows how mail gets there', async () => {
    const { model, added } = modelFor(api);
    await added.add({ domain: DOMAIN, inbox: 'signup' });
    const inboxes = await model.domainChildren(DOMAIN);
    assert.deepEqual(inboxes.map((n) => n.kind === 'inbox' && [n.inbox, n.added]), [['signup', true]]);
    const kids = await model.inboxChildren(DOMAIN, 'signup');
    assert.deepEqual(kinds(kids), ['empty']);
    assert.match((kids[0] as { message: string }).message, /signup@inbox\.test \(SMTP 127\.0\.0\.1:2525\)/);
    assert.equal(present(kids[0], Date.now()).command?.action, 'injectMessage');
  });

  it('pages an inbox with "load more" until every message is shown', async () => {
    const total = PAGE_SIZE + 5;
    for (let i = 0; i < total; i++) await api.inject(DOMAIN, 'bulk', { from: 'a@b.test', subject: `m${i}`, text: String(i) });
    const { model } = modelFor(api);
    const first = await model.inboxChildren(DOMAIN, 'bulk');
    assert.equal(first.filter((n) => n.kind === 'message').length, PAGE_SIZE);
    assert.equal(first[first.length - 1].kind, 'loadMore');
    const added = await model.loadMore({ domain: DOMAIN, inbox: 'bulk' });
    assert.equal(added, 5);
    const all = await model.inboxChildren(DOMAIN, 'bulk');
    const ids = all.filter((n) => n.kind === 'message').map((n) => (n as { summary: { id: string } }).summary.id);
    assert.equal(ids.length, total);
    assert.equal(new Set(ids).size, total, 'no message twice');
    assert.ok(!all.some((n) => n.kind === 'loadMore'), 'no "load more" after the last page');
  });

  it('names the rows a change touched, and gives those rows as they are now, so the tree redraws them alone', async () => {
    for (let i = 0; i < PAGE_SIZE + 2; i++) await api.inject(DOMAIN, 'erin', { from: 'a@b.test', subject: `e${i}`, text: String(i) });
    const { model } = modelFor(api);
    assert.equal(model.rowNow({ domain: DOMAIN }), undefined, 'nothing loaded yet: no row to redraw alone');
    await model.roots();
    await model.domainChildren(DOMAIN);
    await model.inboxChildren(DOMAIN, 'erin');
    const changes: unknown[] = [];
    model.onDidChange((c) => changes.push(c));

    // A new message in a new inbox: its domain's row (its count of inboxes) and what is under it.
    const posted = await api.inject(DOMAIN, 'frank', { from: 'a@b.test', subject: 'hello', text: 'x' });
    const listing = await api.listInbox(DOMAIN, 'frank', { limit: 5 });
    model.applyNew(DOMAIN, listing.msgs);
    assert.deepEqual(changes, [{ domain: DOMAIN }]);
    const domainRow = model.rowNow({ domain: DOMAIN });
    assert.ok(domainRow?.kind === 'domain');
    assert.equal(domainRow.inboxCount, 2, 'the row as it is now counts the new inbox');
    const inboxRow = model.rowNow({ domain: DOMAIN, inbox: 'frank' });
    assert.ok(inboxRow?.kind === 'inbox');
    assert.equal(inboxRow.unread, 1);
    assert.equal(model.rowNow({ domain: DOMAIN, inbox: 'nobody' }), undefined, 'an inbox that is not listed has no row');
    assert.ok(posted.id);

    // "Load more": that inbox alone.
    await model.loadMore({ domain: DOMAIN, inbox: 'erin' });
    assert.deepEqual(changes[1], { domain: DOMAIN, inbox: 'erin' });

    // A delete touches the whole tree (the last one leaves the empty welcome view), and so does a reload.
    model.applyDelete(DOMAIN, [listing.msgs[0].id]);
    assert.equal(changes[2], undefined);
    model.invalidate();
    assert.equal(changes[3], undefined);
    assert.equal(changes.length, 4);
    assert.equal(model.rowNow({ domain: DOMAIN }), undefined, 'after a reload nothing is cached: the whole tree is read again');
  });

  it('counts unread mail until a message is marked read', async () => {
    await api.inject(DOMAIN, 'dave', { from: 'a@b.test', subject: 's1', text: 't' });
    await api.inject(DOMAIN, 'dave', { from: 'a@b.test', subject: 's2', text: 't' });
    const { model, read } = modelFor(api);
    await model.roots();
    await model.domainChildren(DOMAIN);
    assert.equal(model.unreadCount(), 2);
    const msgs = await model.inboxChildren(DOMAIN, 'dave');
    const first = msgs[0];
    assert.ok(first.kind === 'message' && first.unread);
    assert.equal(present(first, Date.now()).unread, true);
    assert.match(present(first, Date.now()).description ?? '', /^● /, 'the unread mark leads the description');
    assert.match(present(first, Date.now()).accessibilityLabel ?? '', /^Unread /, 'a screen reader hears it');
    await read.markRead([first.summary.id]);
    assert.equal(model.unreadCount(), 1);
    const again = await model.inboxChildren(DOMAIN, 'dave');
    assert.ok(again[0].kind === 'message' && !again[0].unread);
    assert.equal(present(again[0], Date.now()).icon, 'mail-read');
    assert.doesNotMatch(present(again[0], Date.now()).description ?? '', /●/, 'a read message has no mark');
  });

  it('two windows on one server agree on what is unread: a mark in one is taken in by the other, and marks made in both are kept', async () => {
    // Both windows read one store (VS Code's globalState, shared by the windows of a profile).
    const shared = memento();
    const a = new ReadState(shared, 'local', 0, { allUnread: true });
    const b = new ReadState(shared, 'local', 0, { allUnread: true });
    const msgs = ['m1', 'm2', 'm3', 'm4'].map((id, i) => ({ id, time: 1000 + i }));
    const unread = (rs: ReadState) => msgs.filter((m) => rs.isUnread(m)).map((m) => m.id);
    await a.markRead(['m1']);
    assert.equal(b.sync(), true, 'b is told that something changed');
    assert.deepEqual(unread(b), ['m2', 'm3', 'm4']);
    assert.equal(b.sync(), false, 'nothing new: no redraw');
    // Each marks another without having synced first: neither write loses the other's mark.
    await b.markRead(['m2']);
    await a.markRead(['m3']);
    b.sync();
    assert.deepEqual(unread(a), ['m4']);
    assert.deepEqual(unread(b), ['m4']);
  });

  it('treats mail older than the first connection as read', async () => {
    await api.inject(DOMAIN, 'erin', { from: 'a@b.test', subject: 'old', text: 't' });
    const { model } = modelFor(api, memento(), Date.now() + 60_000);
    await model.domainChildren(DOMAIN);
    assert.equal(model.unreadCount(), 0);
  });

  it('finds new mail by polling and reports only what is new', async () => {
    await api.inject(DOMAIN, 'frank', { from: 'a@b.test', subject: 'before', text: 't' });
    const { model } = modelFor(api);
    await model.roots();
    await model.domainChildren(DOMAIN);
    await model.inboxChildren(DOMAIN, 'frank');
    assert.deepEqual(await model.poll(), []);
    await api.inject(DOMAIN, 'frank', { from: 'a@b.test', subject: 'after', text: 't' });
    const fresh = await model.poll();
    assert.deepEqual(fresh.map((m) => m.subject), ['after']);
    const msgs = await model.inboxChildren(DOMAIN, 'frank');
    assert.deepEqual(msgs.map((n) => n.kind === 'message' && n.summary.subject), ['after', 'before']);
  });

  it('opens the row of an inbox whose first message just arrived, once; inboxes that had mail stay as they were', async () => {
    await api.inject(DOMAIN, 'old', { from: 'a@b.test', subject: 'one', text: 't' });
    const { model, added } = modelFor(api);
    await added.add({ domain: DOMAIN, inbox: 'watched' });
    await model.roots();
    const collapsible = async () => Object.fromEntries((await model.domainChildren(DOMAIN)).map((n) => [n.kind === 'inbox' ? n.inbox : n.id, present(n, Date.now()).collapsible]));
    assert.deepEqual(await collapsible(), { old: 'collapsed', watched: 'collapsed' });
    const arrivals = [];
    for (const inbox of ['brand-new', 'watched', 'old']) {
      await api.inject(DOMAIN, inbox, { from: 'a@b.test', subject: `to ${inbox}`, text: 't' });
      arrivals.push(...(await api.listInbox(DOMAIN, inbox, { limit: 1 })).msgs);
    }
    model.applyNew(DOMAIN, arrivals);
    assert.deepEqual(await collapsible(), { 'brand-new': 'expanded', watched: 'expanded', old: 'collapsed' });
    // Once VS Code has the rows, they open no more by themselves (a user who closes one keeps it closed).
    model.rowsShown(await model.domainChildren(DOMAIN));
    assert.deepEqual(await collapsible(), { 'brand-new': 'collapsed', watched: 'collapsed', old: 'collapsed' });
  });

  it('applies stream events for new and deleted mail', async () => {
    await api.inject(DOMAIN, 'gina', { from: 'a@b.test', subject: 'one', text: 't' });
    const { model } = modelFor(api);
    await model.roots();
    await model.domainChildren(DOMAIN);
    await model.inboxChildren(DOMAIN, 'gina');
    const events: TreeNode[][] = [];
    const received = new Promise<void>((resolve) => {
      const sub = api.subscribe(DOMAIN, undefined, {
        onEvent: (e) => {
          if (e.type === 'message' && e.msg) model.applyNew(DOMAIN, [e.msg]);
          if (e.type === 'delete' && e.ids) model.applyDelete(DOMAIN, e.ids);
          void model.inboxChildren(DOMAIN, 'gina').then((n) => {
            events.push(n);
            if (events.length === 2) {
              sub.dispose();
              resolve();
            }
          });
        },
        onState: (state) => {
          if (state === 'open') void api.inject(DOMAIN, 'gina', { from: 'a@b.test', subject: 'two', text: 't' }).then((r) => api.deleteMessage(DOMAIN, 'gina', r.id));
        },
      });
    });
    await received;
    assert.deepEqual(events[0].map((n) => n.kind === 'message' && n.summary.subject), ['two', 'one']);
    assert.deepEqual(events[1].map((n) => n.kind === 'message' && n.summary.subject), ['one']);
  });

  it('returns an error node with "Set API Token" when the token is wrong, never throwing', async () => {
    const bad = createClient({ baseUrl: server.httpUrl, apiToken: 'wrong-token-xyz' });
    try {
      const { model } = modelFor(bad);
      const roots = await model.roots();
      assert.deepEqual(kinds(roots), ['error']);
      const e = roots[0] as { message: string; actions: string[] };
      assert.deepEqual(e.actions, ['setApiToken', 'showLog']);
      const p = present(roots[0], Date.now());
      assert.equal(p.command?.action, 'setApiToken');
      assert.equal(p.icon, 'error');
    } finally {
      await bad.dispose();
    }
  });

  it('returns an error node with "Retry" when the server is gone', async () => {
    const { model } = modelFor(api);
    await server.close();
    const kids = await model.domainChildren(DOMAIN);
    assert.equal(kids[0].kind, 'error');
    assert.ok((kids[0] as { actions: string[] }).actions.includes('retry'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, defaultDomain: DOMAIN });
  });

  it('forgets a cleared inbox at once', async () => {
    await api.inject(DOMAIN, 'hank', { from: 'a@b.test', subject: 'x', text: 't' });
    const { model } = modelFor(api);
    await model.domainChildren(DOMAIN);
    await model.inboxChildren(DOMAIN, 'hank');
    await api.clearInbox(DOMAIN, 'hank');
    model.applyClear({ domain: DOMAIN, inbox: 'hank' });
    assert.deepEqual(kinds(await model.inboxChildren(DOMAIN, 'hank')), ['empty']);
  });

  describe('wait for next code', () => {
    it('skips mail already there and messages without a code, and returns the next code', async () => {
      await api.inject(DOMAIN, 'otp', { from: 'a@b.test', subject: 'old code', text: 'Your code is 111111' });
      const ac = new AbortController();
      const skipped: string[] = [];
      let waiting!: () => void;
      const ready = new Promise<void>((r) => (waiting = r));
      let sawWelcome!: () => void;
      const welcomeSkipped = new Promise<void>((r) => (sawWelcome = r));
      const found = findCode({
        api,
        domain: DOMAIN,
        inbox: 'otp',
        signal: ac.signal,
        testInbox: true,
        since: 'now',
        waitMs: Infinity,
        onWaiting: () => waiting(),
        onSkipped: (m) => {
          skipped.push(m.subject);
          if (m.subject === 'welcome') sawWelcome();
        },
      });
      await ready;
      await api.inject(DOMAIN, 'otp', { from: 'a@b.test', subject: 'welcome', text: 'Hello there, no digits here.' });
      // The next message only once the wait has looked at this one: listed together, the newest is read first and nothing is skipped.
      await welcomeSkipped;
      await api.inject(DOMAIN, 'otp', { from: 'a@b.test', subject: 'Sign-in', text: 'Your verification code is 730152. It expires in 10 minutes.' });
      const result = await found;
      assert.equal(result?.value, '730152');
      assert.equal(result?.subject, 'Sign-in');
      assert.deepEqual(skipped, ['welcome']);
    });

    it('works by plain polling too (hosted servers)', async () => {
      const ac = new AbortController();
      let waiting!: () => void;
      const ready = new Promise<void>((r) => (waiting = r));
      const found = findCode({ api, domain: DOMAIN, inbox: 'otp2', signal: ac.signal, testInbox: false, since: 'now', waitMs: Infinity, pollMs: 100, onWaiting: () => waiting() });
      await ready;
      await api.inject(DOMAIN, 'otp2', { from: 'a@b.test', subject: 'code', text: 'Use 4821 to log in' });
      assert.equal((await found)?.value, '4821');
    });

    it('stops with a cancellation error when cancelled', async () => {
      const ac = new AbortController();
      const found = findCode({ api, domain: DOMAIN, inbox: 'quiet', signal: ac.signal, testInbox: true, since: 'now', waitMs: Infinity, onSkipped: () => undefined, onWaiting: () => setTimeout(() => ac.abort(), 50) });
      await assert.rejects(found, (e: unknown) => describeError(e).silent);
    });
  });
});

describe('extension tree presentation and errors', () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const summary = { subject: '', domain: DOMAIN, from: '"Acme Support" <help@acme.test>', id: 'z-1-1', to: '15551234567', time: now - 120_000, seconds_ago: 120 };

  it('shows no bidi control of a subject, a sender or an inbox name in any text of a row, and cuts a very long subject', () => {
    // U+202E makes "gnp.exe" read as "exe.png"; a sender written backwards behind it reads "bank-finance".
    const hostile = { ...summary, to: 'pay\u202Eroll', from: '"\u202Eecnanif-knab" <x@evil.test>', subject: 'Invoice \u202Egnp.exe' };
    const rows = [
      present({ kind: 'message', id: 'message:h', domain: DOMAIN, inbox: 'payroll', summary: hostile, unread: true, phone: false, code: '123456' }, now),
      present({ kind: 'inbox', id: 'inbox:h', domain: DOMAIN, inbox: 'pay\u202Eroll', added: false, phone: false, unread: 1, address: `pay\u202Eroll@${DOMAIN}` }, now),
      present({ kind: 'domain', id: 'domain:h', domain: 'evil\u202Etset', unread: 0 }, now),
      present({ kind: 'error', id: 'error:h', message: 'Server said: \u202Edeliated', actions: ['retry'] }, now),
    ];
    for (const p of rows) {
      for (const [field, text] of Object.entries({ label: p.label, description: p.description, tooltip: p.tooltip, accessibilityLabel: p.accessibilityLabel })) {
        assert.ok(!/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/.test(text ?? ''), `${p.id} ${field}: ${JSON.stringify(text)}`);
      }
    }
    assert.equal(rows[0].label, 'Invoice gnp.exe');
    assert.match(rows[0].description ?? '', /^● ecnanif-knab · /);
    assert.match(rows[0].accessibilityLabel ?? '', /^Unread email from ecnanif-knab, Invoice gnp\.exe, /);
    const long = present({ kind: 'message', id: 'message:l', domain: DOMAIN, inbox: 'x', summary: { ...summary, to: 'x', subject: 'Very long subject '.repeat(100) }, unread: false, phone: false }, now);
    assert.ok(long.label.endsWith('…') && long.label.length < 200, long.label);
  });

  it('names the sender by display name, else by address', () => {
    assert.equal(senderName('"Acme Support" <help@acme.test>'), 'Acme Support');
    assert.equal(senderName('<x@y.test>'), 'x@y.test');
    assert.equal(senderName('plain@y.test'), 'plain@y.test');
  });

  it('titles an SMS by its first words, with the sender beside them, never just "SMS"', () => {
    const text = 'Your Acme login code is 604219. Do not share it with anyone, not even us.';
    const p = present({ kind: 'message', id: 'message:y', domain: DOMAIN, inbox: '15551234567', summary: { ...summary, from: '+15550100000', subject: text }, unread: false, phone: true }, now);
    assert.equal(p.label, 'Your Acme login code is 604219. Do not share…');
    assert.equal(p.description, '+15550100000 · 2 min ago');
    assert.match(p.accessibilityLabel ?? '', /^SMS from \+15550100000, Your Acme login code is 604219/);
    // Stored before SMS had titles, or injected with the placeholder: named by the sender.
    for (const subject of ['SMS', '', '(no subject)']) {
      assert.equal(present({ kind: 'message', id: 'message:z', domain: DOMAIN, inbox: '15551234567', summary: { ...summary, from: '+15550100000', subject }, unread: false, phone: true }, now).label, 'SMS from +15550100000');
    }
  });

  it('shows an SMS message with its own icon, a placeholder subject and an accessible label', () => {
    const p = present({ kind: 'message', id: 'message:x', domain: DOMAIN, inbox: '15551234567', summary, unread: false, phone: true }, now);
    assert.equal(p.label, 'SMS from Acme Support');
    assert.equal(p.icon, 'comment');
    assert.equal(p.description, 'Acme Support · 2 min ago');
    assert.match(p.accessibilityLabel ?? '', /^SMS from Acme Support/);
    assert.equal(p.contextValue, 'testInbox.message');
    assert.equal(p.command?.action, 'openMessage');
  });

  it('offers Copy One-Time Code in the menus only on rows with a code; the other message actions on every message row', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { contributes: { menus: Record<string, Array<{ command: string; when?: string }>> } };
    const items = manifest.contributes.menus['view/item/context'];
    const matches = (when: string | undefined, contextValue: string): boolean => {
      const m = /viewItem (==|=~) (\S+)/.exec(when ?? '');
      if (!m) return false;
      return m[1] === '==' ? m[2] === contextValue : new RegExp(m[2].replace(/^\/|\/$/g, '')).test(contextValue);
    };
    const offered = (contextValue: string): string[] => items.filter((i) => matches(i.when, contextValue)).map((i) => i.command);
    assert.ok(!offered('testInbox.message').includes('testInbox.copyCode'));
    assert.ok(offered('testInbox.message.code').includes('testInbox.copyCode'));
    for (const cmd of ['testInbox.openMessage', 'testInbox.copyMessageId', 'testInbox.exportEml', 'testInbox.deleteMessage']) {
      assert.ok(offered('testInbox.message').includes(cmd), `${cmd} on a row without a code`);
      assert.ok(offered('testInbox.message.code').includes(cmd), `${cmd} on a row with a code`);
    }
  });

  it('marks added inboxes so only they offer "Remove Inbox"', () => {
    const base = { kind: 'inbox' as const, id: 'inbox:a', domain: DOMAIN, inbox: 'a', phone: false, unread: 3, address: 'a@inbox.test' };
    assert.equal(present({ ...base, added: true }, now).contextValue, 'testInbox.inbox.added');
    assert.equal(present({ ...base, added: false }, now).contextValue, 'testInbox.inbox');
    assert.equal(present({ ...base, added: false }, now).description, '3 unread');
  });

  it('maps every failure to a message with actions, and cancellation to silence', () => {
    assert.deepEqual(describeError(new ApiError('rate_limited', 'slow down')).actions, ['retry']);
    assert.deepEqual(describeError(new ApiError('network', 'down')).actions, ['retry', 'showLog']);
    assert.deepEqual(describeError(new ApiError('unauthorized', 'bad', { field: 'apiToken' })).actions, ['setApiToken', 'showLog']);
    assert.deepEqual(describeError(new ApiError('unauthorized', 'bad', { field: 'webhookToken' })).actions, ['setWebhookToken', 'showLog']);
    assert.deepEqual(describeError(new LocalServerError('port_taken', 'Port 2580 is used', 2580)).actions, ['changePort', 'showLog']);
    assert.deepEqual(describeError(new ExtensionError('invalid_input', 'bad name')).actions, []);
    assert.equal(describeError(new ApiError('cancelled', 'x')).silent, true);
    assert.equal(describeError(Object.assign(new Error('aborted'), { name: 'AbortError' })).silent, true);
    assert.match(describeError(new TypeError('boom')).message, /Unexpected error: boom/);
  });

  it('keeps the read list bounded', async () => {
    const m = memento();
    const rs = new ReadState(m, 's', 0);
    await rs.markRead(Array.from({ length: MAX_READ_IDS + 10 }, (_, i) => `i-1-${i}`));
    assert.equal((m.data.get('testInbox.read:s') as string[]).length, MAX_READ_IDS);
    assert.equal(rs.isUnread({ id: 'i-1-0', time: 1 }), true, 'the oldest fell off');
    assert.equal(rs.isUnread({ id: `i-1-${MAX_READ_IDS + 9}`, time: 1 }), false);
  });
});
