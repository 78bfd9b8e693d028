// The CLI's commands for tests (`test-inbox code|link|totp|send-sms|send-mail|clear`) against
// the real local server on port 0: stdout holds only the answer, messages go to stderr, and
// the exit codes are the documented ones. The first case runs the CLI as a child process (the
// bundle under `npm test`, else the source through tsx: test/support/cli.ts); the others call its dispatcher in this process, which is the same
// code without a Node start per command. test/package runs the installed binary.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { EXIT_USAGE, LOCAL_TWILIO_ACCOUNT_SID } from '../../src/shared/contract';
import { PROVIDERS, providerEnv, providerSettingsText } from '../../src/shared/providerSettings';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { EXIT_NO_PERMISSION, EXIT_TIMEOUT, EXIT_UNAVAILABLE, runTestCommand } from '../../src/cli/testCommands';
import { totp } from '../../src/testing';
import { closedPort } from '../support/ports';
import { childEnv, clearProductEnv, cliArgv } from '../support/cli';

const REPO = path.resolve(__dirname, '..', '..');
const DOMAIN = 'inbox.test';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a `test-inbox` command line (`bin` with `pre` arguments) to its end. */
export function runCommand(bin: string, pre: string[], args: string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(bin, [...pre, ...args], { cwd: REPO, env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('test-inbox code, link, totp, send-sms, send-mail, clear (CLI)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer;
  let env: NodeJS.ProcessEnv;
  let tokens: Awaited<ReturnType<typeof loadOrCreateTokens>>;
  const spawned = (args: string[]): Promise<Ran> => runCommand(process.execPath, cliArgv(), args, env);
  /** In this process, with the data dir as a flag (the library reads this process's environment). */
  async function cli(args: string[]): Promise<Ran> {
    let stdout = '';
    let stderr = '';
    const code = await runTestCommand([...args, '--data-dir', dataDir], { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    return { code, stdout, stderr };
  }

  before(async () => {
    clearProductEnv();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-clicmd-'));
    tokens = await loadOrCreateTokens(dataDir);
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN });
    // Only the data dir: the commands find the server (server.json) and the tokens (tokens.json) there.
    env = childEnv({ TEST_INBOX_DATA_DIR: dataDir });
  });

  after(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('code prints only the newest code after --since, and exits 1 with a message on stderr when none arrives', async () => {
    const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: 'shop@example.test', to: `joe@${DOMAIN}`, subject: 'Old', text: 'Your verification code is 111111.' });
    const since = String(Date.now());
    await new Promise((r) => setTimeout(r, 5));
    const waiting = spawned(['code', 'joe', '--since', since, '--wait', '20s']);
    await new Promise((r) => setTimeout(r, 1500));
    await t.sendMail({ from: 'shop@example.test', to: `joe@${DOMAIN}`, subject: 'New', text: 'Your verification code is 222222.' });
    t.close();
    const r = await waiting;
    assert.deepEqual(r, { code: 0, stdout: '222222\n', stderr: '' });

    const json = await cli(['code', `joe@${DOMAIN}`, '--json', '--wait', '0']);
    assert.equal(json.code, 0);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout) as object).sort(), ['code', 'from', 'id', 'subject', 'time']);

    const timeout = await spawned(['code', 'joe', '--since', 'now', '--wait', '500ms']);
    assert.equal(timeout.code, EXIT_TIMEOUT);
    assert.equal(timeout.stdout, '');
    assert.match(timeout.stderr, /^test-inbox code: no message with a one-time code arrived in joe \(every domain\) after .* within 0\.5 s\n$/);
  });

  it('send-mail to a named SMTP address sends there without any HTTP server answering', async () => {
    const nobody = `http://127.0.0.1:${await closedPort()}`;
    let stdout = '';
    let stderr = '';
    const to = `smtp-only-${Date.now()}@${DOMAIN}`;
    const code = await runTestCommand(['send-mail', '--to', to, '--subject', 'Over SMTP alone', '--smtp', `${server.smtpHost}:${server.smtpPort}`, '--server', nobody], { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^<[^>]+@test-inbox>\n$/);
    // The message is in the server's inbox: clearing it deletes exactly that one.
    const cleared = await cli(['clear', to, '--json']);
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.deepEqual(JSON.parse(cleared.stdout), { count: 1 });
  });

  it('link, send-mail, send-sms, totp and clear print only their answer', async () => {
    const since = String(Date.now());
    const sent = await cli(['send-mail', '--to', 'ann', '--subject', 'Confirm', '--html', '<a href="https://app.example.test/confirm?t=7">Confirm your email</a>']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /^<[^>]+@test-inbox>\n$/);
    const link = await cli(['link', 'ann', '--kind', 'verify', '--since', since, '--wait', '5s']);
    assert.deepEqual(link, { code: 0, stdout: 'https://app.example.test/confirm?t=7\n', stderr: '' });

    const sms = await cli(['send-sms', '--to', '+14155550199', '--body', 'Acme: 4321 is your code']);
    assert.equal(sms.code, 0, sms.stderr);
    assert.match(sms.stdout, /^SM[0-9a-f]{32}\n$/);
    assert.equal((await cli(['code', '14155550199', '--since', since, '--wait', '5s'])).stdout, '4321\n');

    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    const code = await cli(['totp', `otpauth://totp/Acme:joe?secret=${seed}&issuer=Acme`]);
    assert.equal(code.code, 0);
    assert.match(code.stdout, /^\d{6}\n$/);

    // clear has no answer to print: it says what it did on stderr; --json gives the count on stdout.
    assert.deepEqual(await cli(['clear', 'ann']), { code: 0, stdout: '', stderr: 'test-inbox clear: deleted 1 message of ann (every domain)\n' });
    assert.deepEqual(await cli(['clear', `ann@${DOMAIN}`, '--json']), { code: 0, stdout: '{"count":0}\n', stderr: '' });
  });

  it('totp takes the secret from standard input or TEST_INBOX_TOTP_SECRET, so it never has to be on the command line', async () => {
    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    const uri = `otpauth://totp/Acme:joe?secret=${seed}&issuer=Acme&digits=8`;
    // A real process with the secret piped to its stdin, as `printf '%s\n' "$SECRET" | test-inbox totp -` does.
    for (const args of [['totp', '-'], ['totp']]) {
      const piped = await new Promise<Ran>((resolve) => {
        const child = execFile(process.execPath, [...cliArgv(), ...args, '--json'], { cwd: REPO, env, encoding: 'utf8' }, (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
        );
        child.stdin!.end(`${uri}\n`);
      });
      assert.equal(piped.code, 0, `${args.join(' ')}: ${piped.stderr}`);
      const answer = JSON.parse(piped.stdout) as { code: string; secondsLeft: number };
      assert.match(answer.code, /^\d{8}$/, 'the URI came through whole (its digits=8 applied)');
      assert.ok([totp(uri).code, totp(uri, { at: Date.now() - 30_000 }).code].includes(answer.code));
    }
    // The environment twin, and the argument still wins over it.
    const fromEnv = await runCommand(process.execPath, cliArgv(), ['totp'], { ...env, TEST_INBOX_TOTP_SECRET: seed });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.match(fromEnv.stdout, /^\d{6}\n$/);
    let out = '';
    let err = '';
    const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, env: { TEST_INBOX_TOTP_SECRET: 'not base32!' } };
    assert.equal(await runTestCommand(['totp', seed], io), 0, err);
    assert.equal(out, `${totp(seed).code}\n`);
    // Nothing anywhere: a usage error that says where the secret may come from.
    err = '';
    assert.equal(await runTestCommand(['totp'], { ...io, env: {} }), EXIT_USAGE);
    assert.match(err, /missing <secret>: set TEST_INBOX_TOTP_SECRET, pipe it to standard input, or give it as the argument/);
  });

  it('exits 64 with the usage line on a bad command line or bad input, 77 without a token, 69 when nothing answers', async () => {
    for (const [args, message] of [
      [['code'], /missing <inbox>/],
      [['code', 'joe', '--wait', 'soon'], /--wait must be ms or a duration/],
      [['code', 'joe', '--bogus'], /unknown option --bogus/],
      [['link', 'joe', '--kind', 'bogus'], /kind must be one of verify, reset, login, any/],
      [['totp', 'not-base32!'], /Not a base32 secret/],
      [['send-sms', '--to', '+14155550100'], /--body is required/],
      [['code', 'joe', '--since', 'nobody-1-1', '--wait', '0'], /since "nobody-1-1" is neither/],
    ] as const) {
      const r = await cli([...args]);
      assert.equal(r.code, EXIT_USAGE, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, new RegExp(`\\nUsage: test-inbox ${args[0]} .*\\nRun test-inbox ${args[0]} --help for the options\\.\\n$`), args.join(' '));
    }
    const help = await cli(['code', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: test-inbox code <inbox>\[@domain\]/);
    assert.match(help.stdout, /TEST_INBOX_API_TOKEN/);

    // A server that answers (this one's own, named by URL, while the data dir is another's): no token is 77.
    const otherDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-clicmd-other-'));
    try {
      let stdout = '';
      let stderr = '';
      const code = await runTestCommand(['code', 'joe', '--server', server.httpUrl, '--data-dir', otherDir], { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
      assert.equal(code, EXIT_NO_PERMISSION);
      assert.equal(stdout, '');
      assert.match(stderr, /no API token for http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      await fs.rm(otherDir, { recursive: true, force: true });
    }
    // One that does not resolve: unreachable (69) wins over the missing token.
    const unreachable = await cli(['code', 'joe', '--server', 'https://inbox.example.invalid']);
    assert.equal(unreachable.code, EXIT_UNAVAILABLE);
    assert.match(unreachable.stderr, /inbox\.example\.invalid/);
  });

  it('provider-settings prints, from the data dir alone, the lines Copy Provider Settings copies for each provider (or the one named), never the API token', async () => {
    const input = { baseUrl: server.httpUrl, domain: DOMAIN, providerKey: tokens.providerKey, twilioAccountSid: LOCAL_TWILIO_ACCOUNT_SID, twilioAuthToken: tokens.twilioAuthToken };
    const all = await spawned(['provider-settings']);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(all.stdout, PROVIDERS.map((p) => providerSettingsText(p.id, input)).join('\n'));
    assert.ok(all.stdout.includes(`RESEND_BASE_URL=${server.httpUrl}\n`));
    assert.ok(!all.stdout.includes(tokens.apiToken) && !all.stdout.includes(tokens.webhookToken));
    const one = await cli(['provider-settings', 'Resend']);
    assert.deepEqual(one, { code: 0, stdout: providerSettingsText('resend', input), stderr: '' });
    const json = await cli(['provider-settings', 'mailgun', '--json']);
    assert.deepEqual(JSON.parse(json.stdout), { mailgun: Object.fromEntries(providerEnv('mailgun', input)) });
    const bad = await cli(['provider-settings', 'mailchimp']);
    assert.equal(bad.code, EXIT_USAGE);
    assert.match(bad.stderr, /^test-inbox provider-settings: unknown provider "mailchimp" \(the providers are resend, sendgrid, postmark, mailgun, ses, twilio\)\n/);
  });
});
