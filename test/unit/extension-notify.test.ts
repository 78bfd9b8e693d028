import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { INERT_BREAK } from '../../src/core/inert';
import type { MessageSummary } from '../../src/core/wire';
import type { NewMail } from '../../src/extension/tree/live';
import { COPY_CODE_BUTTON, noticeFor, notifyNewMail, OPEN_BUTTON, type NotifyDeps } from '../../src/extension/ui/notify';
import type { MessageRef } from '../../src/extension/inboxRef';
import { DEFAULT_DOMAIN, DEFAULT_HOST } from '../../src/shared/contract';
import { type InboxServer, startInboxServer } from '../../src/server/server';

const msg = (to: string, subject: string, time: number): MessageSummary => ({ subject, domain: 'inbox.test', from: 'a@b.test', id: `${to}-${time}-1`, to, time, seconds_ago: 0 });
const watched = (names: string[]) => (ref: { domain: string; inbox: string }) => ref.domain === 'inbox.test' && names.includes(ref.inbox);

describe('extension new-mail notification', () => {
  it('says nothing for mail outside the watched inboxes', () => {
    assert.equal(noticeFor({ domain: 'inbox.test', msgs: [msg('other', 'x', 1)] }, watched(['signup'])), undefined);
  });

  it('names the newest watched message and counts the others', () => {
    const n = noticeFor({ domain: 'inbox.test', msgs: [msg('signup', 'older', 1), msg('Signup', 'newest', 3), msg('other', 'ignored', 5)] }, watched(['signup']));
    assert.equal(n?.summary.subject, 'newest');
    assert.equal(n?.inbox, 'signup');
    assert.equal(n?.text, 'New message in signup: newest (and 1 more)');
  });

  it('shows a placeholder for an empty subject', () => {
    assert.equal(noticeFor({ domain: 'inbox.test', msgs: [msg('signup', '  ', 1)] }, watched(['signup']))?.text, 'New message in signup: (no subject)');
  });

  it('puts a hostile subject in the notification without its link syntax', () => {
    const text = noticeFor({ domain: 'inbox.test', msgs: [msg('signup', 'Invoice [Open](command:workbench.action.terminal.new) $(alert)', 1)] }, watched(['signup']))!.text;
    assert.ok(!text.includes(']('), text);
    assert.ok(!text.includes('$('), text);
    assert.equal(text.replaceAll(INERT_BREAK, ''), 'New message in signup: Invoice [Open](command:workbench.action.terminal.new) $(alert)');
  });
});

describe('extension new-mail notification, shown', function () {
  this.timeout(20_000);
  let dir: string;
  let server: InboxServer;
  let api: InboxApi;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-notify-'));
    server = await startInboxServer({ host: DEFAULT_HOST, httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: 'notify-api-1234', webhookToken: 'notify-wh-5678', defaultDomain: DEFAULT_DOMAIN });
    api = createClient({ baseUrl: server.httpUrl, apiToken: 'notify-api-1234' });
  });
  after(async () => {
    await api.dispose();
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** The notification's deps over the real client; the editor's calls are recorded, clicking `click`. */
  function deps(over: Partial<NotifyDeps> & { click?: string } = {}) {
    const shown: Array<{ text: string; buttons: string[] }> = [];
    const opened: MessageRef[] = [];
    const copied: string[] = [];
    const d: NotifyDeps = {
      enabled: () => true,
      isWatched: (ref) => ref.inbox === 'signup',
      api: () => api,
      log: { debug: () => undefined },
      show: async (text, buttons) => (shown.push({ text, buttons }), over.click),
      open: async (ref) => void opened.push(ref),
      copy: async (text) => void copied.push(text),
      ...over,
    };
    return { d, shown, opened, copied };
  }

  async function newMail(inbox: string, subject: string, text: string): Promise<NewMail> {
    await api.inject(DEFAULT_DOMAIN, inbox, { from: 'a@acme.test', subject, text });
    return { domain: DEFAULT_DOMAIN, msgs: (await api.listInbox(DEFAULT_DOMAIN, inbox, { limit: 1 })).msgs };
  }

  it('offers Copy Code for a message with a code and copies it', async () => {
    const mail = await newMail('signup', 'Your code', 'Your verification code is 482913.');
    const { d, shown, copied, opened } = deps({ click: COPY_CODE_BUTTON });
    await notifyNewMail(d, mail);
    assert.deepEqual(shown, [{ text: 'New message in signup: Your code', buttons: [OPEN_BUTTON, COPY_CODE_BUTTON] }]);
    assert.deepEqual(copied, ['482913']);
    assert.deepEqual(opened, []);
  });

  it('opens the newest message on Open, and offers no Copy Code without a code', async () => {
    const mail = await newMail('signup', 'Welcome', 'Nothing to copy here.');
    const { d, shown, opened, copied } = deps({ click: OPEN_BUTTON });
    await notifyNewMail(d, mail);
    assert.deepEqual(shown[0].buttons, [OPEN_BUTTON]);
    assert.deepEqual(opened, [{ domain: DEFAULT_DOMAIN, inbox: 'signup', id: mail.msgs[0].id }]);
    assert.deepEqual(copied, []);
  });

  it('shows nothing when the setting is off or the inbox is not watched', async () => {
    const watchedMail = await newMail('signup', 'Code', 'Code 111222');
    const off = deps({ enabled: () => false });
    await notifyNewMail(off.d, watchedMail);
    assert.equal(off.shown.length, 0);
    const other = deps();
    await notifyNewMail(other.d, await newMail('other', 'Code', 'Code 333444'));
    assert.equal(other.shown.length, 0);
  });

  it('still notifies, without Copy Code, when the message cannot be read', async () => {
    const mail = await newMail('signup', 'Code', 'Code 555666');
    const refused = createClient({ baseUrl: server.httpUrl, apiToken: 'wrong-token-0000' });
    try {
      const { d, shown } = deps({ api: () => refused });
      await notifyNewMail(d, mail);
      assert.deepEqual(shown[0].buttons, [OPEN_BUTTON]);
    } finally {
      await refused.dispose();
    }
  });
});
