// The data dir's layout: mail under mail/, the server's own files outside it, every file 0600 and
// every directory 0700. Runs the real server (in process and as a child process), real SMTP,
// real files; the migration starts from a data dir written by release 0.2.0 (the fixture
// test/fixtures/datadir-layout1.tar.gz: that release's server, fed over SMTP with env tokens,
// then SIGKILLed, so it holds a log generation, a stale lock and a stale server.json).

import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { DEFAULT_DOMAIN, SERVER_FILE, TOKENS_FILE } from '../../src/shared/contract';
import { startInboxServer } from '../../src/server/server';
import { LAYOUT_FILE, MAIL_DIR } from '../../src/server/store/maildir/layout';
import { type Running, startCli } from './cliProcess';

const FIXTURE = path.resolve(__dirname, '..', 'fixtures', 'datadir-layout1.tar.gz');
const TOKENS = { apiToken: 'layout-api-token-0000000000', webhookToken: 'layout-webhook-token-000000', twilioAuthToken: 'layout-twilio-token-0000000' };

/** Every entry under `root` with its permission bits, relative paths sorted. */
async function modes(root: string): Promise<Array<{ rel: string; dir: boolean; mode: number }>> {
  const out: Array<{ rel: string; dir: boolean; mode: number }> = [];
  const walk = async (d: string): Promise<void> => {
    for (const name of await fs.readdir(d)) {
      const p = path.join(d, name);
      const st = await fs.lstat(p);
      out.push({ rel: path.relative(root, p), dir: st.isDirectory(), mode: st.mode & 0o777 });
      if (st.isDirectory()) await walk(p);
    }
  };
  const st = await fs.lstat(root);
  out.push({ rel: '.', dir: true, mode: st.mode & 0o777 });
  await walk(root);
  return out.sort((a, b) => a.rel.localeCompare(b.rel));
}

function assertPrivate(entries: Array<{ rel: string; dir: boolean; mode: number }>): void {
  const wrong = entries.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600)).map((e) => `${e.rel} ${e.mode.toString(8)}`);
  assert.deepEqual(wrong, [], 'every directory 0700 and every file 0600');
}

async function inbox(http: string, token: string, domain: string, name: string): Promise<string[]> {
  const res = await fetch(`${http}/api/v2/domains/${encodeURIComponent(domain)}/inboxes/${encodeURIComponent(name)}`, { headers: { authorization: token } });
  assert.equal(res.status, 200, `${name}@${domain}`);
  return ((await res.json()) as { msgs: Array<{ subject: string }> }).msgs.map((m) => m.subject).sort();
}

