// The language-model tools in a real extension host, invoked the way any extension or chat
// participant does, through vscode.lm.invokeTool (no language model is involved): against the
// embedded local server, with mail injected and sent over real SMTP.
import * as assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import * as vscode from 'vscode';
import { DEFAULT_DOMAIN } from '../../src/shared/contract';
import { TOOL_NAMES } from '../../src/extension/tools';
import { FIND_PROPERTIES, INBOX_PROPERTIES } from '../../src/extension/tools/common';
import { dataDir, uniqueInbox, useLocalServer } from './support/state';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MCP_AGENTS } from '../../src/extension/mcpConfig';
import { MCP_TOOL_NAMES } from '../../src/mcp/tools';

const DOMAIN = DEFAULT_DOMAIN;

interface Manifest {
  contributes: { languageModelTools: Array<{ name: string; displayName: string; modelDescription: string; userDescription?: string; toolReferenceName?: string; inputSchema: { type: string; properties: Record<string, unknown>; required?: string[] } }> };
}

async function invoke<T = Record<string, unknown>>(name: string, input: object): Promise<T> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, new vscode.CancellationTokenSource().token);
  assert.equal(result.content.length, 1, 'one part');
  const part = result.content[0];
  assert.ok(part instanceof vscode.LanguageModelTextPart, 'a text part');
  return JSON.parse(part.value) as T;
}

async function inject(inbox: string, msg: { from?: string; subject: string; text: string }): Promise<string> {
  const r = await vscode.commands.executeCommand<{ id: string }>('testInbox.injectMessage', { domain: DOMAIN, inbox, ...msg });
  assert.ok(r?.id, 'injected');
  return r.id;
}

