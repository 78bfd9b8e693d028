// One title and one address rule on every surface (issue 37). Messages are sent over real
// SMTP and the real inject API to a real server on port 0, read back with the API client, and
// each surface that titles a message on Node is asked for its title: the tree's row, the
// new-mail notification, and the message view's heading and tab (the view's state from the
// fetched message). The pickers and the web list call the same messageTitle; the web list is
// also checked in Chromium (webui-browser.test.ts), the pickers in the extension host.
//
// Addresses: each written address is given to every surface that reads one (the SMTP server's
// RCPT, the extension's input, the test library, the store), and they must agree on the inbox
// and domain it names, or all refuse it.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { isPhoneInbox } from '../../src/core/ids';
import { NO_SUBJECT } from '../../src/core/title';
import type { MessageSummary } from '../../src/core/wire';
import { parseInboxInput } from '../../src/extension/inboxInput';
import { present } from '../../src/extension/tree/present';
import { noticeFor } from '../../src/extension/ui/notify';
import { viewTitle } from '../../src/shared/viewProtocol';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { splitInbox } from '../../src/testing/connection';
import { buildViewContent } from '../../src/webview-ui/viewContent';

const DOMAIN = 'inbox.test';

/** One SMTP exchange of raw commands: the reply to each, in order. */
async function smtpReplies(port: number, commands: string[]): Promise<string[]> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  socket.setTimeout(10_000, () => socket.destroy(new Error('SMTP server did not answer within 10 s')));
  let buffer = '';
  const waiting: Array<(line: string) => void> = [];
  const lines: string[] = [];
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\r\n'); nl >= 0; nl = buffer.indexOf('\r\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      // A reply ends at its last line: code and a space (multi-line replies use code and a hyphen).
      if (/^\d{3} /.test(line)) (waiting.shift() ?? ((l: string) => lines.push(l)))(line);
    }
  });
  const next = (): Promise<string> => (lines.length > 0 ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiting.push(resolve)));
  try {
    await next();
    const replies: string[] = [];
    for (const c of commands) {
      socket.write(`${c}\r\n`);
      replies.push(await next());
    }
    return replies;
  } finally {
    socket.destroy();
  }
}

describe('one title and one address rule on every surface (issue 37)', () => {
  let dir: string;
  let server: InboxServer;
  let api: InboxApi;
  let apiToken: string;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-one-title-'));
    const tokens = await loadOrCreateTokens(dir);
    apiToken = tokens.apiToken;
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, ...tokens, defaultDomain: DOMAIN });
    api = createClient({ baseUrl: server.httpUrl, apiToken });
  });
  after(async () => {
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  /** The title each Node surface gives the newest message of an inbox. */
  async function titles(domain: string, inbox: string): Promise<Record<string, string>> {
    const listing = await api.listInbox(domain, inbox, { limit: 1 });
    const summary: MessageSummary = listing.msgs[0];
    assert.ok(summary, `a message in ${inbox}@${domain}`);
    const fetched = await api.getMessage(domain, inbox, summary.id);
    const row = present({ kind: 'message', id: `message:${summary.id}`, domain, inbox, summary, unread: false, phone: isPhoneInbox(inbox) }, Date.now());
    const notice = noticeFor({ domain, msgs: [summary] }, () => true);
    const prefix = `New message in ${inbox}: `;
    assert.ok(notice !== undefined && notice.text.startsWith(prefix), notice?.text);
    return {
      tree: String(row.label),
      notification: notice.text.slice(prefix.length),
      view: viewTitle(buildViewContent({ domain, message: fetched, allowRemoteImages: false })),
    };
  }

  const inject = async (inbox: string, body: Record<string, unknown>): Promise<void> => {
    const r = await fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/${inbox}`, {
      method: 'POST',
      headers: { authorization: apiToken, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(r.status, 200, await r.text());
  };

  it('an email by its subject, an email without one as NO_SUBJECT, an SMS by its first words or its sender, alike on each surface', async () => {
    const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      await smtp.sendMail({ from: 'Acme <no-reply@acme.test>', to: `welcome@${DOMAIN}`, subject: '  Welcome to Acme ', text: 'Hello.' });
      await smtp.sendMail({ from: 'Acme <no-reply@acme.test>', to: `bare@${DOMAIN}`, text: 'No subject here.' });
    } finally {
      smtp.close();
    }
    await inject('15551234567', { from: '+15550001111', text: 'Your Acme code is 204816. Do not share it with anyone, not even us.' });
    await inject('15557654321', { from: '+15550002222', subject: 'SMS' });
    const expected: Array<[string, string]> = [
      ['welcome', 'Welcome to Acme'],
      ['bare', NO_SUBJECT],
      ['15551234567', 'Your Acme code is 204816. Do not share it with…'],
      ['15557654321', 'SMS from +15550002222'],
    ];
    for (const [inbox, title] of expected) {
      // The view titles an SMS from its whole text; the list surfaces from the stored subject: the same first words.
      assert.deepEqual(await titles(DOMAIN, inbox), { tree: title, notification: title, view: title }, inbox);
    }
  });

  it('every surface reads a written address alike: the same inbox and domain, or a refusal by all', async () => {
    const cases: Array<{ address: string; names?: { inbox: string; domain: string } }> = [
      { address: 'Alice@Example.TEST', names: { inbox: 'alice', domain: 'example.test' } },
      { address: 'joe.bloggs+signup@inbox.test', names: { inbox: 'joe.bloggs+signup', domain: 'inbox.test' } },
      { address: '+15551234567@inbox.test', names: { inbox: '15551234567', domain: 'inbox.test' } },
      { address: 'team@private', names: { inbox: 'team', domain: 'private' } },
      { address: 'a@not_a_domain' },
      { address: 'x/y@inbox.test' },
      { address: '@inbox.test' },
      { address: 'nobody@' },
    ];
    for (const c of cases) {
      const [mailFrom, rcpt] = await smtpReplies(server.smtpPort, ['EHLO one-title.test', 'MAIL FROM:<a@acme.test>', `RCPT TO:<${c.address}>`, 'QUIT']).then((r) => r.slice(1, 3));
      assert.match(mailFrom, /^250/);
      const editor = (() => {
        try {
          return parseInboxInput(c.address, DOMAIN);
        } catch {
          return undefined;
        }
      })();
      const library = (() => {
        try {
          return splitInbox(c.address, DOMAIN);
        } catch {
          return undefined;
        }
      })();
      if (c.names) {
        assert.match(rcpt, /^250/, `SMTP takes ${c.address}`);
        assert.deepEqual(editor, c.names, `the extension reads ${c.address}`);
        assert.deepEqual(library, c.names, `the test library reads ${c.address}`);
      } else {
        assert.match(rcpt, /^5\d\d /, `SMTP refuses ${c.address}: ${rcpt}`);
        assert.equal(editor, undefined, `the extension refuses ${c.address}`);
        assert.equal(library, undefined, `the test library refuses ${c.address}`);
      }
    }
    // `*` names every inbox: a reading may name it (the test library waits on all of them); nothing receives for it.
    const [, , rcptAll] = await smtpReplies(server.smtpPort, ['EHLO one-title.test', 'MAIL FROM:<a@acme.test>', `RCPT TO:<*@${DOMAIN}>`, 'QUIT']);
    assert.match(rcptAll, /^550 .*\* \(every inbox\) cannot receive messages/);
    assert.throws(() => parseInboxInput(`*@${DOMAIN}`, DOMAIN), /cannot receive messages/);
    assert.deepEqual(splitInbox(`*@${DOMAIN}`, DOMAIN), { inbox: '*', domain: DOMAIN });
  });
});
