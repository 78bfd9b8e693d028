// Who may read the drop-in APIs (docs/compat.md): off unless asked for; no token while the
// server listens on loopback alone; HTTP Basic with the API token as the password on any other
// address (the real clients' own auth options); `--compat-open` without a token anywhere; the
// Origin check; no CORS preflight; the small body cap of the routes that read a body.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import mailhogClient from 'mailhog';
import { MailpitClient } from 'mailpit-api';
import { InbucketAPIClient } from 'inbucket-js-client';
import { COMPAT_BODY_MAX_BYTES } from '../../src/server/http/compat/routes';
import { COMPAT_ENV, parseReadyLine, tokensEnv } from '../../src/shared/contract';
import { startCli } from './cliProcess';
import { type CompatServer, startCompat } from './compat-harness';

const COMPAT_PATHS = ['/api/v1/messages', '/api/v1/search?query=x', '/api/v1/message/latest', '/api/v1/info', '/view/latest.html', '/api/v2/messages', '/api/v1/mailbox/ann'];

describe('compat: off unless asked for, and who may read it', function () {
  this.timeout(60_000);

  describe('without --compat', () => {
    let s: CompatServer;
    before(async () => (s = await startCompat({ compat: false })));
    after(async () => s?.close());

    it('no drop-in route answers: 404, as before', async () => {
      for (const p of COMPAT_PATHS) assert.equal((await fetch(`${s.base}${p}`)).status, 404, p);
      assert.equal((await fetch(`${s.base}/api/v1/messages`, { method: 'DELETE' })).status, 404);
      const said = (await (await fetch(`${s.base}/api/v1/messages`)).json()) as { message: string };
      assert.match(said.message, /unknown route GET \/api\/v1\/messages: Mailpit's, MailHog's and Inbucket's APIs are served with --compat/);
      // MailHog's search path is Test Inbox's own search then (it wants the API token).
      assert.equal((await fetch(`${s.base}/api/v2/search?kind=to&query=x`)).status, 401);
    });
  });

  describe('on loopback', () => {
    let s: CompatServer;
    before(async () => (s = await startCompat()));
    after(async () => s?.close());

    it('no token needed', async () => {
      for (const p of COMPAT_PATHS.filter((x) => !x.includes('latest'))) assert.equal((await fetch(`${s.base}${p}`)).status, 200, p);
    });

    it('a page of another site is refused (403); no route answers a CORS preflight', async () => {
      const r = await fetch(`${s.base}/api/v1/messages`, { headers: { origin: 'http://evil.example' } });
      assert.equal(r.status, 403);
      const pre = await fetch(`${s.base}/api/v1/messages`, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'DELETE' } });
      assert.notEqual(pre.status, 200);
      assert.notEqual(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), null);
      assert.equal(pre.headers.get('access-control-allow-methods'), null);
      const own = await fetch(`${s.base}/api/v1/messages`, { headers: { origin: s.base } });
      assert.equal(own.status, 200);
    });

    it('a body past the small cap of its own is 413, and nothing is deleted', async () => {
      await s.send({ to: 'ann@inbox.test', subject: 'kept', text: 'x' });
      const ids = Array.from({ length: Math.ceil(COMPAT_BODY_MAX_BYTES / 10) }, (_, i) => `id-${i}-0000`);
      const r = await fetch(`${s.base}/api/v1/messages`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ IDs: ids }) });
      assert.equal(r.status, 413);
      const put = await fetch(`${s.base}/api/v1/messages`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ IDs: ids, Read: true }) });
      assert.equal(put.status, 413);
      assert.equal(((await (await fetch(`${s.base}/api/v1/messages`)).json()) as { total: number }).total, 1);
    });
  });

  describe('listening beyond loopback (0.0.0.0)', () => {
    let s: CompatServer;
    before(async () => (s = await startCompat({ host: '0.0.0.0' })));
    after(async () => s?.close());

    it('HTTP Basic, any user, the API token as the password; none or a wrong one is 401 with a Basic challenge', async () => {
      const none = await fetch(`${s.base}/api/v1/messages`);
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate') ?? '', /^Basic /);
      const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
      assert.equal((await fetch(`${s.base}/api/v1/messages`, { headers: { authorization: basic('any', 'wrong') } })).status, 401);
      assert.equal((await fetch(`${s.base}/api/v1/messages`, { headers: { authorization: `Bearer ${s.apiToken}` } })).status, 401);
      for (const p of COMPAT_PATHS.filter((x) => !x.includes('latest'))) assert.equal((await fetch(`${s.base}${p}`, { headers: { authorization: basic('whoever', s.apiToken) } })).status, 200, p);
    });

    it('the real clients with their own auth options', async () => {
      await s.send({ to: 'ann@inbox.test', subject: 'auth', text: 'x' });
      const mp = new MailpitClient(s.base, { auth: { username: 'u', password: s.apiToken } });
      assert.equal((await mp.listMessages()).total, 1);
      await assert.rejects(new MailpitClient(s.base).listMessages(), /401/);
      const mh = mailhogClient({ host: '127.0.0.1', port: s.server.httpPort, auth: `u:${s.apiToken}` });
      assert.equal((await mh.messages())!.total, 1);
      const ib = new InbucketAPIClient(s.base, { headers: { authorization: `Basic ${Buffer.from(`u:${s.apiToken}`).toString('base64')}` } });
      assert.equal((await ib.mailbox('ann')).length, 1);
      await assert.rejects(new InbucketAPIClient(s.base).mailbox('ann'), /request error: 401/);
    });
  });

  describe('--compat-open beyond loopback', () => {
    let s: CompatServer;
    before(async () => (s = await startCompat({ host: '0.0.0.0', open: true })));
    after(async () => s?.close());

    it('no token anywhere', async () => {
      for (const p of COMPAT_PATHS.filter((x) => !x.includes('latest'))) assert.equal((await fetch(`${s.base}${p}`)).status, 200, p);
    });
  });
});

describe('compat: the real CLI', function () {
  this.timeout(60_000);

  it('`serve --compat-open` warns at start what it exposes, and serves Mailpit\'s API without a token', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-compat-cli-'));
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir, '--compat-open'], tokensEnv({ apiToken: 'api-compat-cli', webhookToken: 'wh-compat-cli' }));
    try {
      await r.ready;
      assert.match(r.stderr(), /--compat-open: the drop-in APIs .* answer without a token/);
      const ready = parseReadyLine(r.stdout().split('\n')[0]);
      assert.ok(ready);
      assert.equal((await fetch(`${ready.http}/api/v1/info`)).status, 200);
    } finally {
      await r.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it(`\`serve\` with ${COMPAT_ENV}=1 serves the drop-in APIs; without it they are 404`, async () => {
    for (const on of [true, false]) {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-compat-cli-'));
      const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir], { ...tokensEnv({ apiToken: 'api-compat-cli', webhookToken: 'wh-compat-cli' }), ...(on ? { [COMPAT_ENV]: '1' } : {}) });
      try {
        await r.ready;
        const ready = parseReadyLine(r.stdout().split('\n')[0]);
        assert.ok(ready);
        assert.equal((await fetch(`${ready.http}/api/v2/messages`)).status, on ? 200 : 404);
        assert.doesNotMatch(r.stderr(), /--compat-open/);
      } finally {
        await r.stop();
        await fs.rm(dir, { recursive: true, force: true });
      }
    }
  });
});
