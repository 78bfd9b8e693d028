// The one-answer corpus (test/support/corpus.ts) through the extension's Copy commands in a real
// extension host, against the embedded local server, mail sent over real SMTP: Copy One-Time
// Code and Copy Verification Link give each message's one code and one link (and the
// clipboard holds it), as every Node surface does in test/server/one-answer.test.ts.
import * as assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { CORPUS, rawOf } from '../support/corpus';
import { clipboard, uniqueInbox, useLocalServer } from './support/state';

const DOMAIN = DEFAULT_DOMAIN;

describe('one answer per message: the Copy commands (corpus)', function () {
  this.timeout(180_000);
  const sent: Array<{ name: string; inbox: string; expect: { code?: string; link?: string } }> = [];

  before(async () => {
    const { connection } = await useLocalServer();
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: connection.smtp.port, secure: false, ignoreTLS: true });
    try {
      // Phone inboxes are digits: unique per run from the clock.
      let phone = 15550000000 + (Date.now() % 1e6) * 100;
      for (const m of CORPUS) {
        const inbox = m.sms ? String(++phone) : uniqueInbox(`oa-${m.name}`).toLowerCase();
        const to = `${inbox}@${DOMAIN}`;
        await t.sendMail({ envelope: { from: 'sender@acme.test', to: [to] }, raw: await rawOf(m, to) });
        sent.push({ name: m.name, inbox, expect: m.expect });
      }
    } finally {
      t.close();
    }
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Copy One-Time Code copies the corpus code of every message, and nothing where it has none', async () => {
    const wrong: string[] = [];
    for (const s of sent) {
      await vscode.env.clipboard.writeText('before');
      const got = await vscode.commands.executeCommand<string | undefined>('testInbox.copyCode', { domain: DOMAIN, inbox: s.inbox });
      const board = await clipboard();
      if (got !== s.expect.code || board !== (s.expect.code ?? 'before')) wrong.push(`${s.name}: returned ${JSON.stringify(got)}, clipboard ${JSON.stringify(board)}, expected ${JSON.stringify(s.expect.code)}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('Copy Verification Link copies the corpus link of every message, and nothing where it has none', async () => {
    const wrong: string[] = [];
    for (const s of sent) {
      await vscode.env.clipboard.writeText('before');
      const got = await vscode.commands.executeCommand<string | undefined>('testInbox.copyVerificationLink', { domain: DOMAIN, inbox: s.inbox });
      const board = await clipboard();
      if (got !== s.expect.link || board !== (s.expect.link ?? 'before')) wrong.push(`${s.name}: returned ${JSON.stringify(got)}, clipboard ${JSON.stringify(board)}, expected ${JSON.stringify(s.expect.link)}`);
    }
    assert.deepEqual(wrong, []);
  });
});
