import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { ALLOWED_HOSTS_ENV, EXIT_DATA_DIR_IN_USE, EXIT_PORT_IN_USE, EXIT_USAGE, parseReadyLine, TOKENS_FILE, tokensEnv } from '../../src/shared/contract';
import { reachableHosts } from '../../src/server/server';
import { parseServeArgs, type ServeConfig } from '../../src/cli/cli';
import { SERVE_OPTIONS } from '../../src/cli/serveOptions';
import { runTestCommand, TEST_COMMANDS } from '../../src/cli/testCommands';
import { UsageError } from '../../src/shared/args';
import { parseDuration } from '../../src/core/duration';
import { LOCK_FILE } from '../../src/server/store/maildir/lock';
import { loadOrCreateTokens, TokensError } from '../../src/server/tokens';
import { type Running, spawnChild, startCli } from './cliProcess';
import { modesApply } from '../../src/shared/portableFs';
import { cliEntry } from '../support/cli';

describe('test-inbox serve (CLI)', function () {
  this.timeout(60_000);
  let dataDir: string;
  const children: ChildProcess[] = [];

  function run(args: string[], env?: NodeJS.ProcessEnv): Running {
    const r = startCli(args, env);
    children.push(r.child);
    return r;
  }

  const freePorts = ['--http-port', '0', '--smtp-port', '0'];

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-cli-'));
  });

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it('prints exactly one JSON line with the HTTP URL and SMTP address when ready, logs on stderr, and exits 0 on SIGTERM', async function () {
    // POSIX signals: on Windows SIGTERM is TerminateProcess, and the clean stop is the IPC channel (platform-stops.test.ts).
    if (process.platform === 'win32') this.skip();
    const r = run(['serve', ...freePorts, '--data-dir', dataDir]);
    const ready = await r.ready;
    assert.match(ready.http, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(ready.smtp, /^127\.0\.0\.1:\d+$/);
    assert.deepEqual(Object.keys(ready), ['http', 'smtp']);
    const health = await fetch(`${ready.http}/healthz`);
    assert.equal(health.status, 200);
    r.child.kill('SIGTERM');
    assert.deepEqual(await r.exited, { code: 0, signal: null });
    assert.equal(r.stdout().trim().split('\n').length, 1, 'stdout holds only the ready line');
    assert.match(r.stderr(), /listening/);
  });

  it('exits 0 on SIGINT too', async function () {
    // Node delivers a Windows console's Ctrl+C as SIGINT, but process.kill(pid, 'SIGINT') there is TerminateProcess.
    if (process.platform === 'win32') this.skip();
    const r = run(['serve', ...freePorts, '--data-dir', dataDir]);
    await r.ready;
    r.child.kill('SIGINT');
    assert.deepEqual(await r.exited, { code: 0, signal: null });
  });

  it('generates tokens into tokens.json (mode 0600) and shows them once, only when newly generated', async () => {
    const first = run(['serve', ...freePorts, '--data-dir', dataDir]);
    const ready = await first.ready;
    const file = path.join(dataDir, TOKENS_FILE);
    const saved = JSON.parse(await fs.readFile(file, 'utf8')) as { apiToken: string; webhookToken: string };
    if (modesApply()) assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
    assert.ok(first.stderr().includes(saved.apiToken) && first.stderr().includes(saved.webhookToken));
    assert.notEqual(saved.apiToken, saved.webhookToken);
    const ok = await fetch(`${ready.http}/api/v2/domains`, { headers: { Authorization: saved.apiToken } });
    assert.equal(ok.status, 200);
    const wrong = await fetch(`${ready.http}/api/v2/domains`, { headers: { Authorization: saved.webhookToken } });
    assert.equal(wrong.status, 403);
    await first.stop();

    const second = run(['serve', ...freePorts, '--data-dir', dataDir]);
    const again = await second.ready;
    assert.ok(!second.stderr().includes(saved.apiToken), 'tokens are not shown again');
    assert.ok(!second.stderr().includes(saved.webhookToken));
    assert.equal((await fetch(`${again.http}/api/v2/domains`, { headers: { Authorization: saved.apiToken } })).status, 200);
  });

  it('generates a Twilio auth token of its own into tokens.json (0600); it opens the Twilio API and nothing else', async () => {
    const r = run(['serve', ...freePorts, '--data-dir', dataDir]);
    const ready = await r.ready;
    const file = path.join(dataDir, TOKENS_FILE);
    const saved = JSON.parse(await fs.readFile(file, 'utf8')) as { apiToken: string; webhookToken: string; twilioAuthToken: string };
    if (modesApply()) assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
    assert.match(saved.twilioAuthToken, /^[A-Za-z0-9_-]{32}$/);
    assert.ok(saved.twilioAuthToken !== saved.apiToken && saved.twilioAuthToken !== saved.webhookToken);
    const account = `AC${'0'.repeat(32)}`;
    const send = (token: string) =>
      fetch(`${ready.http}/2010-04-01/Accounts/${account}/Messages.json`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${account}:${token}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'To=%2B15550100199&From=%2B15550100000&Body=hi',
      });
    assert.equal((await send(saved.twilioAuthToken)).status, 201);
    assert.equal((await send(saved.apiToken)).status, 401);
    assert.equal((await fetch(`${ready.http}/api/v2/domains`, { headers: { Authorization: saved.twilioAuthToken } })).status, 403);
  });

  it('takes the Twilio auth token from --twilio-auth-token, or TEST_INBOX_TWILIO_AUTH_TOKEN, without writing it', () => {
    const env = tokensEnv({ apiToken: 'a', webhookToken: 'w', twilioAuthToken: 'tw-env' });
    assert.equal(env.TEST_INBOX_TWILIO_AUTH_TOKEN, 'tw-env');
    const fromEnv = parseServeArgs(['serve'], env);
    assert.ok(fromEnv !== 'help' && fromEnv !== 'version');
    assert.equal(fromEnv.twilioAuthToken, 'tw-env');
    const fromFlag = parseServeArgs(['serve', '--twilio-auth-token', 'tw-flag'], env);
    assert.ok(fromFlag !== 'help' && fromFlag !== 'version');
    assert.equal(fromFlag.twilioAuthToken, 'tw-flag');
    assert.throws(() => parseServeArgs(['serve', '--twilio-auth-token', ''], {}), /must not be empty/);
  });

  it('takes tokens from the environment without writing or showing them', async () => {
    const r = run(['serve', ...freePorts, '--data-dir', dataDir], tokensEnv({ apiToken: 'api-from-env-123', webhookToken: 'wh-from-env-456', twilioAuthToken: 'tw-from-env-789', providerKey: 'SG.pk-from-env.012' }));
    const ready = await r.ready;
    assert.equal((await fetch(`${ready.http}/api/v2/domains`, { headers: { Authorization: 'api-from-env-123' } })).status, 200);
    assert.equal(existsSync(path.join(dataDir, TOKENS_FILE)), false);
    assert.ok(!r.stderr().includes('api-from-env-123') && !r.stderr().includes('wh-from-env-456') && !r.stderr().includes('tw-from-env-789') && !r.stderr().includes('SG.pk-from-env.012'));
  });

  it('delivers SMTP mail to name@domain and serves it over HTTP under private', async () => {
    const r = run(['serve', ...freePorts, '--data-dir', dataDir, '--api-token', 'tok-a', '--webhook-token', 'tok-w']);
    const ready = await r.ready;
    const smtpPort = Number(ready.smtp.split(':')[1]);
    await nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true }).sendMail({
      from: 'Acme <no-reply@acme.test>',
      to: 'joe@inbox.test',
      subject: 'Your code',
      text: 'Your code is 123456',
    });
    const listing = (await (await fetch(`${ready.http}/api/v2/domains/private/inboxes/joe`, { headers: { Authorization: 'tok-a' } })).json()) as { msgs: Array<{ subject: string; id: string }> };
    assert.deepEqual(listing.msgs.map((m) => m.subject), ['Your code']);
    // Acknowledged from the write-ahead log; the materialiser writes the .eml just after.
    const eml = path.join(dataDir, 'mail', 'inbox.test', 'joe', 'new', `${listing.msgs[0].id}.eml`);
    for (const deadline = Date.now() + 10_000; !existsSync(eml) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
    assert.ok(existsSync(eml));
  });

  it('keeps, serves and finds mail in a data dir whose path has spaces and non-ASCII letters (C:\\Users\\José Núñez\\…)', async () => {
    const dir = path.join(dataDir, 'José Núñez', 'Application Support', 'test-inbox');
    const r = run(['serve', ...freePorts, '--data-dir', dir]);
    const ready = await r.ready;
    const tokens = JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    await nodemailer.createTransport({ host: '127.0.0.1', port: Number(ready.smtp.split(':')[1]), secure: false, ignoreTLS: true }).sendMail({
      from: 'Acme <no-reply@acme.test>',
      to: 'jose@inbox.test',
      subject: 'Código für José Núñez',
      text: 'Your code is 482913',
    });
    const listing = (await (await fetch(`${ready.http}/api/v2/domains/private/inboxes/jose`, { headers: { Authorization: tokens.apiToken } })).json()) as { msgs: Array<{ subject: string; id: string }> };
    assert.deepEqual(listing.msgs.map((m) => m.subject), ['Código für José Núñez']);
    // The test commands find the server by the folder's server.json and tokens.json.
    const out: string[] = [];
    const io = { stdout: { write: (t: string) => out.push(t) > 0 }, stderr: { write: () => true } };
    assert.equal(await runTestCommand(['code', 'jose', '--data-dir', dir, '--wait', '5s'], io), 0);
    assert.equal(out.join('').trim(), '482913');
    // And the mail is still there after a restart on that folder.
    assert.deepEqual(await r.stop(), { code: 0, signal: null });
    const again = await run(['serve', ...freePorts, '--data-dir', dir]).ready;
    const after = (await (await fetch(`${again.http}/api/v2/domains/private/inboxes/jose`, { headers: { Authorization: tokens.apiToken } })).json()) as { msgs: Array<{ id: string }> };
    assert.deepEqual(after.msgs.map((m) => m.id), [listing.msgs[0].id]);
  });

  it('writes private injections to the --domain and keeps at most --max-messages per inbox', async () => {
    const r = run(['serve', ...freePorts, '--data-dir', dataDir, '--api-token', 'tok-a', '--webhook-token', 'tok-w', '--domain', 'Example.TEST', '--max-messages', '2']);
    const ready = await r.ready;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${ready.http}/api/v2/domains/private/inboxes/joe`, {
        method: 'POST',
        headers: { Authorization: 'tok-a', 'Content-Type': 'application/json' },
        body: JSON.stringify({ from: 'a@acme.test', subject: `n${i}`, text: 'hi' }),
      });
      assert.equal(res.status, 200);
      ids.push(((await res.json()) as { id: string }).id);
    }
    await r.stop();
    const files = (await fs.readdir(path.join(dataDir, 'mail', 'example.test', 'joe', 'new'))).sort();
    assert.deepEqual(files, ids.slice(1).map((id) => `${id}.eml`).sort());
  });

  it('uses $XDG_DATA_HOME/test-inbox when no --data-dir is given', async () => {
    const r = run(['serve', ...freePorts], { XDG_DATA_HOME: dataDir });
    await r.ready;
    assert.ok(existsSync(path.join(dataDir, 'test-inbox', TOKENS_FILE)));
  });

  it('stops when the process that forked it dies, even by SIGKILL', async () => {
    // A parent that forks the CLI with an IPC channel, as the extension does, and reports the child's pid.
    const parentScript = `
      const { fork } = require('node:child_process');
      const c = fork(process.argv[1], process.argv.slice(2), { execArgv: process.argv[1].endsWith('.ts') ? ['--import', 'tsx'] : [], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
      c.stdout.once('data', () => process.stdout.write(JSON.stringify({ pid: c.pid }) + '\\n'));
      setInterval(() => {}, 1000);`;
    // The bundle under `npm test` and Windows' Node, else the source through tsx (test/support/cli.ts).
    const cli = cliEntry().cliPath;
    const parent = spawnChild(process.execPath, ['-e', parentScript, cli, 'serve', '--data-dir', dataDir, ...freePorts], {
      cwd: path.join(__dirname, '..', '..'),
      env: { ...process.env, ...tokensEnv({ apiToken: 'a'.repeat(24), webhookToken: 'b'.repeat(24) }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(parent);
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      parent.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      parent.once('exit', (code) => reject(new Error(`parent exited with ${code}`)));
    });
    const { pid } = JSON.parse(line) as { pid: number };
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    assert.equal(alive(), true, 'the forked server runs');
    parent.kill('SIGKILL');
    for (let i = 0; i < 200 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    if (alive()) process.kill(pid, 'SIGKILL');
    assert.equal(alive(), false, 'the server outlived its parent');
  });

  it('reports a port in use in one line and exits 2, generating and showing no token', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const r = run(['serve', '--http-port', String(port), '--smtp-port', '0', '--data-dir', dataDir]);
      const { code } = await r.exited;
      assert.equal(code, EXIT_PORT_IN_USE);
      assert.equal(r.stdout(), '');
      const lines = r.stderr().trim().split('\n').filter((l) => l.startsWith('test-inbox:'));
      assert.equal(lines.length, 1, r.stderr());
      assert.match(lines[0], new RegExp(`HTTP port 127\\.0\\.0\\.1:${port} is already in use`));
      assert.doesNotMatch(r.stderr(), /generated|token/i, 'no token is generated or shown by a start that fails');
      assert.equal(existsSync(path.join(dataDir, TOKENS_FILE)), false, 'no tokens file is written by a start that fails');
    } finally {
      blocker.close();
    }
  });

  it('refuses a second server on the same data dir, naming the first, and starts once the first stopped', async () => {
    const first = run(['serve', ...freePorts, '--data-dir', dataDir]);
    await first.ready;
    const second = run(['serve', ...freePorts, '--data-dir', dataDir]);
    const { code } = await second.exited;
    assert.equal(code, EXIT_DATA_DIR_IN_USE);
    assert.equal(second.stdout(), '');
    assert.match(second.stderr(), new RegExp(`in use by another Test Inbox server \\(process ${first.child.pid}\\)`));
    assert.equal((await first.stop()).code, 0);
    assert.equal(existsSync(path.join(dataDir, LOCK_FILE)), false, 'the lock is released on a clean stop');
    const third = run(['serve', ...freePorts, '--data-dir', dataDir]);
    await third.ready;
    third.child.kill('SIGKILL');
    await third.exited;
    // A lock left by a killed server is taken over.
    const fourth = run(['serve', ...freePorts, '--data-dir', dataDir]);
    await fourth.ready;
    assert.equal((await fs.readFile(path.join(dataDir, LOCK_FILE), 'utf8')).trim(), String(fourth.child.pid));
    await fourth.stop();
  });

  it('refuses a bad command line with a clear message and exit code 64', async () => {
    for (const args of [['serve', '--http-port', 'abc'], ['serve', '--nope'], ['bogus'], ['serve', '--max-age', 'soon']]) {
      const r = run([...args, '--data-dir', dataDir]);
      const { code } = await r.exited;
      assert.equal(code, EXIT_USAGE, args.join(' '));
      assert.match(
        r.stderr(),
        args[0] === 'serve' ? /^test-inbox: .+\nUsage: test-inbox serve \[options\]\nRun test-inbox serve --help for the options\.\n$/ : /^test-inbox: .+\nUsage: test-inbox <command> \[options\]\nRun test-inbox --help for the commands\.\n$/,
        args.join(' '),
      );
    }
  });

  it('names an unknown option in its own words, not node:util\'s', async () => {
    const r = run(['serve', '--bogus', '--data-dir', dataDir]);
    assert.equal((await r.exited).code, EXIT_USAGE);
    assert.equal(r.stderr(), 'test-inbox: unknown option --bogus\nUsage: test-inbox serve [options]\nRun test-inbox serve --help for the options.\n');
    const noValue = run(['serve', '--data-dir', dataDir, '--http-port']);
    assert.equal((await noValue.exited).code, EXIT_USAGE);
    assert.match(noValue.stderr(), /^test-inbox: --http-port needs a value\n/);
  });

  /** The status of GET /healthz at `base` sent with this Host header (fetch sets its own Host). */
  function healthzAs(base: string, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${base}/healthz`, { headers: { host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
  }

  it('answers a Host named in --allowed-hosts or TEST_INBOX_ALLOWED_HOSTS (a compose service name, a LAN address), and 421 to any other', async () => {
    const byFlag = run(['serve', ...freePorts, '--data-dir', dataDir, '--allowed-hosts', 'testinbox, 192.168.77.5:8025']);
    const ready = await byFlag.ready;
    const port = new URL(ready.http).port;
    assert.equal(await healthzAs(ready.http, `testinbox:${port}`), 200);
    assert.equal(await healthzAs(ready.http, 'TestInbox:8025'), 200, 'a name: any port, any case');
    assert.equal(await healthzAs(ready.http, '192.168.77.5:8025'), 200, 'host:port: that port');
    assert.equal(await healthzAs(ready.http, '192.168.77.5:8026'), 421);
    assert.equal(await healthzAs(ready.http, `rebound.example:${port}`), 421, 'DNS-rebinding protection stays');
    await byFlag.stop();
    const byEnv = run(['serve', ...freePorts, '--data-dir', dataDir], { [ALLOWED_HOSTS_ENV]: 'mailhog-like' });
    const again = await byEnv.ready;
    assert.equal(await healthzAs(again.http, 'mailhog-like'), 200);
    assert.equal(await healthzAs(again.http, 'testinbox'), 421);
  });

  it('refuses a wildcard or malformed --allowed-hosts entry at start, with exit code 64', async () => {
    for (const [args, env] of [
      [['--allowed-hosts', '*'], {}],
      [['--allowed-hosts', 'testinbox,*.lan'], {}],
      [['--allowed-hosts', '.lan'], {}],
      [[], { [ALLOWED_HOSTS_ENV]: '*' }],
      [['--allowed-hosts', 'http://testinbox:8025'], {}],
    ] as Array<[string[], NodeJS.ProcessEnv]>) {
      const r = run(['serve', ...freePorts, '--data-dir', dataDir, ...args], env);
      assert.equal((await r.exited).code, EXIT_USAGE, JSON.stringify([args, env]));
      assert.match(r.stderr(), /^test-inbox: --allowed-hosts \(or TEST_INBOX_ALLOWED_HOSTS\): .+\nUsage: test-inbox serve/, JSON.stringify([args, env]));
      assert.equal(r.stdout(), '');
    }
  });

  it('bound to every interface (--host 0.0.0.0), prints a ready line whose http and smtp open (loopback), with the reachable addresses last', async () => {
    const r = run(['serve', ...freePorts, '--data-dir', dataDir, '--host', '0.0.0.0']);
    await r.ready;
    const line = r.stdout().slice(0, r.stdout().indexOf('\n'));
    const raw = JSON.parse(line) as Record<string, unknown>;
    assert.deepEqual(Object.keys(raw), ['http', 'smtp', 'reachable']);
    assert.equal(typeof raw.http, 'string');
    assert.equal(typeof raw.smtp, 'string');
    assert.match(raw.http as string, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(raw.smtp as string, /^127\.0\.0\.1:\d+$/);
    const port = new URL(raw.http as string).port;
    assert.deepEqual(raw.reachable, reachableHosts('0.0.0.0').map((h) => `http://${h}:${port}`));
    assert.deepEqual(parseReadyLine(line)?.reachable, raw.reachable);
    assert.equal((await fetch(`${raw.http as string}/healthz`)).status, 200);
    // What the line prints opens: each address answers, its own Host allowed.
    for (const url of raw.reachable as string[]) assert.equal((await fetch(`${url}/healthz`)).status, 200, url);
    await new Promise<void>((resolve, reject) => {
      const [host, smtpPort] = (raw.smtp as string).split(':');
      const s = net.connect(Number(smtpPort), host, () => s.end(resolve));
      s.on('error', reject);
    });
  });

  it('prints the options of serve with serve --help and exits 0', async () => {
    const r = run(['serve', '--help']);
    assert.equal((await r.exited).code, 0);
    assert.match(r.stdout(), /^Usage: test-inbox serve \[options\]\n/);
    for (const flag of ['--host', '--allowed-hosts', 'TEST_INBOX_ALLOWED_HOSTS', '--http-port', '--smtp-port', '--data-dir', '--api-token', '--webhook-token', '--max-messages', '--max-age', '--domain', '--compat', '--compat-open', 'TEST_INBOX_COMPAT', 'TEST_INBOX_COMPAT_OPEN']) {
      assert.ok(r.stdout().includes(flag), flag);
    }
    // Every row of the one table of serve's flags, and its environment twin, is documented.
    for (const [flag, row] of Object.entries(SERVE_OPTIONS) as Array<[string, { env?: string }]>) {
      assert.ok(r.stdout().includes(`--${flag} `) || r.stdout().includes(`--${flag}\n`), `--${flag}`);
      if (row.env !== undefined) assert.ok(r.stdout().includes(row.env), row.env);
    }
  });

  it('starts --help with the usage of every command, serve among them, and exits 0', async () => {
    const r = run(['--help']);
    assert.equal((await r.exited).code, 0);
    assert.match(r.stdout(), /^Usage: test-inbox <command> \[options\]\n/);
    const commands = r.stdout().slice(r.stdout().indexOf('\nCommands:\n'));
    for (const command of ['serve', ...TEST_COMMANDS]) assert.match(commands, new RegExp(`\\n  ${command}\\b`), command);
    assert.match(r.stdout(), /Run test-inbox <command> --help/);
  });
});

describe('serve arguments', () => {
  it('defaults to 127.0.0.1, HTTP 2580, SMTP 2525, inbox.test, 1,000 messages, 7 days and the process durability rule', () => {
    const c = parseServeArgs(['serve'], { XDG_DATA_HOME: '/xdg' });
    assert.notEqual(c, 'help');
    assert.deepEqual(c, {
      host: '127.0.0.1',
      httpPort: 2580,
      smtpPort: 2525,
      dataDir: path.resolve('/xdg/test-inbox'),
      defaultDomain: 'inbox.test',
      retention: { maxMessages: 1000, maxAgeMs: 7 * 86_400_000 },
      // SMTP TLS is off unless asked for (no smtpTls, no smtps port, no required login either); no token given.
      // Nothing per message.
      logLevel: 'info',
      // An acknowledgement waits for no fsync (issue 36).
      durability: 'process',
    });
  });

  it('reads the recipient and connection limits, refusing anything but a whole number of at least 1', () => {
    const c = parseServeArgs(['serve', '--max-recipients', '5', '--max-smtp-connections', '20', '--max-http-connections', '30'], {});
    assert.ok(c !== 'help' && c !== 'version');
    assert.deepEqual([c.maxRecipients, c.maxSmtpConnections, c.maxHttpConnections], [5, 20, 30]);
    for (const bad of ['0', '1.5', 'many', '']) {
      assert.throws(() => parseServeArgs(['serve', '--max-recipients', bad], {}), (e: unknown) => UsageError.is(e) && /--max-recipients must be a whole number/.test((e as Error).message));
    }
  });

  it('prefers token flags over the environment', () => {
    const c = parseServeArgs(['serve', '--api-token', 'flag'], tokensEnv({ apiToken: 'env', webhookToken: 'wenv' }));
    assert.ok(c !== 'help' && c !== 'version');
    assert.equal(c.apiToken, 'flag');
    assert.equal(c.webhookToken, 'wenv');
  });

  it('answers --version and -v before reading anything else', () => {
    assert.equal(parseServeArgs(['--version'], {}), 'version');
    assert.equal(parseServeArgs(['serve', '-v'], {}), 'version');
  });

  it('reads durations with units, a bare number as seconds, and 0 as no limit', () => {
    assert.equal(parseDuration('90'), 90_000);
    assert.equal(parseDuration('30m'), 1_800_000);
    assert.equal(parseDuration('12h'), 43_200_000);
    assert.equal(parseDuration('2w'), 1_209_600_000);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('-1d'), undefined);
    assert.equal(parseDuration('1.5h'), 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('7 d'), undefined);
    assert.equal((parseServeArgs(['serve', '--max-age', '1.5d'], {}) as ServeConfig).retention.maxAgeMs, 129_600_000, '--max-age reads the same syntax');
    assert.equal((parseServeArgs(['serve', '--sweep-every', '30s'], {}) as ServeConfig).sweepIntervalMs, 30_000, '--sweep-every too');
    assert.throws(() => parseServeArgs(['serve', '--sweep-every', '10ms'], {}), /--sweep-every must be a duration of at least 100ms/);
    assert.throws(() => parseServeArgs(['serve', '--sweep-every', 'often'], {}), /--sweep-every must be a duration/);
  });

  it('refuses private as the default domain and names out of range', () => {
    assert.throws(() => parseServeArgs(['serve', '--domain', 'private'], {}), /real domain/);
    assert.throws(() => parseServeArgs(['serve', '--smtp-port', '70000'], {}), /port number/);
    assert.throws(() => parseServeArgs(['serve', '--max-messages=-3'], {}), /whole number/);
  });
});

describe('tokens', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-tokens-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it('keeps generated tokens across calls and reports them as generated only the first time', async () => {
    const a = await loadOrCreateTokens(dir);
    assert.deepEqual(a.generated, ['apiToken', 'webhookToken', 'twilioAuthToken', 'providerKey']);
    const b = await loadOrCreateTokens(dir);
    assert.deepEqual(b.generated, []);
    assert.equal(b.apiToken, a.apiToken);
    assert.equal(b.webhookToken, a.webhookToken);
    assert.equal(b.twilioAuthToken, a.twilioAuthToken);
    assert.equal(b.providerKey, a.providerKey);
  });

  it('generates only the token that was not given, and never saves a given one', async () => {
    const t = await loadOrCreateTokens(dir, { apiToken: 'given-api', twilioAuthToken: 'given-twilio', providerKey: 'given-provider' });
    assert.deepEqual(t.generated, ['webhookToken']);
    const saved = JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')) as Record<string, unknown>;
    assert.equal(saved.apiToken, undefined);
    assert.equal(saved.webhookToken, t.webhookToken);
  });

  it('refuses a damaged tokens file and leaves it as it was', async () => {
    const file = path.join(dir, TOKENS_FILE);
    await fs.writeFile(file, '{"apiToken": 42');
    await assert.rejects(loadOrCreateTokens(dir), (e: unknown) => TokensError.is(e, 'tokens_file_invalid') && e.message.includes(file));
    assert.equal(await fs.readFile(file, 'utf8'), '{"apiToken": 42');
  });

  it('refuses the same token for API and webhook', async () => {
    await assert.rejects(loadOrCreateTokens(dir, { apiToken: 'same', webhookToken: 'same' }), (e: unknown) => TokensError.is(e, 'tokens_same'));
  });

  it('refuses the API token as the Twilio auth token, and keeps a given Twilio token out of the file', async () => {
    await assert.rejects(loadOrCreateTokens(dir, { apiToken: 'same', twilioAuthToken: 'same' }), (e: unknown) => TokensError.is(e, 'tokens_same'));
    const t = await loadOrCreateTokens(dir, { twilioAuthToken: 'given-twilio' });
    assert.equal(t.twilioAuthToken, 'given-twilio');
    assert.deepEqual(t.generated, ['apiToken', 'webhookToken', 'providerKey']);
    const saved = JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')) as Record<string, unknown>;
    assert.equal(saved.twilioAuthToken, undefined);
  });

  it('generates a provider key shaped so that no provider SDK warns (SendGrid: SG.), distinct from every other token; refuses a reused one', async () => {
    const t = await loadOrCreateTokens(dir);
    assert.match(t.providerKey, /^SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    assert.equal(new Set([t.apiToken, t.webhookToken, t.twilioAuthToken, t.providerKey]).size, 4);
    const saved = JSON.parse(await fs.readFile(path.join(dir, TOKENS_FILE), 'utf8')) as Record<string, unknown>;
    assert.equal(saved.providerKey, t.providerKey);
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-tokens-'));
    try {
      await assert.rejects(loadOrCreateTokens(other, { apiToken: 'same', providerKey: 'same' }), (e: unknown) => TokensError.is(e, 'tokens_same'));
      await assert.rejects(loadOrCreateTokens(other, { twilioAuthToken: 'same', providerKey: 'same' }), (e: unknown) => TokensError.is(e, 'tokens_same'));
    } finally {
      await fs.rm(other, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it('takes the provider key from --provider-key, or TEST_INBOX_PROVIDER_KEY', () => {
    const env = tokensEnv({ apiToken: 'a', webhookToken: 'w', providerKey: 'pk-env' });
    assert.equal(env.TEST_INBOX_PROVIDER_KEY, 'pk-env');
    const fromEnv = parseServeArgs(['serve'], env);
    assert.ok(fromEnv !== 'help' && fromEnv !== 'version');
    assert.equal(fromEnv.providerKey, 'pk-env');
    const fromFlag = parseServeArgs(['serve', '--provider-key', 'pk-flag'], env);
    assert.ok(fromFlag !== 'help' && fromFlag !== 'version');
    assert.equal(fromFlag.providerKey, 'pk-flag');
    assert.throws(() => parseServeArgs(['serve', '--provider-key', ''], {}), /must not be empty/);
  });
});
