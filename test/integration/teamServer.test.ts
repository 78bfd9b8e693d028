// The extension attached to a team server: two real `test-inbox serve` processes
// (the built dist/cli.js) on one throwaway PostgreSQL cluster, the extension pointed at the
// first by URL with the API token set. The server proves it takes that token, so the extension
// uses its push stream and its domain list (not the hosted service's polling of `private`), and
// mail injected through either process, or sent over SMTP to the other, shows up in the tree.
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import * as vscode from 'vscode';
import { parseReadyLine, type ReadyLine } from '../../src/shared/contract';
import { type Cluster, startCluster } from '../support/postgres';
import { getExtension } from './helpers';
import { answering, findNode, inboxNode, setSetting, uniqueInbox, useLocalServer, waitForState } from './support/state';

const API_TOKEN = 'it-team-api-4b8e2d6f1a9c';
const WEBHOOK_TOKEN = 'it-team-wh-7e3a1c5b9d0f';
const DOMAIN = 'team.test';

interface Process {
  child: ChildProcess;
  ready: ReadyLine;
  stderr: () => string;
}

/** Starts `serve` from the extension's own dist/cli.js on free ports with the team's store. */
async function serve(store: string, dataDir: string): Promise<Process> {
  const cli = path.join(getExtension().extensionPath, 'dist', 'cli.js');
  const child = spawn(process.execPath, [cli, 'serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--domain', DOMAIN, '--store', store], {
    env: { PATH: process.env.PATH, TEST_INBOX_API_TOKEN: API_TOKEN, TEST_INBOX_WEBHOOK_TOKEN: WEBHOOK_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const ready = await new Promise<ReadyLine>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const line = parseReadyLine(out.slice(0, nl));
      if (line) resolve(line);
      else reject(new Error(`not a ready line: ${out.slice(0, nl)}`));
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code} before it was ready:\n${err}`)));
  });
  return { child, ready, stderr: () => err };
}

describe('Test Inbox attached to a two-process team server on PostgreSQL', function () {
  this.timeout(120_000);
  let cluster: Cluster;
  const dirs: string[] = [];
  let a: Process;
  let b: Process;

  before(async () => {
    cluster = await startCluster();
    const store = await cluster.createDatabase('team_it');
    for (let i = 0; i < 2; i++) dirs.push(await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-it-team-')));
    // One after the other: the first applies the migrations, the second finds them applied.
    a = await serve(store, dirs[0]);
    b = await serve(store, dirs[1]);
    // A long poll interval: whatever arrives within the test's waits came by the push stream.
    await setSetting('pollIntervalSeconds', 300);
    await setSetting('server', a.ready.http);
    await waitForState((s) => s.tokenKey === a.ready.http, 'the new server setting');
    await answering(vscode.commands.executeCommand('testInbox.setApiToken', API_TOKEN));
    await vscode.commands.executeCommand('workbench.view.extension.testInbox');
  });

  after(async () => {
    await vscode.commands.executeCommand('testInbox.clearApiToken');
    await setSetting('pollIntervalSeconds', undefined);
    await useLocalServer();
    for (const p of [a, b]) if (p && p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all([a, b].filter((p) => p && p.child.exitCode === null).map((p) => new Promise((r) => p.child.once('exit', r))));
    cluster?.destroy();
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  const inject = async (base: string, inbox: string, subject: string): Promise<void> => {
    const res = await fetch(`${base}/api/v2/domains/${DOMAIN}/inboxes/${inbox}`, {
      method: 'POST',
      headers: { authorization: API_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'ci@team.test', subject, text: `Your code is 40${subject.length}17.` }),
    });
    assert.equal(res.status, 200, await res.text());
  };

  it('knows the remote URL for a Test Inbox server: its domain, its push stream, no polling of private', async () => {
    const st = await waitForState(
      (s) => s.connection.kind === 'ready' && s.connection.baseUrl === a.ready.http && s.live[DOMAIN] === 'stream:open',
      'the team server connected with its push stream open',
      30_000,
    );
    assert.equal(st.connection.local, false);
    assert.equal(st.connection.testInbox, true);
    assert.equal(st.connection.defaultDomain, DOMAIN);
    assert.deepEqual(Object.keys(st.live), [DOMAIN], 'the server’s own domain is watched; the hosted service’s private is not polled');
  });

  it('shows mail injected through either process, pushed by the stream', async () => {
    const inbox = uniqueInbox('team');
    await inject(b.ready.http, inbox, 'Through the second process');
    await waitForState((s) => findNode(s.tree, (n) => n.label === 'Through the second process') !== undefined, 'the message injected through the other process', 20_000);
    await inject(a.ready.http, inbox, 'Through the first process');
    const st = await waitForState((s) => findNode(s.tree, (n) => n.label === 'Through the first process') !== undefined, 'the message injected through the attached process', 20_000);
    assert.ok(inboxNode(st.tree, DOMAIN, inbox), 'one inbox row holds both');
    assert.deepEqual(st.tree.map((n) => n.label), [DOMAIN], 'the server’s own domain, not the hosted service’s private');
    assert.equal(st.live[DOMAIN], 'stream:open', 'still by the stream, not by polling');
  });

  it('shows mail sent over SMTP to the other process', async () => {
    const inbox = uniqueInbox('smtp');
    const [host, port] = [b.ready.smtp.host, b.ready.smtp.port];
    const transport = nodemailer.createTransport({ host, port, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'app@team.test', to: `${inbox}@${DOMAIN}`, subject: 'Sent to the second process', text: 'Your code is 731904.' });
    transport.close();
    await waitForState((s) => findNode(s.tree, (n) => n.label === 'Sent to the second process') !== undefined, 'the SMTP message', 20_000);
  });
});
