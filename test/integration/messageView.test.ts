// The message view in a real extension host: a real local inbox server (the server's own
// modules) on free ports, an email sent over real SMTP with nodemailer and an SMS injected
// through the HTTP API, opened with `showMessage`; the assertions read what the webview
// itself confirmed rendering. A counting HTTP server stands for a tracker: the hostile
// email's remote image must not be requested until the user allows remote images.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import nodemailer from 'nodemailer';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { Logger } from '../../src/extension/log';
import {
  disposeMessagePanels,
  lastRenderedMessage,
  openMessagePanels,
  panelPhase,
  showMessage,
  simulateViewRequest,
  watchingSettings,
  type MessagePanelDeps,
} from '../../src/extension/messagePanel/messagePanel';
import { getExtension, waitFor } from './helpers';

const API_TOKEN = 'it-message-view-api-5d2c8e1f0a';
const WEBHOOK_TOKEN = 'it-message-view-wh-9b7a3c6e4d';
const DOMAIN = 'view.test';
const PHONE = '14155550123';

describe('message view (webview panel)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: InboxServer;
  let api: InboxApi;
  let tracker: http.Server;
  let trackerHits: string[];
  let trackerUrl: string;
  let deps: MessagePanelDeps;
  let log: vscode.LogOutputChannel;

  async function newestId(inbox: string): Promise<string> {
    return waitFor(async () => (await api.listInbox('private', inbox, { limit: 1 })).msgs[0]?.id, { message: `a message in ${inbox}` });
  }

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-view-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, defaultDomain: DOMAIN });
    api = createClient({ baseUrl: server.httpUrl, apiToken: API_TOKEN });
    trackerHits = [];
    tracker = http.createServer((req, res) => {
      trackerHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/gif' });
      res.end(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));
    });
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
    trackerUrl = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    log = vscode.window.createOutputChannel('Test Inbox (message view test)', { log: true });
    deps = { context: { extensionUri: getExtension().extensionUri }, api, log: new Logger(log), allowRemoteImages: false };
  });

  after(async () => {
    disposeMessagePanels();
    await vscode.workspace.getConfiguration('testInbox').update('remoteImages', undefined, vscode.ConfigurationTarget.Global);
    log?.dispose();
    await api?.dispose();
    await server?.close();
    await new Promise<void>((resolve) => (tracker ? tracker.close(() => resolve()) : resolve()));
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('renders an email sent over SMTP with its tabs and detected code, and loads no remote image', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({
      from: 'Acme <no-reply@acme.test>',
      to: `joe@${DOMAIN}`,
      subject: 'Your Acme sign-in code',
      text: 'Your verification code is 482913.\nVerify: https://acme.test/verify?t=1',
      html:
        '<p onclick="document.title=1">Your verification code is <b>482913</b>.</p>' +
        '<a href="https://acme.test/verify?t=1">Verify</a>' +
        `<img src="${trackerUrl}/pixel.gif?m=1" width="1" height="1">` +
        `<div style="background:url(${trackerUrl}/bg.png)">x</div>` +
        `<script>new Image().src = "${trackerUrl}/script"</script>` +
        `<img src="x" onerror="this.src='${trackerUrl}/onerror'">` +
        `<svg onload="new Image().src='${trackerUrl}/svg'"></svg>` +
        `<meta http-equiv="refresh" content="0;url=${trackerUrl}/refresh">` +
        `<link rel="stylesheet" href="${trackerUrl}/style.css">`,
      attachments: [{ filename: 'notes.txt', content: 'attached notes\n', contentType: 'text/plain' }],
    });
    transport.close();
    const id = await newestId('joe');

    await showMessage(deps, { domain: 'private', inbox: 'joe', id });
    const shown = await waitFor(() => (lastRenderedMessage()?.id === id ? lastRenderedMessage() : undefined), { message: 'the view to confirm the email', timeoutMs: 20_000 });
    assert.equal(shown.kind, 'email');
    assert.deepEqual(shown.tabs, ['html', 'text', 'headers', 'links', 'attachments', 'raw']);
    assert.equal(shown.code, '482913');
    assert.equal(shown.linkCount, 1);
    assert.equal(shown.attachmentCount, 1);
    assert.equal(shown.remoteImagesAllowed, false);
    assert.equal(shown.blockedRemoteImages, 2);
    // Give the frame time to (not) fetch; the assertion is on requests, not on time.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(trackerHits, [], 'the tracker saw a request before remote images were allowed');
  });

  it('reuses the panel when the same message is opened again', async () => {
    const id = await newestId('joe');
    const before = openMessagePanels();
    await showMessage(deps, { domain: 'private', inbox: 'joe', id });
    assert.equal(openMessagePanels(), before);
  });

  it('copies the detected code to the clipboard when the view asks', async () => {
    const id = await newestId('joe');
    await vscode.env.clipboard.writeText('');
    await simulateViewRequest(id, { type: 'copyCode' });
    assert.equal(await vscode.env.clipboard.readText(), '482913');
    await simulateViewRequest(id, { type: 'copyId' });
    assert.equal(await vscode.env.clipboard.readText(), id);
  });

  it('ignores malformed requests and links the message does not contain, without prompting', async () => {
    const id = await newestId('joe');
    await vscode.env.clipboard.writeText('unchanged');
    // A modal would block these calls until the suite timed out; they return at once instead.
    await simulateViewRequest(id, { type: 'runCommand', command: 'workbench.action.quit' });
    await simulateViewRequest(id, { type: 'openLink', url: 'https://evil.test/not-in-the-message' });
    await simulateViewRequest(id, { type: 'openLink', url: 'javascript:alert(1)' });
    await simulateViewRequest(id, { type: 'saveAttachment', index: 99 });
    assert.equal(await vscode.env.clipboard.readText(), 'unchanged');
    assert.equal(panelPhase(id), 'render');
  });

  it('re-renders with remote images once the user allows them for that message', async () => {
    const id = await newestId('joe');
    await simulateViewRequest(id, { type: 'allowRemoteImages' });
    const shown = await waitFor(() => (lastRenderedMessage()?.id === id && lastRenderedMessage()?.remoteImagesAllowed ? lastRenderedMessage() : undefined), {
      message: 'the view to confirm the re-render with remote images',
      timeoutMs: 20_000,
    });
    assert.equal(shown.blockedRemoteImages, 0);
    await waitFor(() => trackerHits.some((u) => u.startsWith('/pixel.gif')), { message: 'the allowed remote image to be requested', timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const unexpected = trackerHits.filter((u) => !u.startsWith('/pixel.gif') && !u.startsWith('/bg.png'));
    assert.deepEqual(unexpected, [], 'only images were requested: no script, handler, refresh or stylesheet ran');
  });

  it('re-renders an open panel with remote images when the testInbox.remoteImages setting is turned on', async () => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({
      from: 'News <news@acme.test>',
      to: `ann@${DOMAIN}`,
      subject: 'Newsletter',
      html: `<p>Hello</p><img src="${trackerUrl}/setting.gif?m=2" width="1" height="1">`,
    });
    transport.close();
    const id = await newestId('ann');
    await showMessage(deps, { domain: 'private', inbox: 'ann', id });
    const blocked = await waitFor(() => (lastRenderedMessage()?.id === id ? lastRenderedMessage() : undefined), { message: 'the view to confirm the newsletter', timeoutMs: 20_000 });
    assert.equal(blocked.remoteImagesAllowed, false);
    assert.equal(blocked.blockedRemoteImages, 1);
    assert.equal(watchingSettings(), true, 'an open panel listens for the setting');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(trackerHits.some((u) => u.startsWith('/setting.gif')), false, 'the image loaded before the setting allowed it');

    await vscode.workspace.getConfiguration('testInbox').update('remoteImages', true, vscode.ConfigurationTarget.Global);
    const allowed = await waitFor(() => (lastRenderedMessage()?.id === id && lastRenderedMessage()?.remoteImagesAllowed ? lastRenderedMessage() : undefined), {
      message: 'the open panel to re-render after the setting changed',
      timeoutMs: 20_000,
    });
    assert.equal(allowed.blockedRemoteImages, 0);
    await waitFor(() => trackerHits.some((u) => u.startsWith('/setting.gif')), { message: 'the remote image to be requested once the setting allows it', timeoutMs: 20_000 });
    await vscode.workspace.getConfiguration('testInbox').update('remoteImages', undefined, vscode.ConfigurationTarget.Global);
  });

  it('renders an SMS as a conversation with its code', async () => {
    const injected = await api.inject('private', PHONE, { from: '15551234567', subject: 'SMS', text: 'Your Acme code: 7731. Do not share it.' });
    await showMessage(deps, { domain: 'private', inbox: PHONE, id: injected.id });
    const shown = await waitFor(() => (lastRenderedMessage()?.id === injected.id ? lastRenderedMessage() : undefined), { message: 'the view to confirm the SMS', timeoutMs: 20_000 });
    assert.equal(shown.kind, 'sms');
    assert.equal(shown.tabs[0], 'conversation');
    assert.equal(shown.code, '7731');
  });

  it('shows an error with Retry for a message that does not exist', async () => {
    const id = 'joe-1700000000-999';
    await showMessage(deps, { domain: 'private', inbox: 'joe', id });
    await waitFor(() => panelPhase(id) === 'error', { message: 'the error state' });
    await simulateViewRequest(id, { type: 'retry' });
    await waitFor(() => panelPhase(id) === 'error', { message: 'the error state after retry' });
    assert.notEqual(lastRenderedMessage()?.id, id);
  });

  it('stops listening for settings once the last panel is closed', () => {
    assert.ok(openMessagePanels() > 0);
    disposeMessagePanels();
    assert.equal(openMessagePanels(), 0);
    assert.equal(watchingSettings(), false);
  });
});
