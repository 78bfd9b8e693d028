// Failures on demand from the command line and the test library (issue 39, docs/chaos.md):
// `test-inbox chaos add|list|remove|clear`, the library's scoped `chaos()` whose handle removes only
// its own rules, and `test-inbox serve --chaos <file>` with the number of rules in its log and
// /healthz. A real server on port 0; Resend's SDK sees the rule the one command added.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Resend } from 'resend';
import { runTestCommand } from '../../src/cli/testCommands';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { EXIT_USAGE } from '../../src/shared/contract';
import { chaos, sendSms, TestInboxError, waitForCode } from '../../src/testing';
import { startCli } from './cliProcess';
import { clearProductEnv } from '../support/cli';

const DOMAIN = 'inbox.test';

describe('failures on demand: test-inbox chaos, the library\'s chaos(), serve --chaos', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer;
  let tokens: Awaited<ReturnType<typeof loadOrCreateTokens>>;
  let restoreEnv: (() => void) | undefined;

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runTestCommand([...args, '--data-dir', dataDir], { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    return { code, stdout, stderr };
  }
  async function health(): Promise<{ chaosRules: number }> {
    return (await fetch(`${server.httpUrl}/healthz`)).json() as Promise<{ chaosRules: number }>;
  }

  before(async () => {
    restoreEnv = clearProductEnv();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-chaos-cli-'));
    tokens = await loadOrCreateTokens(dataDir);
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN });
  });
  after(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    restoreEnv?.();
  });
  afterEach(async () => {
    await server.chaos.clear();
  });

  it('makes Resend answer 429 for one address with one command; lists the rule with its counters; removes it; clears the rest', async () => {
    const added = await cli(['chaos', 'add', '--surface', 'resend', '--recipient', 'ann@inbox.test', '--status', '429', '--retry-after', '2']);
    assert.equal(added.code, 0, added.stderr);
    const id = added.stdout.trim();
    assert.match(id, /^r\d+-[0-9a-f]{6}$/, 'stdout carries only the id');
    assert.match(added.stderr, /added r\d+-[0-9a-f]{6}\tresend\trecipient=ann@inbox\.test\tstatus=429 retry_after=2/);

    const resend = new Resend(tokens.providerKey, { baseUrl: server.httpUrl });
    const refused = await resend.emails.send({ from: 'app@acme.test', to: 'ann@inbox.test', subject: 'Code', text: '123456' });
    assert.equal(refused.error?.statusCode, 429);
    assert.equal(refused.error?.name, 'rate_limit_exceeded');
    assert.equal((await resend.emails.send({ from: 'app@acme.test', to: 'joe@inbox.test', subject: 'Code', text: '123456' })).error, null);

    const list = await cli(['chaos', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^${id}\\tresend\\t.*\\tfired 1, matched 1\\tuntil \\d{4}-`));
    assert.match(list.stderr, /1 rule active/);
    const json = JSON.parse((await cli(['chaos', 'list', '--json'])).stdout);
    assert.deepEqual(json.rules.map((r: { id: string; fired: number }) => [r.id, r.fired]), [[id, 1]]);

    assert.equal((await cli(['chaos', 'remove', id])).code, 0);
    assert.equal((await health()).chaosRules, 0);
    assert.equal((await cli(['chaos', 'add', '{"surface":"smtp","match":{"all":true,"stage":"connect"},"fault":{"drop":true}}'])).code, 0);
    assert.equal((await cli(['chaos', 'add', '--surface', 'smtp', '--stage', 'rcpt', '--recipient', 'joe', '--reply', '451 4.7.1 Greylisted', '--times', '1'])).code, 0);
    assert.equal((await health()).chaosRules, 2);
    const cleared = await cli(['chaos', 'clear']);
    assert.match(cleared.stderr, /removed 2 rules/);
    assert.equal((await health()).chaosRules, 0);
  });

  it('refuses a bad rule with the server\'s reason and exit code 2, adding nothing', async () => {
    const bad = await cli(['chaos', 'add', '--surface', 'resend', '--recipient', 'ann', '--status', '200']);
    assert.equal(bad.code, EXIT_USAGE);
    assert.match(bad.stderr, /fault\.status must be an HTTP status from 400 to 599/);
    const all = await cli(['chaos', 'add', '--surface', 'resend', '--status', '429']);
    assert.equal(all.code, EXIT_USAGE);
    assert.match(all.stderr, /"all": true/);
    assert.equal((await cli(['chaos', 'add', '{not json'])).code, EXIT_USAGE);
    assert.equal((await cli(['chaos', 'frobnicate'])).code, EXIT_USAGE);
    assert.equal((await health()).chaosRules, 0);
  });

  it('the library\'s chaos() handle removes only its own rules, so parallel tests do not undo each other', async () => {
    const conn = { dataDir };
    const [a, b] = await Promise.all([
      chaos({ surface: 'resend', match: { recipient: 'ann@inbox.test' }, fault: { status: 429, retry_after: 2 } }, conn),
      chaos([{ surface: 'sendgrid', match: { all: true }, fault: { status: 503 } }, { surface: 'smtp', match: { recipient: 'bob', stage: 'rcpt' }, fault: { reply: { code: 550, text: 'no' } }, times: 1 }], conn),
    ]);
    assert.equal(a.ids.length, 1);
    assert.equal(b.ids.length, 2);
    const resend = new Resend(tokens.providerKey, { baseUrl: server.httpUrl });
    assert.equal((await resend.emails.send({ from: 'app@acme.test', to: 'ann@inbox.test', subject: 's', text: 't' })).error?.statusCode, 429);
    assert.deepEqual((await a.state()).map((r) => [r.id, r.surface, r.fired]), [[a.ids[0], 'resend', 1]]);
    await a.remove();
    await a.remove(); // once more: the rule is gone already, which is fine
    assert.deepEqual((await b.state()).map((r) => r.id), b.ids, 'the other test\'s rules stay');
    assert.equal((await health()).chaosRules, 2);
    await b.remove();
    assert.equal((await health()).chaosRules, 0);
  });

  it('the library refuses a bad rule as bad_input, naming the field, and keeps none of the call\'s rules', async () => {
    await assert.rejects(
      chaos([{ surface: 'resend', match: { all: true }, fault: { status: 429 } }, { surface: 'smtp', match: { all: true, stage: 'connect', sender: 'x' } as never, fault: { drop: true } }], { dataDir }),
      (e: unknown) => TestInboxError.is(e) && e.code === 'bad_input' && /only match\.client is known/.test(e.message),
    );
    assert.equal((await health()).chaosRules, 0);
  });

  it('slow SMS code: with a delay on Twilio, waitForCode times out on the late code and a longer wait gets it', async () => {
    const faults = await chaos({ surface: 'twilio', match: { recipient: '+15550100199' }, fault: { delay: '2500ms' }, times: 1 }, { dataDir });
    const since = Date.now();
    const sending = sendSms({ dataDir, to: '+15550100199', body: 'Your Acme code is 424242' });
    await assert.rejects(waitForCode('15550100199', { dataDir, since, timeout: '1s' }), (e: unknown) => TestInboxError.is(e) && e.code === 'timeout');
    const late = await waitForCode('15550100199', { dataDir, since, timeout: '20s' });
    assert.equal(late.code, '424242');
    assert.ok(late.time - since >= 2_000, `the code arrived ${late.time - since} ms after the send`);
    await sending;
    assert.deepEqual((await faults.state()).map((r) => r.fired), [1]);
    await faults.remove();
  });

  it('serve --chaos <file> starts with the file\'s rules, says how many in its log and /healthz; a bad file stops the start with exit 64 (a usage error)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-chaos-serve-'));
    try {
      const file = path.join(dir, 'chaos.json');
      await fs.writeFile(file, JSON.stringify({ rules: [{ surface: 'smtp', match: { recipient: 'joe', stage: 'rcpt' }, fault: { reply: { code: 451, text: '4.7.1 Greylisted' } }, times: 1 }, { surface: 'resend', match: { all: true }, fault: { status: 500 }, ttl: '1h' }] }));
      const running = startCli(['serve', '--data-dir', path.join(dir, 'data'), '--http-port', '0', '--smtp-port', '0', '--chaos', file]);
      try {
        const ready = await running.ready;
        assert.match(running.stderr(), /failures on demand: 2 fault rules active/);
        assert.equal(((await (await fetch(`${ready.http}/healthz`)).json()) as { chaosRules: number }).chaosRules, 2);
      } finally {
        await running.stop();
      }
      await fs.writeFile(file, JSON.stringify([{ surface: 'resend', match: { all: true }, fault: { status: 500 }, ttl: '2d' }]));
      const bad = startCli(['serve', '--data-dir', path.join(dir, 'data'), '--http-port', '0', '--smtp-port', '0', '--chaos', file]);
      const exit = await bad.exited;
      assert.equal(exit.code, EXIT_USAGE);
      assert.match(bad.stderr(), /--chaos .*chaos\.json: rule 1: ttl must be at most 24h/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
