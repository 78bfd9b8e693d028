// Issue 38, part B: Mailosaur's API with the official SDK (`mailosaur`) unchanged, through the
// CONNECT proxy and the local CA, against a real server (port 0) that real SMTP (nodemailer)
// delivers to `<user>@<serverId>.mailosaur.net`.
//
// The SDK cannot be pointed at the server over plain http: it calls `https.request` whatever its
// base URL's scheme, and drops the base URL's port (always 443). So every SDK call runs as a
// suite would run it: in a child node process with its default base URL and the two variables
// (https_proxy, NODE_EXTRA_CA_CERTS; the latter is read only at process start).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import nodemailer from 'nodemailer';
import { DEFAULT_TOTP, totpAt } from '../../src/core/totp';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { CA_DIR, CA_KEY_FILE, LocalCa, LocalCaError, permittedNames } from '../../src/server/tls/localCa';
import { PROXIED_HOSTS } from '../../src/server/http/compat/hosts';
import { connectAndReset, rawRequest } from './api-harness';

const API = 'mailosaur-compat-api-token-0123456789';
const WEBHOOK = 'mailosaur-compat-webhook-token-0123456789';
const SERVER_ID = 'abcd1234';
const DOMAIN = `${SERVER_ID}.mailosaur.net`;
const ROOT = path.resolve(__dirname, '../..');

interface SdkOutcome {
  ok: boolean;
  value?: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  error?: { name: string; message: string; errorType?: string; httpStatusCode?: number | null; httpResponseBody?: string | null };
  ms: number;
}

