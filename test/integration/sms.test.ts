// SMS through the Twilio-compatible API in a real extension host: Copy SMS Settings hands out
// what an app needs; the official twilio SDK, configured from those settings alone, sends an
// SMS; it appears in the tree without a click; Copy One-Time Code puts its code on the clipboard.
import * as assert from 'node:assert/strict';
import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { clipboard, debugState, inboxNode, useLocalServer, waitForState } from './support/state';

/** The SDK's own transport, with api.twilio.com replaced by the base URL from the settings. */
class LocalHttpClient extends RequestClient {
  constructor(private readonly base: string) {
    super();
  }
  override request<T>(opts: RequestClient.RequestOptions<T>) {
    return super.request({ ...opts, uri: opts.uri.replace(/^https:\/\/api\.twilio\.com/, this.base) });
  }
}

function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

describe('SMS through the Twilio-compatible API', function () {
  this.timeout(60_000);

  before(async () => {
    await useLocalServer();
  });

  it('Copy SMS Settings copies the base URL, an Account SID and the Twilio auth token — never the API token', async () => {
    const text = await vscode.commands.executeCommand<string>('testInbox.copySmsSettings');
    assert.equal(await clipboard(), text);
    const env = parseEnv(text);
    const st = await debugState();
    assert.equal(env.TWILIO_API_BASE_URL, st.connection.baseUrl);
    assert.match(env.TWILIO_ACCOUNT_SID, /^AC[0-9a-f]{32}$/);
    assert.match(env.TWILIO_AUTH_TOKEN, /^[A-Za-z0-9_-]{32}$/);
    // The API token does not open the Twilio API, and the Twilio token does not open the inbox API.
    const inboxApi = await fetch(`${env.TWILIO_API_BASE_URL}/api/v2/domains`, { headers: { authorization: env.TWILIO_AUTH_TOKEN } });
    assert.equal(inboxApi.status, 403);
  });

  it('an SMS sent with the twilio SDK appears live in the tree, and Copy puts its code on the clipboard', async () => {
    const env = parseEnv(await vscode.commands.executeCommand<string>('testInbox.copySmsSettings'));
    const client = twilio(env.TWILIO_ACCOUNT_SID, env.TWILIO_AUTH_TOKEN, { httpClient: new LocalHttpClient(env.TWILIO_API_BASE_URL) });
    await waitForState((s) => s.viewState === 'ready' || s.tree.length > 0, 'a loaded tree');
    const digits = `1555${String(Date.now()).slice(-7)}`;
    const to = `+${digits.slice(0, 1)} (${digits.slice(1, 4)}) ${digits.slice(4, 7)}-${digits.slice(7)}`;
    const sent = await client.messages.create({ to, from: '+15550100000', body: 'Your Acme login code is 604219. Do not share it.' });
    assert.equal(sent.status, 'queued');
    const st = await waitForState((s) => (inboxNode(s.tree, DEFAULT_DOMAIN, digits)?.children?.length ?? 0) > 0, `the SMS in phone inbox ${digits}`);
    const node = inboxNode(st.tree, DEFAULT_DOMAIN, digits)!;
    assert.equal(node.icon, 'device-mobile');
    const msg = node.children![0];
    // Titled by its first words, with the sender beside them: never a row of "SMS".
    assert.equal(msg.label, 'Your Acme login code is 604219. Do not share it.');
    // Unread (the ● mark, tree/present.ts UNREAD_MARK), then the sender.
    assert.match(msg.description ?? '', /^● \+15550100000 · /);
    // The server found its code at ingest: the row offers Copy One-Time Code and says the code.
    assert.equal(msg.contextValue, 'testInbox.message.code');
    await vscode.env.clipboard.writeText('before');
    const code = await vscode.commands.executeCommand<string>('testInbox.copyCode', { domain: DEFAULT_DOMAIN, inbox: digits });
    assert.equal(code, '604219');
    assert.equal(await clipboard(), '604219');
  });
});