describe('data dir layout', function () {
  this.timeout(60_000);
  let dataDir: string;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-layout-'));
  });

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  function serve(env: NodeJS.ProcessEnv = {}): Running {
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir], env);
    children.push(r.child);
    return r;
  }

  it('migrates a data dir of release 0.2.0: a domain named tokens.json, device names, a log to replay, 0644 files', async () => {
    execFileSync('tar', ['-xzf', FIXTURE, '-C', dataDir]);
    await fs.chmod(dataDir, 0o755);
    const before = await modes(dataDir);
    assert.ok(before.some((e) => e.rel === TOKENS_FILE && e.dir), 'the fixture has the directory tokens.json/ that release made');
    assert.ok(before.some((e) => !e.dir && e.mode === 0o644), 'and world-readable mail');

    // Started without tokens: release 0.2.0 exited 1 here (EISDIR reading tokens.json).
    const r = serve();
    const ready = await r.ready;
    const tokens = JSON.parse(await fs.readFile(path.join(dataDir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    const read = (domain: string, name: string): Promise<string[]> => inbox(ready.http, tokens.apiToken, domain, name);
    assert.deepEqual(await read('tokens.json', 'x'), ['a domain named like the tokens file']);
    assert.deepEqual(await read('inbox.test', 'joe'), ['after the checkpoint', 'plain one'], 'the message only in the log is replayed');
    assert.deepEqual(await read('inbox.test', "a*b|c?d'e"), ['unsafe characters']);
    assert.deepEqual(await read('inbox.test', 'con'), ['windows device inbox']);
    assert.deepEqual(await read('inbox.test', 'nul.x'), ['device name with an extension']);
    assert.deepEqual(await read('con.example', 'ann'), ['windows device domain']);

    const top = (await fs.readdir(dataDir)).sort();
    assert.deepEqual(top.filter((n) => !n.startsWith('.')), [MAIL_DIR, SERVER_FILE, TOKENS_FILE].sort(), 'only mail/ and the server files at the top');
    assert.deepEqual((await fs.readdir(path.join(dataDir, MAIL_DIR))).sort(), ['%63on.example', 'inbox.test', 'tokens.json']);
    assert.deepEqual((await fs.readdir(path.join(dataDir, MAIL_DIR, 'inbox.test'))).sort(), ['%63on', 'a%2Ab%7Cc%3Fd%27e', 'joe', '%6Eul.x'].sort());
    assert.deepEqual(await fs.readdir(path.join(dataDir, MAIL_DIR, 'inbox.test', '%6Eul.x', 'new')), [(await fs.readdir(path.join(dataDir, MAIL_DIR, 'inbox.test', '%6Eul.x', 'new')))[0]]);
    assert.match((await fs.readdir(path.join(dataDir, MAIL_DIR, 'inbox.test', '%6Eul.x', 'new')))[0], /^%6Eul\.x-\d+-7\.eml$/);
    assert.equal((await fs.readFile(path.join(dataDir, LAYOUT_FILE), 'utf8')).trim(), '2');
    assertPrivate(await modes(dataDir));

    r.child.kill('SIGTERM');
    assert.equal((await r.exited).code, 0);
    // A second start finds the new layout and changes nothing.
    const again = serve();
    const ready2 = await again.ready;
    assert.deepEqual(await inbox(ready2.http, tokens.apiToken, 'inbox.test', 'joe'), ['after the checkpoint', 'plain one']);
    assert.doesNotMatch(again.stderr(), /moved .* domain/);
  });

  it('keeps a recipient named like a server file in mail/: delivery, inject and the next start without tokens work', async () => {
    // Tokens from the environment, as the extension starts the server: no tokens.json on disk.
    const first = serve({ TEST_INBOX_API_TOKEN: TOKENS.apiToken, TEST_INBOX_WEBHOOK_TOKEN: TOKENS.webhookToken, TEST_INBOX_TWILIO_AUTH_TOKEN: TOKENS.twilioAuthToken });
    const ready = await first.ready;
    const [host, port] = ready.smtp.split(':');
    const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
    const info = await transport.sendMail({ from: 'a@example.com', to: ['joe@inbox.test', 'x@tokens.json', 'y@server.json', 'z@mail', 'w@layout'], subject: 'names', text: 'hi' });
    assert.match(info.response, /^250 /);
    const inject = await fetch(`${ready.http}/api/v2/domains/tokens.json/inboxes/joe/messages`, {
      method: 'POST',
      headers: { authorization: TOKENS.apiToken, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'a@example.com', subject: 'inject', text: 'hi' }),
    });
    assert.equal(inject.status, 200, await inject.text());
    await first.stop();
    assert.deepEqual((await fs.readdir(path.join(dataDir, MAIL_DIR))).sort(), ['inbox.test', 'layout', 'mail', 'server.json', 'tokens.json']);

    // Next start without tokens in the environment: tokens.json is generated as a file.
    const second = serve();
    const ready2 = await second.ready;
    const st = await fs.stat(path.join(dataDir, TOKENS_FILE));
    assert.ok(st.isFile());
    const { apiToken } = JSON.parse(await fs.readFile(path.join(dataDir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    assert.deepEqual(await inbox(ready2.http, apiToken, 'tokens.json', 'joe'), ['inject']);
    assert.deepEqual(await inbox(ready2.http, apiToken, 'server.json', 'y'), ['names']);
  });

  it('writes every file 0600 and every directory 0700: mail, log, journal, lock, tokens, server file', async () => {
    const server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...TOKENS, defaultDomain: DEFAULT_DOMAIN });
    try {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
      for (let i = 0; i < 3; i++) await transport.sendMail({ from: 'a@example.com', to: `u${i}@inbox.test`, subject: `m${i}`, text: 'hi' });
      const res = await fetch(`${server.httpUrl}/api/v2/domains/other.test/inboxes/ann/messages`, {
        method: 'POST',
        headers: { authorization: TOKENS.apiToken, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'a@example.com', subject: 'inject', text: 'hi' }),
      });
      assert.equal(res.status, 200);
      // The index journal is written within 200 ms, and the files by the materialiser just after
      // the acknowledgements: waited for, not timed (a loaded machine takes longer).
      let entries = await modes(dataDir);
      for (let i = 0; i < 100 && (entries.filter((e) => e.rel.endsWith('.eml')).length < 4 || !entries.some((e) => e.rel === '.index-journal')); i++) {
        await new Promise((r) => setTimeout(r, 100));
        entries = await modes(dataDir);
      }
      for (const name of ['.lock', '.index-journal', SERVER_FILE, LAYOUT_FILE]) assert.ok(entries.some((e) => e.rel === name), name);
      assert.ok(entries.some((e) => e.rel.startsWith('.wal-')), 'a log generation');
      assert.equal(entries.filter((e) => e.rel.endsWith('.eml')).length, 4);
      assertPrivate(entries);
    } finally {
      await server.close();
    }
  });

  it('tightens on start what was widened since: mail, folders, journal, lock', async () => {
    const env = { TEST_INBOX_API_TOKEN: TOKENS.apiToken, TEST_INBOX_WEBHOOK_TOKEN: TOKENS.webhookToken, TEST_INBOX_TWILIO_AUTH_TOKEN: TOKENS.twilioAuthToken };
    const first = serve(env);
    const ready = await first.ready;
    const [host, port] = ready.smtp.split(':');
    await nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true }).sendMail({ from: 'a@example.com', to: 'joe@inbox.test', subject: 's', text: 'hi' });
    await first.stop();
    // What a copy without -p, or a chmod -R, leaves behind.
    for (const e of await modes(dataDir)) await fs.chmod(path.join(dataDir, e.rel), e.dir ? 0o755 : 0o644);
    assert.ok((await modes(dataDir)).every((e) => e.mode === (e.dir ? 0o755 : 0o644)));

    const again = serve(env);
    await again.ready;
    let entries = await modes(dataDir);
    const said = /made \d+ file\(s\) and folder\(s\) under .* private/;
    // Mail is tightened just after the start, and the line saying so follows the last chmod.
    for (let i = 0; i < 50 && (entries.some((e) => e.mode !== (e.dir ? 0o700 : 0o600)) || !said.test(again.stderr())); i++) {
      await new Promise((r) => setTimeout(r, 100));
      entries = await modes(dataDir);
    }
    assert.ok(entries.some((e) => e.rel.endsWith('.eml')));
    assertPrivate(entries);
    assert.match(again.stderr(), said);
  });
});
