// The process contract of `test-inbox serve` (src/shared/contract.ts): its values are pinned
// here, because changing one breaks servers and data folders already out there; its builders
// and parsers are checked against the CLI's own parser and output.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseServeArgs, type ServeConfig } from '../../src/cli/cli';
import { HEALTH_CHALLENGE_PARAM, MAX_CHALLENGE_LENGTH } from '../../src/core/proof';
import {
  API_TOKEN_ENV,
  DEFAULT_DOMAIN,
  DEFAULT_DURABILITY,
  DURABILITY_ENV,
  HTTP_PORT_ENV,
  SMTP_PORT_ENV,
  COMPAT_ENV,
  COMPAT_OPEN_ENV,
  DEFAULT_HOST,
  DEFAULT_HTTP_PORT,
  DEFAULT_SMTP_PORT,
  EXIT_DATA_DIR_IN_USE,
  EXIT_FAILURE,
  EXIT_PORT_IN_USE,
  EXIT_USAGE,
  formatReadyLine,
  generateToken,
  healthProof,
  parseServerFile,
  readServerFile,
  SERVER_FILE,
  ServerFileProblem,
  tokenDigest,
  parseReadyLine,
  parseTokensFile,
  readTokensFile,
  serveArgs,
  SERVER_ENV_NAMES,
  TOKENS_FILE,
  TokensFileProblem,
  tokenSeparationProblem,
  writeTokensFile,
  tokensEnv,
  WEBHOOK_TOKEN_ENV,
  withoutTokensEnv,
} from '../../src/shared/contract';
import { startInboxServer } from '../../src/server/server';
import { startCli } from './cliProcess';