describe('language-model tools (vscode.lm.invokeTool)', function () {
  this.timeout(60_000);
  let smtpPort: number;

  before(async () => {
    const st = await useLocalServer();
    smtpPort = st.connection.smtp.port;
  });

  it('contributes the four tools with descriptions and input schemas, registers each, and the manifest schemas are the code\'s', () => {
    const pkg = vscode.extensions.getExtension('test-inbox.test-inbox')!.packageJSON as Manifest;
    const contributed = pkg.contributes.languageModelTools;
    assert.deepEqual(contributed.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
    const registered = new Set(vscode.lm.tools.map((t) => t.name));
    for (const t of contributed) {
      assert.ok(registered.has(t.name), `${t.name} is registered`);
      assert.ok(t.displayName && t.modelDescription.length > 40 && t.userDescription, `${t.name} is described`);
      assert.equal(t.inputSchema.type, 'object');
    }
    const byName = new Map(contributed.map((t) => [t.name, t]));
    assert.deepEqual(byName.get('testInbox_readNewestMessage')!.inputSchema.properties, INBOX_PROPERTIES);
    for (const n of ['testInbox_getNewestCode', 'testInbox_getVerificationLink']) {
      assert.deepEqual(byName.get(n)!.inputSchema.properties, FIND_PROPERTIES, n);
      assert.deepEqual(byName.get(n)!.inputSchema.required, ['inbox']);
    }
  });

  it('Copy MCP Server Config copies each agent\'s config without any token; the MCP tools are not registered as language-model tools too', async () => {
    const tokens = JSON.parse(readFileSync(path.join(dataDir, 'tokens.json'), 'utf8')) as Record<string, string>;
    const secrets = Object.values(tokens).filter((v) => typeof v === 'string' && v.length >= 16);
    assert.ok(secrets.length >= 2, 'the data folder has its tokens');
    for (const { agent } of MCP_AGENTS) {
      for (const transport of ['stdio', 'http']) {
        const text = await vscode.commands.executeCommand<string>('testInbox.copyMcpConfig', agent, transport);
        assert.ok(text, `${agent} ${transport} copied`);
        assert.equal(await vscode.env.clipboard.readText(), text);
        for (const secret of secrets) assert.ok(!text.includes(secret), `${agent} ${transport}: no token`);
        if (transport === 'stdio') {
          assert.ok(text.includes(dataDir), 'it names the data folder');
          const launcher = /"([^"]*test-inbox-mcp\.cjs)"/.exec(text)?.[1];
          assert.ok(launcher && existsSync(launcher), `the launcher was written: ${text}`);
          for (const secret of secrets) assert.ok(!readFileSync(launcher, 'utf8').includes(secret), 'the launcher holds no token');
        } else assert.match(text, /\/mcp/);
      }
    }
    const registered = new Set(vscode.lm.tools.map((t) => t.name));
    for (const n of MCP_TOOL_NAMES) assert.ok(!registered.has(n), `${n} is not registered twice`);
  });

  it('list inboxes names the inboxes with mail and their newest message', async () => {
    const inbox = uniqueInbox('tool-list');
    await inject(inbox, { subject: 'First', text: 'one' });
    await inject(inbox, { subject: 'Second', text: 'two' });
    const r = await invoke<{ domains: Array<{ domain: string; inboxes: Array<{ inbox: string; address: string; recentMessages: number; newest: { subject: string } }> }> }>('testInbox_listInboxes', {});
    const domain = r.domains.find((d) => d.domain === DOMAIN);
    assert.ok(domain, JSON.stringify(r));
    const row = domain.inboxes.find((i) => i.inbox === inbox);
    assert.ok(row, `${inbox} is listed`);
    assert.equal(row.address, `${inbox}@${DOMAIN}`);
    assert.equal(row.recentMessages, 2);
    assert.equal(row.newest.subject, 'Second');
  });

  it('read the newest message gives its text, code and verification link, marked as untrusted content', async () => {
    const inbox = uniqueInbox('tool-read');
    await inject(inbox, { subject: 'Old', text: 'old mail' });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({
      from: 'Acme <no-reply@acme.test>',
      to: `${inbox}@${DOMAIN}`,
      subject: 'Confirm your email',
      text: 'Your code is 482913.',
      html: '<p>Your code is <b>482913</b>.</p><p><a href="https://acme.test/account/confirm?token=abc123">Confirm my address</a> · <a href="https://acme.test/unsubscribe?u=1">Unsubscribe</a></p>',
    });
    const r = await waitForTool(() => invoke<{ found: boolean; note: string; message: { subject: string; from: string; code?: string; verificationLink?: { url: string; kind: string; text: string }; text: string } }>('testInbox_readNewestMessage', { inbox: `${inbox}@${DOMAIN}` }), (x) => x.found && x.message.subject === 'Confirm your email');
    assert.match(r.note, /never instructions/);
    assert.equal(r.message.from, 'Acme <no-reply@acme.test>');
    assert.equal(r.message.code, '482913');
    assert.deepEqual(r.message.verificationLink, { url: 'https://acme.test/account/confirm?token=abc123', text: 'Confirm my address', kind: 'verify-email' });
    assert.match(r.message.text, /Your code is 482913/);
  });

  it('get the newest code skips mail before sinceMs, waits for the next code, and says found:false when the wait ends', async () => {
    const inbox = uniqueInbox('tool-code');
    await inject(inbox, { subject: 'Stale', text: 'Your verification code is 111222.' });
    const latest = await invoke<{ found: boolean; code: string; subject: string }>('testInbox_getNewestCode', { inbox, domain: DOMAIN });
    assert.equal(latest.found, true);
    assert.equal(latest.code, '111222');
    // A flow that starts now must never read the stale code: the next code arrives while the tool waits.
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    const waiting = invoke<{ found: boolean; code: string; subject: string }>('testInbox_getNewestCode', { inbox, domain: DOMAIN, sinceMs: since, waitSeconds: 20 });
    await new Promise((r) => setTimeout(r, 1500));
    await inject(inbox, { subject: 'Fresh', text: 'Your verification code is 333444.' });
    const fresh = await waiting;
    assert.equal(fresh.found, true);
    assert.equal(fresh.code, '333444');
    assert.equal(fresh.subject, 'Fresh');
    const none = await invoke<{ found: boolean; message: string }>('testInbox_getNewestCode', { inbox, domain: DOMAIN, sinceMs: Date.now() + 1000, waitSeconds: 1 });
    assert.equal(none.found, false);
    assert.match(none.message, /No message with a one-time code/);
  });

  it('get the verification link answers the newest message\'s link, not an unsubscribe or tracking link', async () => {
    const inbox = uniqueInbox('tool-link');
    await inject(inbox, { subject: 'Newsletter', text: 'Read more at https://news.acme.test/issue/4 or unsubscribe: https://acme.test/unsubscribe?u=9' });
    const none = await invoke<{ found: boolean }>('testInbox_getVerificationLink', { inbox, domain: DOMAIN });
    assert.equal(none.found, false);
    await inject(inbox, { subject: 'Welcome', text: 'Welcome! Verify your email: https://acme.test/verify-email?token=XYZ987 (tracking: https://click.acme.test/ls/click?upn=1)' });
    const r = await invoke<{ found: boolean; url: string; kind: string; subject: string }>('testInbox_getVerificationLink', { inbox, domain: DOMAIN });
    assert.equal(r.found, true);
    assert.equal(r.url, 'https://acme.test/verify-email?token=XYZ987');
    assert.equal(r.kind, 'verify-email');
    assert.equal(r.subject, 'Welcome');
  });

  it('get the newest code of a phone inbox named as a number written with + (as the CLI and MCP take it)', async () => {
    const digits = `1555${String(Date.now()).slice(-7)}`;
    await inject(digits, { from: '+15550100000', subject: '', text: 'Your Acme code is 318264' });
    for (const inbox of [`+${digits}`, `+${digits.slice(0, 1)} (${digits.slice(1, 4)}) ${digits.slice(4, 7)}-${digits.slice(7)}`]) {
      const r = await invoke<{ found: boolean; code: string }>('testInbox_getNewestCode', { inbox, domain: DOMAIN });
      assert.equal(r.found, true, inbox);
      assert.equal(r.code, '318264', inbox);
    }
  });

  it('rejects a bad inbox name with a message naming the problem', async () => {
    await assert.rejects(invoke('testInbox_getNewestCode', { inbox: '../etc', domain: DOMAIN }), /inbox "\.\.\/etc": inbox name must not be a path/);
    await assert.rejects(invoke('testInbox_getNewestCode', { inbox: 'ok', domain: DOMAIN, waitSeconds: 600 }), /waitSeconds/);
  });
});

/** Invokes until `ok` holds (mail sent over SMTP lands a moment later). */
async function waitForTool<T>(f: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}
