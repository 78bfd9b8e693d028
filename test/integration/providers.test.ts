// Email through a provider's SDK in a real extension host: Copy Provider Settings… hands out the
// Resend settings; the official resend SDK, configured from them alone, sends a message; it
// appears live in the tree without a click, and the message view names the API it came through.
import * as assert from 'node:assert/strict';
import { Resend } from 'resend';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { clipboard, debugState, inboxNode, useLocalServer, waitForState } from './support/state';

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

describe('Email through the provider APIs', function () {
  this.timeout(60_000);

  before(async () => {
    await useLocalServer();
  });

  it('Copy Provider Settings… (Resend) copies the base URL and the provider key; a Resend send appears live in the tree', async () => {
    const text = await vscode.commands.executeCommand<string>('testInbox.copyProviderSettings', 'resend');
    assert.equal(await clipboard(), text);
    const env = parseEnv(text);
    const st = await debugState();
    assert.equal(env.RESEND_BASE_URL, st.connection.baseUrl);
    assert.match(env.RESEND_API_KEY, /^SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    assert.match(text, /# Node \(resend\): new \(require\('resend'\)\.Resend\)/);
    // The provider key opens no route of the inbox API.
    assert.equal((await fetch(`${env.RESEND_BASE_URL}/api/v2/domains`, { headers: { authorization: env.RESEND_API_KEY } })).status, 403);

    await waitForState((s) => s.viewState === 'ready' || s.tree.length > 0, 'a loaded tree');
    const inbox = `resend-${Date.now()}`;
    const { data, error } = await new Resend(env.RESEND_API_KEY, { baseUrl: env.RESEND_BASE_URL }).emails.send({
      from: 'Acme <no-reply@acme.test>',
      to: `${inbox}@${DEFAULT_DOMAIN}`,
      subject: 'Your Acme sign-in code is 730154',
      html: '<p>Your Acme sign-in code is <b>730154</b>.</p>',
      text: 'Your Acme sign-in code is 730154.',
    });
    assert.equal(error, null);
    assert.ok(data?.id);
    const after = await waitForState((s) => (inboxNode(s.tree, DEFAULT_DOMAIN, inbox)?.children?.length ?? 0) > 0, `the Resend message in inbox ${inbox}`);
    const msg = inboxNode(after.tree, DEFAULT_DOMAIN, inbox)!.children![0];
    assert.equal(msg.label, 'Your Acme sign-in code is 730154');
    assert.equal(msg.contextValue, 'testInbox.message.code');
    const code = await vscode.commands.executeCommand<string>('testInbox.copyCode', { domain: DEFAULT_DOMAIN, inbox });
    assert.equal(code, '730154');
  });
});