describe('process contract', () => {
  it('keeps the values servers and data folders already depend on', () => {
    assert.equal(DEFAULT_HOST, '127.0.0.1');
    assert.equal(DEFAULT_HTTP_PORT, 2580);
    assert.equal(DEFAULT_SMTP_PORT, 2525);
    assert.equal(DEFAULT_DOMAIN, 'inbox.test');
    assert.equal(API_TOKEN_ENV, 'TEST_INBOX_API_TOKEN');
    assert.equal(WEBHOOK_TOKEN_ENV, 'TEST_INBOX_WEBHOOK_TOKEN');
    assert.equal(TOKENS_FILE, 'tokens.json');
    assert.deepEqual([EXIT_FAILURE, EXIT_PORT_IN_USE, EXIT_DATA_DIR_IN_USE, EXIT_USAGE], [1, 2, 3, 64]);
  });

  it('the manifest defaults of the local server settings are the contract defaults', async () => {
    const pkg = JSON.parse(await fs.readFile(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
    };
    const props = pkg.contributes.configuration.properties;
    assert.equal(props['testInbox.local.httpPort'].default, DEFAULT_HTTP_PORT);
    assert.equal(props['testInbox.local.smtpPort'].default, DEFAULT_SMTP_PORT);
    assert.equal(props['testInbox.local.domain'].default, DEFAULT_DOMAIN);
    assert.equal(props['testInbox.local.durability'].default, DEFAULT_DURABILITY);
    assert.equal(props['testInbox.local.compat'].default, false);
  });

  describe('serve flags', () => {
    it('the CLI reads back what serveArgs builds', () => {
      const flags = { host: '::1', httpPort: 0, smtpPort: 4025, dataDir: path.resolve('/tmp/ti-data'), domain: 'mail.example.test', maxMessages: 0, maxAgeSeconds: 3600, smtpTls: true, logLevel: 'debug' as const, durability: 'strict' as const };
      const config = parseServeArgs(serveArgs(flags), {}) as ServeConfig;
      assert.deepEqual(config, {
        host: '::1',
        httpPort: 0,
        smtpPort: 4025,
        dataDir: flags.dataDir,
        defaultDomain: 'mail.example.test',
        retention: { maxMessages: 0, maxAgeMs: 3_600_000 },
        smtpTls: { starttls: true },
        logLevel: 'debug',
        durability: 'strict',
      });
    });

    it('leaves out what is not given, so the CLI uses its defaults', () => {
      assert.deepEqual(serveArgs({}), ['serve']);
      const config = parseServeArgs(serveArgs({ dataDir: path.resolve('/tmp/ti-data') }), {}) as ServeConfig;
      assert.equal(config.host, DEFAULT_HOST);
      assert.equal(config.httpPort, DEFAULT_HTTP_PORT);
      assert.equal(config.smtpPort, DEFAULT_SMTP_PORT);
      assert.equal(config.defaultDomain, DEFAULT_DOMAIN);
      assert.equal(config.durability, DEFAULT_DURABILITY);
    });

    it(`reads --durability and ${DURABILITY_ENV} (the flag wins), process by default, and refuses other values`, () => {
      const rule = (argv: string[], env: Record<string, string> = {}): unknown => (parseServeArgs(['serve', ...argv], env) as ServeConfig).durability;
      assert.equal(rule([]), 'process');
      assert.equal(rule(['--durability', 'strict']), 'strict');
      assert.equal(rule(['--durability', 'STRICT']), 'strict');
      assert.equal(rule([], { [DURABILITY_ENV]: 'strict' }), 'strict');
      assert.equal(rule(['--durability', 'process'], { [DURABILITY_ENV]: 'strict' }), 'process');
      assert.throws(() => rule(['--durability', 'fsync']), /--durability must be one of process, strict/);
      assert.throws(() => rule([], { [DURABILITY_ENV]: 'power' }), new RegExp(`${DURABILITY_ENV} must be one of process, strict`));
    });

    it(`reads --http-port and --smtp-port, or ${HTTP_PORT_ENV} and ${SMTP_PORT_ENV} (the flag wins), and names the variable a bad value came from`, () => {
      const ports = (argv: string[], env: Record<string, string> = {}): [unknown, unknown] => {
        const c = parseServeArgs(['serve', ...argv], env) as ServeConfig;
        return [c.httpPort, c.smtpPort];
      };
      assert.deepEqual(ports([]), [DEFAULT_HTTP_PORT, DEFAULT_SMTP_PORT]);
      assert.deepEqual(ports([], { [HTTP_PORT_ENV]: '8025', [SMTP_PORT_ENV]: '1025' }), [8025, 1025]);
      assert.deepEqual(ports(['--http-port', '0', '--smtp-port', '2525'], { [HTTP_PORT_ENV]: '8025', [SMTP_PORT_ENV]: '1025' }), [0, 2525]);
      assert.throws(() => ports([], { [HTTP_PORT_ENV]: 'eighty' }), new RegExp(HTTP_PORT_ENV));
      assert.throws(() => ports([], { [SMTP_PORT_ENV]: '70000' }), new RegExp(SMTP_PORT_ENV));
      assert.throws(() => ports(['--smtps-port', '2465'], { [SMTP_PORT_ENV]: '2465' }), new RegExp(`^UsageError: ${SMTP_PORT_ENV} must differ from the implicit-TLS port`));
      assert.throws(() => ports(['--smtp-port', '2465', '--smtps-port', '2465']), /^UsageError: --smtp-port must differ from the implicit-TLS port \(--smtps-port or TEST_INBOX_SMTPS_PORT; both 2465\)/);
    });

    it(`reads --compat, --compat-open and ${COMPAT_ENV}, ${COMPAT_OPEN_ENV} (off by default; open implies on); serveArgs passes compat`, () => {
      const compat = (argv: string[], env: Record<string, string> = {}): unknown => (parseServeArgs(['serve', ...argv], env) as ServeConfig).compat;
      assert.equal(compat([]), undefined);
      assert.deepEqual(compat(['--compat']), { open: false });
      assert.deepEqual(compat([], { [COMPAT_ENV]: '1' }), { open: false });
      assert.equal(compat([], { [COMPAT_ENV]: '0' }), undefined);
      assert.deepEqual(compat(['--compat-open']), { open: true });
      assert.deepEqual(compat(['--compat'], { [COMPAT_OPEN_ENV]: 'true' }), { open: true });
      assert.throws(() => compat([], { [COMPAT_ENV]: 'maybe' }), new RegExp(`${COMPAT_ENV} must be 1 or 0`));
      assert.deepEqual(serveArgs({ compat: true }), ['serve', '--compat']);
      assert.deepEqual((parseServeArgs(serveArgs({ compat: true }), {}) as ServeConfig).compat, { open: false });
      assert.deepEqual(serveArgs({ compat: false }), ['serve']);
    });

    it('the CLI takes its tokens from the environment tokensEnv builds, and withoutTokensEnv removes them', () => {
      const env = tokensEnv({ apiToken: 'api-1', webhookToken: 'wh-2', twilioAuthToken: 'tw-3', providerKey: 'pk-4' });
      const config = parseServeArgs(serveArgs({ dataDir: path.resolve('/tmp/ti-data') }), env) as ServeConfig;
      assert.equal(config.apiToken, 'api-1');
      assert.equal(config.webhookToken, 'wh-2');
      assert.equal(config.twilioAuthToken, 'tw-3');
      assert.equal(config.providerKey, 'pk-4');
      const stripped = withoutTokensEnv({ ...env, PATH: '/bin' });
      assert.deepEqual(stripped, { PATH: '/bin' });
      assert.deepEqual(Object.keys(env).sort(), [...SERVER_ENV_NAMES].sort());
    });
  });

  describe('ready line', () => {
    it('parses what formatReadyLine writes, IPv6 hosts included', () => {
      for (const r of [
        { http: 'http://127.0.0.1:2580', smtp: { host: '127.0.0.1', port: 2525 } },
        { http: 'http://[::1]:41000', smtp: { host: '[::1]', port: 41001 } },
        { http: 'http://127.0.0.1:2580', smtp: { host: '127.0.0.1', port: 2525 }, smtps: { host: '127.0.0.1', port: 2465 } },
      ]) {
        assert.deepEqual(parseReadyLine(formatReadyLine(r)), r);
      }
      assert.equal(formatReadyLine({ http: 'http://127.0.0.1:2580', smtp: { host: '127.0.0.1', port: 2525 } }), '{"http":"http://127.0.0.1:2580","smtp":"127.0.0.1:2525"}');
    });

    it('with --compat appends "ca" (the CA certificate\'s absolute path) after the existing keys; http and smtp stay first, as strings', () => {
      const r = { http: 'http://127.0.0.1:2580', smtp: { host: '127.0.0.1', port: 2525 }, ca: '/home/u/.test-inbox/.compat-ca/ca.pem' };
      const line = formatReadyLine(r);
      assert.equal(line, '{"http":"http://127.0.0.1:2580","smtp":"127.0.0.1:2525","ca":"/home/u/.test-inbox/.compat-ca/ca.pem"}');
      assert.deepEqual(parseReadyLine(line), r);
    });

    it('keeps http and smtp first, each a string, and appends the reachable addresses of a wildcard bind last; old lines still parse', () => {
      const wild = { http: 'http://127.0.0.1:2690', smtp: { host: '127.0.0.1', port: 2525 }, reachable: ['http://192.168.1.20:2690', 'http://[fd00::5]:2690'] };
      const line = formatReadyLine(wild);
      assert.equal(line, '{"http":"http://127.0.0.1:2690","smtp":"127.0.0.1:2525","reachable":["http://192.168.1.20:2690","http://[fd00::5]:2690"]}');
      assert.deepEqual(parseReadyLine(line), wild);
      assert.deepEqual(parseReadyLine('{"http":"http://0.0.0.0:2690","smtp":"0.0.0.0:2525"}'), { http: 'http://0.0.0.0:2690', smtp: { host: '0.0.0.0', port: 2525 } }, 'a line of an earlier version');
      assert.deepEqual(parseReadyLine('{"http":"http://127.0.0.1:1","smtp":"127.0.0.1:2","reachable":[1,"x","http://10.0.0.2:1"],"future":true}')?.reachable, ['http://10.0.0.2:1'], 'unknown keys and non-URLs ignored');
    });

    it('refuses anything else', () => {
      for (const line of ['listening', '{"http":1}', '{"http":"http://127.0.0.1:1"}', '{"http":"ftp://x:1","smtp":"x:1"}', '{"http":"http://x:1","smtp":"x"}', 'null', '[]']) {
        assert.equal(parseReadyLine(line), undefined, line);
      }
      assert.deepEqual(parseReadyLine('{"http":"http://127.0.0.1:2580/","smtp":"127.0.0.1:2525"}')?.http, 'http://127.0.0.1:2580', 'trailing slash dropped');
    });

    it('is the first line the real CLI prints', async function () {
      this.timeout(30_000);
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-contract-'));
      const r = startCli(serveArgs({ httpPort: 0, smtpPort: 0, dataDir: dir }), tokensEnv({ apiToken: 'api-c', webhookToken: 'wh-c' }));
      try {
        await r.ready;
        const parsed = parseReadyLine(r.stdout().split('\n')[0]);
        assert.ok(parsed, r.stdout());
        assert.match(parsed.http, /^http:\/\/127\.0\.0\.1:\d+$/);
        assert.equal(parsed.smtp.host, DEFAULT_HOST);
        assert.equal((await fetch(`${parsed.http}/healthz`)).status, 200);
      } finally {
        await r.stop();
        await fs.rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('tokens', () => {
    it('generates 24 random bytes as 32 base64url characters', () => {
      const seen = new Set<string>();
      for (let i = 0; i < 50; i++) {
        const t = generateToken();
        assert.match(t, /^[A-Za-z0-9_-]{32}$/);
        assert.equal(Buffer.from(t, 'base64url').length, 24);
        seen.add(t);
      }
      assert.equal(seen.size, 50);
    });

    it('parses a tokens file with one leniency: each token absent or a non-empty string, other keys ignored', () => {
      assert.deepEqual(parseTokensFile('{"apiToken":"a","webhookToken":"w","note":1}'), { apiToken: 'a', webhookToken: 'w' });
      assert.deepEqual(parseTokensFile('{"apiToken":"a"}'), { apiToken: 'a', webhookToken: undefined });
      assert.deepEqual(parseTokensFile('{}'), { apiToken: undefined, webhookToken: undefined });
      for (const bad of ['', 'not json', '[]', 'null', '"x"', '{"apiToken":""}', '{"apiToken":5}', '{"webhookToken":null}']) {
        const p = parseTokensFile(bad, '/d/tokens.json');
        assert.ok(TokensFileProblem.is(p, 'tokens_file_invalid'), bad);
        assert.match(p.message, /^\/d\/tokens\.json is not a JSON object/);
      }
    });

    it('reads a tokens file from disk: missing, unreadable, invalid and good files', async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-contract-'));
      const read = (f: string) => fs.readFile(f, 'utf8');
      try {
        const file = path.join(dir, TOKENS_FILE);
        assert.ok(TokensFileProblem.is(await readTokensFile(file, read), 'tokens_file_missing'));
        await fs.mkdir(file);
        assert.ok(TokensFileProblem.is(await readTokensFile(file, read), 'tokens_file_unreadable'));
        await fs.rmdir(file);
        await fs.writeFile(file, '{"apiToken":');
        assert.ok(TokensFileProblem.is(await readTokensFile(file, read), 'tokens_file_invalid'));
        await fs.writeFile(file, JSON.stringify({ apiToken: 'a-1', webhookToken: 'w-1' }));
        assert.deepEqual(await readTokensFile(file, read), { apiToken: 'a-1', webhookToken: 'w-1' });
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    });

    it('one token-separation rule: the API token apart from the webhook and Twilio tokens, the provider key apart from all three', () => {
      assert.equal(tokenSeparationProblem({ apiToken: 'a', webhookToken: 'w', twilioAuthToken: 't', providerKey: 'p' }), undefined);
      // Only the API token and the webhook token are kept apart from each other by the Twilio one's rule.
      assert.equal(tokenSeparationProblem({ apiToken: 'a', webhookToken: 'x', twilioAuthToken: 'x' }), undefined);
      assert.match(tokenSeparationProblem({ apiToken: 'x', webhookToken: 'x' }) ?? '', /API token and the webhook token must differ/);
      assert.match(tokenSeparationProblem({ apiToken: 'x', webhookToken: 'w', twilioAuthToken: 'x' }) ?? '', /Twilio auth token must differ from the API token/);
      for (const same of [{ apiToken: 'x' }, { webhookToken: 'x' }, { twilioAuthToken: 'x' }]) {
        assert.match(tokenSeparationProblem({ apiToken: 'a', webhookToken: 'w', twilioAuthToken: 't', ...same, providerKey: 'x' }) ?? '', /provider key must differ/, JSON.stringify(same));
      }
    });

    it('one tokens file writer: owner-only JSON every reader parses; exclusive never replaces a file; tokens that are not apart are never written', async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-contract-'));
      const read = (f: string) => fs.readFile(f, 'utf8');
      try {
        const file = path.join(dir, 'sub', TOKENS_FILE);
        const tokens = { apiToken: 'a-1', webhookToken: 'w-1', twilioAuthToken: 't-1', providerKey: 'p-1' };
        await writeTokensFile(file, tokens, { exclusive: true });
        assert.deepEqual(await readTokensFile(file, read), tokens);
        if (process.platform !== 'win32') assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
        await assert.rejects(writeTokensFile(file, { ...tokens, apiToken: 'a-2' }, { exclusive: true }), (e: NodeJS.ErrnoException) => e.code === 'EEXIST');
        assert.deepEqual(await readTokensFile(file, read), tokens);
        await writeTokensFile(file, { ...tokens, apiToken: 'a-2' });
        assert.equal(((await readTokensFile(file, read)) as { apiToken?: string }).apiToken, 'a-2');
        await assert.rejects(writeTokensFile(file, { ...tokens, webhookToken: 'a-1', apiToken: 'a-1' }), /must differ/);
        assert.equal(((await readTokensFile(file, read)) as { apiToken?: string }).apiToken, 'a-2');
        assert.deepEqual((await fs.readdir(path.dirname(file))).sort(), [TOKENS_FILE]);
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    });
  });
});

describe('server file and health proof', () => {
  it('writes a private server file naming the server and its tokens, proves its key on /healthz, and removes the file on close', async () => {
    const dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-proof-')), 'data');
    const server = await startInboxServer({ host: DEFAULT_HOST, httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: 'proof-api-1234', webhookToken: 'proof-wh-5678', defaultDomain: DEFAULT_DOMAIN });
    const file = path.join(dir, SERVER_FILE);
    try {
      if (process.platform !== 'win32') {
        assert.equal((await fs.stat(file)).mode & 0o777, 0o600);
        assert.equal((await fs.stat(dir)).mode & 0o777, 0o700, 'a new data folder is the owner\'s only');
      }
      const proof = await readServerFile(file, (f) => fs.readFile(f, 'utf8'));
      assert.ok(!ServerFileProblem.is(proof));
      assert.equal(proof.pid, process.pid);
      assert.equal(proof.http, server.httpUrl);
      assert.equal(proof.smtp, `${DEFAULT_HOST}:${server.smtpPort}`);
      assert.equal(proof.apiTokenSha256, await tokenDigest('proof-api-1234'));
      assert.equal(proof.webhookTokenSha256, await tokenDigest('proof-wh-5678'));
      assert.ok(!JSON.stringify(proof).includes('proof-api-1234'), 'no token in the file');

      const challenge = generateToken();
      const answer = (await (await fetch(`${server.httpUrl}/healthz?${HEALTH_CHALLENGE_PARAM}=${challenge}`)).json()) as { service: string; proof?: string };
      assert.equal(answer.service, 'test-inbox');
      assert.equal(answer.proof, await healthProof(proof.key, challenge));
      assert.notEqual(answer.proof, await healthProof(proof.key, generateToken()), 'a proof holds for its challenge only');
      assert.ok(!JSON.stringify(answer).includes(proof.key), 'the key never travels');
      const plain = (await (await fetch(`${server.httpUrl}/healthz`)).json()) as { proof?: string };
      assert.equal(plain.proof, undefined);
      assert.equal((await fetch(`${server.httpUrl}/healthz?${HEALTH_CHALLENGE_PARAM}=${'x'.repeat(MAX_CHALLENGE_LENGTH + 1)}`)).status, 400);
    } finally {
      await server.close();
    }
    assert.ok(ServerFileProblem.is(await readServerFile(file, (f) => fs.readFile(f, 'utf8')), 'server_file_missing'), 'removed on close');
    await fs.rm(path.dirname(dir), { recursive: true, force: true });
  });

  it('parses only a complete server file', () => {
    assert.ok(ServerFileProblem.is(parseServerFile('{"pid":1}'), 'server_file_invalid'));
    assert.ok(ServerFileProblem.is(parseServerFile('nope'), 'server_file_invalid'));
    const ok = { pid: 1, http: 'http://127.0.0.1:1', smtp: '127.0.0.1:2', key: 'k', apiTokenSha256: 'a', webhookTokenSha256: 'w' };
    assert.deepEqual(parseServerFile(JSON.stringify({ ...ok, extra: true })), ok);
    assert.equal(SERVER_FILE, 'server.json');
  });
});