describe('compat: Mailosaur\'s API with the official SDK, through the CONNECT proxy and the local CA', function () {
  this.timeout(60_000);
  let dir: string;
  let server: InboxServer;
  let port: number;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ti-mailosaur-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API, webhookToken: WEBHOOK, defaultDomain: 'inbox.test', compat: { open: false } });
    port = server.httpPort;
  });
  after(async () => {
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function send(to: string, subject: string, extra: { text?: string; html?: string } = {}): Promise<void> {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'Shop <noreply@shop.example>', to, subject, text: extra.text ?? 'hello', ...(extra.html !== undefined ? { html: extra.html } : {}) });
    } finally {
      t.close();
    }
  }

  /** Runs `body` (an async function body with `client` and `MailosaurClient`) in a child node with the SDK's default base URL and the two variables. */
  function sdk(body: string, key = API): Promise<SdkOutcome> {
    const script = `
      const MailosaurClient = require('mailosaur');
      const client = new MailosaurClient(${JSON.stringify(key)});
      const t0 = Date.now();
      (async () => { ${body} })().then(
        (value) => process.stdout.write(JSON.stringify({ ok: true, value, ms: Date.now() - t0 })),
        (e) => process.stdout.write(JSON.stringify({ ok: false, ms: Date.now() - t0, error: { name: e.constructor.name, message: e.message, errorType: e.errorType, httpStatusCode: e.httpStatusCode, httpResponseBody: e.httpResponseBody } })),
      );`;
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', https_proxy: `http://127.0.0.1:${port}`, NODE_EXTRA_CA_CERTS: server.compatCaFile ?? '' };
    return new Promise((resolve, reject) => {
      execFile(process.execPath, ['-e', script], { cwd: ROOT, env, timeout: 40_000 }, (err, stdout, stderr) => {
        if (err && !stdout) return reject(new Error(`${err.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout) as SdkOutcome);
        } catch {
          reject(new Error(`child said: ${stdout}\n${stderr}`));
        }
      });
    });
  }

  it('serves the CA path, a PEM certificate of a CA the SDK child trusts', () => {
    assert.ok(server.compatCaFile && path.isAbsolute(server.compatCaFile), String(server.compatCaFile));
  });

  it('messages.list, search (ALL and ANY), get and getById read SMTP mail with codes and links from the one core', async () => {
    await send(`anna@${DOMAIN}`, 'Your sign-in code', { text: 'Your code is 482913.\nSign in: https://app.example/login?t=abc', html: '<p>Your code is <b>482913</b>.</p><p><a href="https://app.example/verify?t=x&amp;u=1">Verify your email</a></p>' });
    await send(`bob@${DOMAIN}`, 'Weekly news', { text: 'nothing to see' });
    await send('carol@other.example', 'Not a Mailosaur server', { text: 'elsewhere' });
    const r = await sdk(`
      const list = await client.messages.list(${JSON.stringify(SERVER_ID)});
      const all = await client.messages.search(${JSON.stringify(SERVER_ID)}, { sentTo: 'anna@${DOMAIN}', subject: 'sign-in' });
      const any = await client.messages.search(${JSON.stringify(SERVER_ID)}, { subject: 'nothing like it', body: 'nothing to see', match: 'ANY' });
      const none = await client.messages.search(${JSON.stringify(SERVER_ID)}, { sentFrom: 'someone@else.example' });
      const got = await client.messages.get(${JSON.stringify(SERVER_ID)}, { sentTo: 'anna@${DOMAIN}' }, { timeout: 10000 });
      const byId = await client.messages.getById(got.id);
      return { list, all, any, none, got, byId };`);
    assert.ok(r.ok, JSON.stringify(r.error));
    const v = r.value;
    assert.deepEqual(v.list.items.map((m: { subject: string }) => m.subject), ['Weekly news', 'Your sign-in code']);
    assert.equal(v.list.items[1].server, SERVER_ID);
    assert.deepEqual(v.list.items[1].from, [{ name: 'Shop', email: 'noreply@shop.example' }]);
    assert.deepEqual(v.all.items.map((m: { subject: string }) => m.subject), ['Your sign-in code']);
    assert.deepEqual(v.any.items.map((m: { subject: string }) => m.subject), ['Weekly news']);
    assert.deepEqual(v.none.items, []);
    const m = v.got;
    assert.equal(m.subject, 'Your sign-in code');
    assert.equal(m.type, 'Email');
    assert.equal(m.server, SERVER_ID);
    assert.deepEqual(m.to, [{ name: '', email: `anna@${DOMAIN}` }]);
    assert.deepEqual(m.html.codes, [{ value: '482913' }]);
    assert.deepEqual(m.text.codes, [{ value: '482913' }]);
    assert.deepEqual(m.html.links, [{ href: 'https://app.example/verify?t=x&u=1', text: 'Verify your email' }]);
    assert.deepEqual(m.text.links.map((l: { href: string }) => l.href), ['https://app.example/login?t=abc']);
    assert.match(m.text.body, /Your code is 482913/);
    assert.ok(m.metadata.headers.some((h: { field: string; value: string }) => h.field.toLowerCase() === 'subject' && h.value === 'Your sign-in code'));
    assert.deepEqual(v.byId, m);
  });

  it('messages.get waits (the x-ms-delay cadence) for mail that arrives after it started', async () => {
    const waiting = sdk(`return await client.messages.get(${JSON.stringify(SERVER_ID)}, { subject: 'arrives later' }, { timeout: 15000 });`);
    await new Promise((r) => setTimeout(r, 1500));
    await send(`late@${DOMAIN}`, 'It arrives later', { text: 'code 771204' });
    const r = await waiting;
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.equal(r.value.subject, 'It arrives later');
    assert.ok(r.ms < 12_000, `took ${r.ms} ms`);
  });

  it('a search that finds nothing in time: search_timeout, or the empty list with errorOnTimeout false', async () => {
    const r = await sdk(`
      let timeout;
      try { await client.messages.search(${JSON.stringify(SERVER_ID)}, { subject: 'never sent' }, { timeout: 1500 }); } catch (e) { timeout = { type: e.errorType, name: e.constructor.name }; }
      const quiet = await client.messages.search(${JSON.stringify(SERVER_ID)}, { subject: 'never sent' }, { timeout: 1000, errorOnTimeout: false });
      let got;
      try { await client.messages.get(${JSON.stringify(SERVER_ID)}, { subject: 'never sent' }, { timeout: 1000 }); } catch (e) { got = e.errorType; }
      return { timeout, quiet, got };`);
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.deepEqual(r.value.timeout, { type: 'search_timeout', name: 'MailosaurError' });
    assert.deepEqual(r.value.quiet.items, []);
    assert.equal(r.value.got, 'search_timeout');
  });

  it('a wrong key is 401 (authentication_error), an unknown id 404, for the SDK', async () => {
    const wrong = await sdk(`return await client.messages.list(${JSON.stringify(SERVER_ID)});`, 'not-the-token');
    assert.equal(wrong.ok, false);
    assert.equal(wrong.error?.name, 'MailosaurError');
    assert.equal(wrong.error?.errorType, 'authentication_error');
    assert.equal(wrong.error?.httpStatusCode, 401);
    const unknown = await sdk(`return await client.messages.getById('nobody-1700000000-1');`);
    assert.equal(unknown.error?.errorType, 'invalid_request');
    assert.equal(unknown.error?.httpStatusCode, 404);
    const notId = await sdk(`return await client.messages.del('x');`);
    assert.equal(notId.error?.httpStatusCode, 404);
  });

  it('devices.otp gives the TOTP core\'s code for a shared secret', async () => {
    const secret = 'JBSWY3DPEHPK3PXP';
    const before = totpAt(secret, DEFAULT_TOTP, Date.now()).code;
    const r = await sdk(`return await client.devices.otp(${JSON.stringify(secret)});`);
    const after = totpAt(secret, DEFAULT_TOTP, Date.now()).code;
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.ok([before, after].includes(r.value.code), `${r.value.code} is neither ${before} nor ${after}`);
    assert.ok(Date.parse(r.value.expires) > Date.now() - 1000);
    const bad = await sdk(`return await client.devices.otp('not base32 !');`);
    assert.equal(bad.error?.httpStatusCode, 400);
  });

  it('messages.del deletes one (204), messages.deleteAll a server\'s (204); other servers keep theirs', async () => {
    await send(`keep@zzzz9999.mailosaur.net`, 'Other server');
    const r = await sdk(`
      const first = await client.messages.list(${JSON.stringify(SERVER_ID)});
      await client.messages.del(first.items[0].id);
      let gone; try { await client.messages.getById(first.items[0].id); } catch (e) { gone = e.httpStatusCode; }
      const after = await client.messages.list(${JSON.stringify(SERVER_ID)});
      await client.messages.deleteAll(${JSON.stringify(SERVER_ID)});
      const empty = await client.messages.list(${JSON.stringify(SERVER_ID)});
      const other = await client.messages.list('zzzz9999');
      return { before: first.items.length, gone, after: after.items.length, empty: empty.items.length, other: other.items.length };`);
    assert.ok(r.ok, JSON.stringify(r.error));
    assert.equal(r.value.gone, 404);
    assert.equal(r.value.after, r.value.before - 1);
    assert.equal(r.value.empty, 0);
    assert.equal(r.value.other, 1);
  });

  it('the same routes answer on the HTTP port itself, statuses 200/204 and Mailosaur\'s error shape', async () => {
    const basic = (k: string): string => `Basic ${Buffer.from(`${k}:`).toString('base64')}`;
    const list = await fetch(`http://127.0.0.1:${port}/api/messages?server=${SERVER_ID}`, { headers: { authorization: basic(API) } });
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(((await list.json()) as { items: unknown[] }).items));
    const search = await fetch(`http://127.0.0.1:${port}/api/messages/search?server=${SERVER_ID}`, { method: 'POST', headers: { authorization: basic(API), 'content-type': 'application/json' }, body: '{"subject":"x"}' });
    assert.equal(search.status, 200);
    assert.ok(search.headers.get('x-ms-delay'));
    const wrong = await fetch(`http://127.0.0.1:${port}/api/messages?server=${SERVER_ID}`, { headers: { authorization: basic('nope') } });
    assert.equal(wrong.status, 401);
    assert.equal(((await wrong.json()) as { type: string }).type, 'authentication_error');
    const noServer = await fetch(`http://127.0.0.1:${port}/api/messages`, { headers: { authorization: basic(API) } });
    assert.equal(noServer.status, 400);
    assert.equal(((await noServer.json()) as { errors: Array<{ field: string }> }).errors[0].field, 'server');
    const del = await fetch(`http://127.0.0.1:${port}/api/messages?server=${SERVER_ID}`, { method: 'DELETE', headers: { authorization: basic(API) } });
    assert.equal(del.status, 204);
  });

  // ---- The proxy ----

  /** Sends CONNECT `authority` and resolves the socket with the proxy's status line. */
  function connect(authority: string): Promise<{ socket: net.Socket; status: number; text: string }> {
    return connectOn(port, authority);
  }
  function connectOn(toPort: number, authority: string): Promise<{ socket: net.Socket; status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: toPort });
      let text = '';
      socket.on('error', reject);
      socket.on('data', function onData(c: Buffer) {
        text += c.toString('latin1');
        if (!text.includes('\r\n\r\n')) return;
        socket.off('data', onData);
        resolve({ socket, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), text });
      });
      socket.on('end', () => resolve({ socket, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), text }));
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    });
  }

  it('CONNECT: any host not listed, a whole domain or any port but 443 is 403; nothing is tunnelled', async () => {
    for (const target of ['example.com:443', 'www.mailosaur.com:443', 'mailosaur.com.evil.example:443', 'mailosaur.com:80', 'mailosaur.com:8443', 'api.resend.com:22', '127.0.0.1:443', 'amazonaws.com:443', 'email.nowhere-1.amazonaws.com:443']) {
      const r = await connect(target);
      assert.equal(r.status, 403, `${target}: ${r.text}`);
      r.socket.destroy();
    }
    // A client that resets its socket around the refusal (or around an accepted tunnel) leaves the server serving.
    for (const target of ['example.com:443', 'mailosaur.com:8443', 'mailosaur.com:443']) for (const after of [0, 50]) await connectAndReset(port, target, after);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await fetch(`${server.httpUrl}/healthz`)).status, 200);
  });

  function tunnelTls(target: string, servername: string | undefined, toPort = port, caFile = server.compatCaFile): Promise<tls.TLSSocket> {
    return connectOn(toPort, `${target}:443`).then(
      (r) =>
        new Promise((resolve, reject) => {
          assert.equal(r.status, 200, r.text);
          const s = tls.connect({ socket: r.socket, ...(servername !== undefined ? { servername } : {}), ca: [caFile ? require('node:fs').readFileSync(caFile, 'utf8') : ''], checkServerIdentity: () => undefined }); // eslint-disable-line @typescript-eslint/no-require-imports
          s.once('secureConnect', () => resolve(s));
          s.once('error', reject);
        }),
    );
  }

  function request(s: tls.TLSSocket, host: string, target: string): Promise<string> {
    return new Promise((resolve) => {
      let text = '';
      s.on('data', (c: Buffer) => {
        text += c.toString('latin1');
        if (/\r\n\r\n/.test(text) && /content-length: (\d+)/i.test(text)) {
          const len = Number(/content-length: (\d+)/i.exec(text)?.[1]);
          if (Buffer.byteLength(text.slice(text.indexOf('\r\n\r\n') + 4)) >= len) resolve(text);
        }
      });
      s.on('close', () => resolve(text));
      s.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Basic ${Buffer.from(`${API}:`).toString('base64')}\r\n\r\n`);
    });
  }

  it('CONNECT: the SNI must be the tunnel\'s target; the Host inside too (421); the target selects the API', async () => {
    await assert.rejects(tunnelTls('mailosaur.com', 'api.resend.com'));
    await assert.rejects(async () => {
      // servername '' sends no SNI at all (Node's default would name the socket's host): the server closes the tunnel once the handshake shows it.
      const s = await tunnelTls('mailosaur.com', '');
      const answer = await request(s, 'mailosaur.com', `/api/messages?server=${SERVER_ID}`);
      s.destroy();
      if (answer === '') throw new Error('closed');
    });
    const s1 = await tunnelTls('mailosaur.com', 'mailosaur.com');
    assert.match(await request(s1, 'api.resend.com', `/api/messages?server=${SERVER_ID}`), /^HTTP\/1\.1 421 /);
    s1.destroy();
    const s2 = await tunnelTls('mailosaur.com', 'mailosaur.com');
    assert.match(await request(s2, '127.0.0.1', `/api/messages?server=${SERVER_ID}`), /^HTTP\/1\.1 421 /);
    s2.destroy();
    const s3 = await tunnelTls('mailosaur.com', 'mailosaur.com');
    assert.match(await request(s3, 'mailosaur.com', `/api/messages?server=${SERVER_ID}`), /^HTTP\/1\.1 200 /);
    s3.destroy();
    const s4 = await tunnelTls('mailosaur.com', 'mailosaur.com');
    assert.match(await request(s4, 'mailosaur.com', '/api/v2/domains'), /^HTTP\/1\.1 404 /);
    s4.destroy();
    const s5 = await tunnelTls('api.resend.com', 'api.resend.com');
    assert.match(await request(s5, 'api.resend.com', `/api/messages?server=${SERVER_ID}`), /^HTTP\/1\.1 404 /);
    s5.destroy();
  });

  it('a tunnel is the one connection it came on under the HTTP cap; a TLS handshake that never comes is cut at the header timeout', async () => {
    const capDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ti-mailosaur-cap-'));
    const capped = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: capDir, apiToken: API, webhookToken: WEBHOOK, defaultDomain: 'inbox.test', maxHttpConnections: 2, compat: { open: false } });
    const open: net.Socket[] = [];
    const healthz = (): Promise<string> => rawRequest(capped.httpPort, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    try {
      const tunnel = await tunnelTls('mailosaur.com', 'mailosaur.com', capped.httpPort, capped.compatCaFile);
      open.push(tunnel);
      assert.match(await request(tunnel, 'mailosaur.com', `/api/messages?server=${SERVER_ID}`), /^HTTP\/1\.1 200 /);
      const idle = net.connect(capped.httpPort, '127.0.0.1');
      open.push(idle);
      await new Promise((r) => idle.once('connect', r));
      await new Promise((r) => setTimeout(r, 100));
      assert.match(await healthz(), /^HTTP\/1\.1 503 /, 'a third connection is over the cap of 2');
      idle.destroy();
      await new Promise((r) => setTimeout(r, 100));
      assert.match(await healthz(), /^HTTP\/1\.1 200 /, 'the tunnel counts once: with it open, one more connection is served');
      // A CONNECT answered 200 whose client never starts TLS keeps its descriptor no longer than the header timeout.
      const silent = await connectOn(capped.httpPort, 'mailosaur.com:443');
      assert.equal(silent.status, 200);
      await new Promise((r) => silent.socket.once('close', r));
    } finally {
      for (const s of open) s.destroy();
      await capped.close();
      await fs.rm(capDir, { recursive: true, force: true });
    }
  });

  it('the twilio SDK with its default base URL goes through the proxy with HTTP_PROXY (docs/providers.md): the SMS lands in the phone inbox', async () => {
    const twDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ti-mailosaur-twilio-'));
    const TW = 'twilio-token-proxy-7c1d';
    const tw = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: twDir, apiToken: API, webhookToken: WEBHOOK, twilioAuthToken: TW, defaultDomain: 'inbox.test', compat: { open: false } });
    try {
      const account = `AC${'0123abcd'.repeat(4)}`;
      const script = `require('twilio')(${JSON.stringify(account)}, ${JSON.stringify(TW)}).messages.create({ from: '+15550100100', to: '+15550100177', body: 'Your code is 818181' }).then((m) => process.stdout.write(m.sid), (e) => { process.stdout.write('ERR ' + e.message); });`;
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HTTP_PROXY: `http://127.0.0.1:${tw.httpPort}`, NODE_EXTRA_CA_CERTS: tw.compatCaFile ?? '' };
      const out = await new Promise<string>((resolve, reject) => execFile(process.execPath, ['-e', script], { cwd: ROOT, env, timeout: 40_000 }, (err, stdout, stderr) => (err && !stdout ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))));
      assert.match(out, /^SM[0-9a-f]{32}$/, out);
      const listed = (await (await fetch(`${tw.httpUrl}/api/v2/domains/inbox.test/inboxes/15550100177`, { headers: { authorization: API } })).json()) as { msgs: Array<{ subject: string }> };
      assert.equal(listed.msgs.length, 1);
    } finally {
      await tw.close();
      await fs.rm(twDir, { recursive: true, force: true });
    }
  });

  // ---- The CA ----

  it('the CA: CA pathLen 0, keyCertSign only, serverAuth only, critical Name Constraints on exactly the hosts and no IP; ≤ 90 days', () => {
    const file = server.compatCaFile as string;
    const pem = require('node:fs').readFileSync(file, 'utf8') as string; // eslint-disable-line @typescript-eslint/no-require-imports
    const cert = new X509Certificate(pem);
    assert.equal(cert.ca, true);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']); // X509Certificate.keyUsage is the extended key usage
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
    assert.ok(days <= 90, `${days} days`);
    assert.deepEqual(permittedNames(cert.raw), [...PROXIED_HOSTS.keys()]);
    const text = execFileSync('openssl', ['x509', '-in', file, '-noout', '-text'], { encoding: 'utf8' });
    assert.match(text, /X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0\n/);
    assert.match(text, /X509v3 Key Usage: critical\n\s+Certificate Sign\n/);
    assert.match(text, /X509v3 Extended Key Usage: ?\n\s+TLS Web Server Authentication\n/);
    assert.match(text, /X509v3 Name Constraints: critical\n\s+Permitted:\n\s+DNS:mailosaur\.com\n/);
    assert.match(text, /Excluded:\n\s+IP:0\.0\.0\.0\/0\.0\.0\.0\n\s+IP:0:0:0:0:0:0:0:0\/0:0:0:0:0:0:0:0\n/);
    assert.doesNotMatch(text, /DNS:\*|DNS:amazonaws\.com\n/);
  });

  it('the CA key is 0600 and kept across starts; one others can read is refused', async () => {
    const keyFile = path.join(dir, CA_DIR, CA_KEY_FILE);
    assert.equal((await fs.stat(keyFile)).mode & 0o777, 0o600);
    const again = await LocalCa.open(dir, [...PROXIED_HOSTS.keys()]);
    assert.equal(again.certPem, await fs.readFile(server.compatCaFile as string, 'utf8'));
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'ti-ca-'));
    try {
      await LocalCa.open(other, ['mailosaur.com']);
      await fs.chmod(path.join(other, CA_DIR, CA_KEY_FILE), 0o644);
      await assert.rejects(LocalCa.open(other, ['mailosaur.com']), (e: unknown) => e instanceof LocalCaError && /can be read by other users/.test((e as Error).message));
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });
});
