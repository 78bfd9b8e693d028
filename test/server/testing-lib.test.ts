// The test library (src/testing, the npm package's `require('test-inbox')`) against the real
// local server on port 0: mail sent over real SMTP, SMS through the Twilio-compatible API, and
// a hosted-style front (the same server without /healthz and the code and link routes, as the
// hosted service answers) for the list-and-fetch path.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { clearInbox, sendMail, sendSms, TestInboxError, totp, waitForCode, waitForLink } from '../../src/testing';

const DOMAIN = 'inbox.test';
/** Every variable the library reads: the tests set what they use through options. */
const LIBRARY_ENV = ['TEST_INBOX_SERVER', 'TEST_INBOX_API_TOKEN', 'TEST_INBOX_DOMAIN', 'TEST_INBOX_DATA_DIR', 'TEST_INBOX_SMTP', 'TEST_INBOX_TWILIO_AUTH_TOKEN'];

describe('test library (waitForCode, waitForLink, totp, sendSms, sendMail, clearInbox)', function () {
  this.timeout(30_000);
  let dataDir: string;
  let server: InboxServer;
  let token: string;
  let conn: { server: string; token: string };
  const saved: Record<string, string | undefined> = {};

  before(async () => {
    for (const k of LIBRARY_ENV) {
      saved[k] = process.env[k];
      delete process.env[k];
    }
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-lib-'));
    const tokens = await loadOrCreateTokens(dataDir);
    token = tokens.apiToken;
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN });
    conn = { server: server.httpUrl, token };
  });

  after(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
    for (const k of LIBRARY_ENV) if (saved[k] !== undefined) process.env[k] = saved[k];
  });

  async function smtpSend(to: string, subject: string, text: string, html?: string): Promise<void> {
    const t = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'Shop <shop@example.test>', to, subject, text, html });
    } finally {
      t.close();
    }
  }

  it('never answers a code that arrived before `since` (the stale-OTP bug), and waits for the next one', async () => {
    await smtpSend(`stale@${DOMAIN}`, 'Your code', 'Your verification code is 111111.');
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    const waiting = waitForCode('stale', { ...conn, since, timeout: '10s' });
    await new Promise((r) => setTimeout(r, 300));
    await smtpSend(`stale@${DOMAIN}`, 'Your code', 'Your verification code is 222222.');
    const r = await waiting;
    assert.equal(r.code, '222222');
    assert.equal(r.subject, 'Your code');
    assert.match(r.from, /shop@example\.test/);
    // Without `since` the newest code counts; with 'now' the earlier ones never do.
    assert.equal((await waitForCode(`stale@${DOMAIN}`, { ...conn, timeout: 0 })).code, '222222');
    await assert.rejects(waitForCode('stale', { ...conn, since: 'now', timeout: '400ms' }), (e: unknown) => TestInboxError.is(e, 'timeout') && /no message with a one-time code arrived in stale \(every domain\) after .* within 0\.4 s/.test(e.message));
    // A message id as `since`: only what came after it.
    await assert.rejects(waitForCode('stale', { ...conn, since: r.id, timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
  });

  it('waits for a code that arrives during the wait', async () => {
    const started = Date.now();
    const waiting = waitForCode('slow', { ...conn, since: 'now', timeout: '20s' });
    await new Promise((r) => setTimeout(r, 1500));
    await smtpSend(`slow@${DOMAIN}`, 'Sign in', 'Use 704128 to sign in.');
    const r = await waiting;
    assert.ok(Date.now() - started >= 1500);
    assert.equal(r.code, '704128');
  });

  it('finds the verification link by kind and deletes the message when asked, so no second run reads it', async () => {
    const since = Date.now();
    await smtpSend(
      `link@${DOMAIN}`,
      'Confirm your address',
      'Confirm: https://app.example.test/verify?t=abc',
      '<p>Welcome!</p><a href="https://app.example.test/reset?t=1">Forgot your password?</a> <a href="https://app.example.test/verify?t=abc">Confirm my email</a>',
    );
    const r = await waitForLink('link', { ...conn, since, kind: 'verify', delete: true, timeout: '5s' });
    assert.equal(r.url, 'https://app.example.test/verify?t=abc');
    assert.equal(r.kind, 'verify-email');
    assert.equal(r.text, 'Confirm my email');
    await assert.rejects(waitForLink('link', { ...conn, since, kind: 'verify', timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
  });

  it('sends an SMS through the Twilio-compatible API into the phone inbox, and mail over SMTP', async () => {
    const since = Date.now();
    const sms = await sendSms({ ...conn, to: '+1 (415) 555-0123', body: 'Your Acme code: 90210', dataDir });
    assert.match(sms.sid, /^SM[0-9a-f]{32}$/);
    assert.equal(sms.inbox, '14155550123');
    assert.equal((await waitForCode(sms.inbox, { ...conn, since, timeout: '5s' })).code, '90210');

    const mail = await sendMail({ ...conn, dataDir, smtp: `${server.smtpHost}:${server.smtpPort}`, to: 'sent', subject: 'Welcome', html: '<p>Your code is <b>314159</b></p>' });
    assert.equal(mail.via, 'smtp');
    const r = await waitForCode(`sent@${DOMAIN}`, { ...conn, since, timeout: '5s' });
    assert.equal(r.code, '314159');
    assert.equal(await clearInbox('sent', conn), 1);
    await assert.rejects(waitForCode('sent', { ...conn, timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
  });

  it('new user 3: a bare inbox name goes to the server\'s default domain, not to the domain listed first', async () => {
    // A domain that sorts before the default one holds mail: the listing names it first.
    await smtpSend('first@aaa-first.example', 'Elsewhere', 'not here');
    const { domains } = await (await fetch(`${server.httpUrl}/api/v2/domains`, { headers: { authorization: token } })).json() as { domains: Array<{ name: string }> };
    assert.equal(domains[0].name, 'aaa-first.example');
    const since = Date.now();
    const mail = await sendMail({ ...conn, dataDir, smtp: `${server.smtpHost}:${server.smtpPort}`, to: 'bare', subject: 'Bare', text: 'Your code is 271828' });
    assert.equal(mail.via, 'smtp');
    assert.equal((await waitForCode(`bare@${DOMAIN}`, { ...conn, since, timeout: '5s' })).code, '271828');
    await assert.rejects(waitForCode('bare@aaa-first.example', { ...conn, timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
    await clearInbox(`bare@${DOMAIN}`, conn);
    await clearInbox('first@aaa-first.example', conn);
  });

  it('finds the running server and its token in the data dir alone, and never sends that token elsewhere', async () => {
    const since = Date.now();
    await smtpSend(`dir@${DOMAIN}`, 'Code', 'Your login code is 5150.');
    assert.equal((await waitForCode('dir', { dataDir, since, timeout: '5s' })).code, '5150');
    // Without a token, a server that does not answer is unreachable first (the token is the next problem).
    await assert.rejects(waitForCode('dir', { dataDir, server: 'https://inbox.example.invalid' }), (e: unknown) => TestInboxError.is(e, 'unreachable') && /inbox\.example\.invalid/.test(e.message) && /tokens\.json was not used/.test(e.message));
    // Another program on a local port gets no token, even when it answers like the server.
    const seen: Array<string | undefined> = [];
    const impostor = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"service":"test-inbox","version":"x","status":"ok","proof":"00"}');
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
      await assert.rejects(waitForCode('dir', { dataDir, server: url }), (e: unknown) => TestInboxError.is(e, 'unauthorized') && /tokens\.json was not used: its server listens at http:\/\/127\.0\.0\.1:\d+, not/.test(e.message));
      // The same port named in server.json but unable to prove it: still nothing sent.
      const file = path.join(dataDir, 'server.json');
      const real = await fs.readFile(file, 'utf8');
      await fs.writeFile(file, JSON.stringify({ ...JSON.parse(real), http: url }), { mode: 0o600 });
      try {
        // Its URL is not used at all: the library falls back to 127.0.0.1:2580, which is either
        // unreachable or another server that gets no token either.
        await assert.rejects(waitForCode('dir', { dataDir }), (e: unknown) => (TestInboxError.is(e, 'unauthorized') || TestInboxError.is(e, 'unreachable')) && /server\.json was not used: .*could not prove it serves that data dir/.test(e.message));
      } finally {
        await fs.writeFile(file, real, { mode: 0o600 });
      }
      assert.deepEqual(seen.filter((a) => a !== undefined), [], 'no Authorization header reached the impostor');
    } finally {
      impostor.close();
    }
    await assert.rejects(waitForCode('dir', { ...conn, token: 'wrong-token' }), (e: unknown) => TestInboxError.is(e, 'unauthorized'));
  });

  it('refuses bad input with bad_input, naming the problem', async () => {
    await assert.rejects(waitForCode('bad/inbox', conn), (e: unknown) => TestInboxError.is(e, 'bad_input') && /inbox name must not be a path/.test(e.message));
    await assert.rejects(waitForCode('joe', { ...conn, timeout: 'soon' }), (e: unknown) => TestInboxError.is(e, 'bad_input') && /timeout must be/.test(e.message));
    // A message id marks a point in time even once the message is gone (joe-1-1 is 1970): only a malformed since is refused.
    await assert.rejects(waitForCode('joe', { ...conn, since: -1 }), (e: unknown) => TestInboxError.is(e, 'bad_input') && /since/.test(e.message));
    await assert.rejects(waitForCode('joe', { ...conn, since: ' ' }), (e: unknown) => TestInboxError.is(e, 'bad_input') && /since/.test(e.message));
    await assert.rejects(waitForLink('joe', { ...conn, kind: 'bogus' as 'any' }), (e: unknown) => TestInboxError.is(e, 'bad_input') && /kind must be one of verify, reset, login, any/.test(e.message));
    await assert.rejects(sendSms({ ...conn, to: 'not a number', body: 'x' }), (e: unknown) => TestInboxError.is(e, 'bad_input'));
  });

  it('computes TOTP codes locally: RFC 6238 vectors, a base32 secret or an otpauth URI', () => {
    // RFC 6238 Appendix B, T = 59 s, the SHA-1 seed "12345678901234567890".
    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    assert.deepEqual(totp(seed, { digits: 8, at: 59_000 }), { code: '94287082', secondsLeft: 1 });
    assert.equal(totp(`otpauth://totp/Acme:joe?secret=${seed}&issuer=Acme&digits=8&period=30`, { at: new Date(1_111_111_109_000) }).code, '07081804');
    const sha256 = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA';
    assert.equal(totp(`otpauth://totp/x?secret=${sha256}&algorithm=SHA256&digits=8`, { at: 59_000 }).code, '46119246');
    assert.match(totp('JBSWY3DPEHPK3PXP').code, /^\d{6}$/);
    assert.throws(() => totp('not base32!'), (e: unknown) => TestInboxError.is(e, 'bad_input') && /base32/.test(e.message));
    assert.throws(() => totp('otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1'), (e: unknown) => TestInboxError.is(e, 'bad_input') && /HOTP/.test(e.message));
  });

  describe('towards a hosted service (list and fetch, no code route)', () => {
    let front: http.Server;
    let hosted: { server: string; token: string };

    before(async () => {
      // The same server behind a front that answers 404 where the hosted service has nothing:
      // /healthz and the code and link routes.
      front = http.createServer((req, res) => {
        const url = req.url ?? '/';
        if (url.startsWith('/healthz') || /\/(code|link)(\?|$)/.test(url)) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
          return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
          const headers: Record<string, string> = {};
          for (const k of ['authorization', 'content-type', 'accept']) if (typeof req.headers[k] === 'string') headers[k] = req.headers[k] as string;
          fetch(`${server.httpUrl}${url}`, { method: req.method, headers, body }).then(
            async (r) => res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await r.arrayBuffer())),
            () => res.writeHead(502).end(),
          );
        });
      });
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      hosted = { server: `http://127.0.0.1:${(front.address() as AddressInfo).port}`, token };
    });

    after(() => new Promise<void>((resolve) => front.close(() => resolve())));

    it('waits for a code after `since` by listing and fetching, and skips earlier messages', async () => {
      await smtpSend(`hosted@${DOMAIN}`, 'Old code', 'Your verification code is 123123.');
      const since = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      const waiting = waitForCode('hosted', { ...hosted, since, timeout: '10s' });
      await new Promise((r) => setTimeout(r, 300));
      await smtpSend(`hosted@${DOMAIN}`, 'News', 'No code here, just news.');
      await smtpSend(`hosted@${DOMAIN}`, 'New code', 'Your verification code is 456456.');
      const r = await waiting;
      assert.equal(r.code, '456456');
      assert.equal(r.subject, 'New code');
      await assert.rejects(waitForCode('hosted', { ...hosted, since: r.id, timeout: '500ms' }), (e: unknown) => TestInboxError.is(e, 'timeout'));
    });

    it('finds a link by kind and deletes the message when asked; refuses what needs a Test Inbox server', async () => {
      const since = Date.now();
      await smtpSend(`hosted@${DOMAIN}`, 'Reset', 'Reset', '<a href="https://app.example.test/u?x=1">Unsubscribe</a> <a href="https://app.example.test/password/reset?t=9">Reset password</a>');
      const r = await waitForLink('hosted', { ...hosted, since, kind: 'reset', delete: true, timeout: '5s' });
      assert.equal(r.url, 'https://app.example.test/password/reset?t=9');
      await assert.rejects(waitForLink('hosted', { ...hosted, since, kind: 'reset', timeout: 0 }), (e: unknown) => TestInboxError.is(e, 'timeout'));
      await assert.rejects(sendSms({ ...hosted, to: '+14155550100', body: 'x' }), (e: unknown) => TestInboxError.is(e, 'unsupported'));
      const injected = await sendMail({ ...hosted, to: `hosted@${DOMAIN}`, subject: 'Injected', text: 'Your code is 8642' });
      assert.equal(injected.via, 'inject');
      assert.equal((await waitForCode('hosted', { ...hosted, since: Date.now() - 60_000, timeout: '5s' })).id, injected.id);
    });
  });
});
