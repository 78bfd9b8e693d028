// SMTP as apps configure it: STARTTLS, implicit TLS and required credentials, with real TLS
// handshakes against the real server on port 0 — nodemailer (requireTLS, secure: true, auth)
// and Python's smtplib (starttls(), login) as the clients.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import nodemailer from 'nodemailer';
import { SMTP_TLS_CERT_FILE, SMTP_TLS_DIR, SMTP_TLS_KEY_FILE } from '../../src/shared/contract';
import { startInboxServer, type InboxServer, type InboxServerOptions } from '../../src/server/server';
import { SmtpTlsError } from '../../src/server/tls/material';
import { createSelfSigned } from '../../src/server/tls/selfSigned';
import { startCli } from './cliProcess';

const all = { limit: 1000, skip: 0, sort: 'descending' as const };
const HOST = '127.0.0.1';

/** Runs a Python script; resolves its exit code and output. */
function python(script: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** smtplib with STARTTLS, verifying the server against `cafile`; prints OK, or the SMTP error code. */
const PY_STARTTLS = `
import smtplib, ssl, sys
port, cafile, user, password, rcpt = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.create_default_context(cafile=cafile)
with smtplib.SMTP("127.0.0.1", port, timeout=20) as s:
    s.ehlo()
    if not s.has_extn("starttls"):
        print("NO-STARTTLS"); sys.exit(3)
    s.starttls(context=ctx)
    s.ehlo()
    if user:
        try:
            s.login(user, password)
        except smtplib.SMTPAuthenticationError as e:
            print("AUTH", e.smtp_code); sys.exit(4)
    s.sendmail("py@client.test", [rcpt], "Subject: from python\\r\\n\\r\\nsent over STARTTLS\\r\\n")
    print("OK", s.sock.version())
`;

describe('SMTP TLS and required login (real server, real handshakes)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: InboxServer | undefined;

  async function start(extra: Partial<InboxServerOptions> = {}): Promise<InboxServer> {
    server = await startInboxServer({ host: HOST, httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: 'api-token-1', webhookToken: 'wh-token-1', defaultDomain: 'inbox.test', ...extra });
    return server;
  }

  async function stop(): Promise<void> {
    await server?.close();
    server = undefined;
  }

  const subjects = async (inbox: string): Promise<string[]> => (await server!.store.list('inbox.test', inbox, all)).msgs.map((m) => m.subject);
  const certFile = (): string => path.join(dir, SMTP_TLS_DIR, SMTP_TLS_CERT_FILE);

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'smtp-tls-'));
  });

  afterEach(async () => {
    await stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('offers no STARTTLS by default, so a requireTLS client is told, and plain senders still deliver', async () => {
    const s = await start();
    const strict = nodemailer.createTransport({ host: HOST, port: s.smtpPort, requireTLS: true });
    await assert.rejects(strict.sendMail({ from: 'a@app.test', to: 'joe@inbox.test', subject: 'x', text: 'x' }), /STARTTLS/i);
    const plain = nodemailer.createTransport({ host: HOST, port: s.smtpPort });
    await plain.sendMail({ from: 'a@app.test', to: 'joe@inbox.test', subject: 'plain', text: 'x' });
    assert.deepEqual((await subjects('joe')), ['plain']);
    await assert.rejects(fs.stat(certFile()), /ENOENT/, 'no certificate is generated unless TLS is asked for');
  });

  it('STARTTLS with a generated self-signed certificate: nodemailer requireTLS verifies it when given it, refuses it otherwise', async () => {
    const s = await start({ smtpTls: { starttls: true } });
    assert.equal(s.smtpTlsCertFile, certFile());
    const certPem = await fs.readFile(certFile(), 'utf8');
    const cert = new X509Certificate(certPem);
    assert.ok(cert.verify(cert.publicKey), 'self-signed');
    assert.equal(cert.checkHost('localhost'), 'localhost');
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal((await fs.stat(path.join(dir, SMTP_TLS_DIR, SMTP_TLS_KEY_FILE))).mode & 0o777, 0o600, 'the private key is 0600');

    const verified = nodemailer.createTransport({ host: HOST, port: s.smtpPort, requireTLS: true, tls: { ca: certPem } });
    const info = await verified.sendMail({ from: 'a@app.test', to: 'joe@inbox.test', subject: 'over starttls', text: 'x' });
    assert.match(info.response, /^250 /);
    // Why it is off by default: a client that verifies (nodemailer's default) refuses a certificate it was not given.
    const defaults = nodemailer.createTransport({ host: HOST, port: s.smtpPort, requireTLS: true });
    await assert.rejects(defaults.sendMail({ from: 'a@app.test', to: 'joe@inbox.test', subject: 'refused', text: 'x' }), /self[- ]signed/i);
    assert.deepEqual((await subjects('joe')), ['over starttls']);
  });

  it("Python's smtplib starttls() verifies the generated certificate and delivers", async () => {
    const s = await start({ smtpTls: { starttls: true } });
    const r = await python(PY_STARTTLS, [String(s.smtpPort), certFile(), '', '', 'py@inbox.test']);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /^OK TLSv1\.[23]/);
    assert.deepEqual((await subjects('py')), ['from python']);
  });

  it('keeps the generated certificate across restarts and replaces one that is damaged', async () => {
    await start({ smtpTls: { starttls: true } });
    const first = await fs.readFile(certFile(), 'utf8');
    await stop();
    await start({ smtpTls: { starttls: true } });
    assert.equal(await fs.readFile(certFile(), 'utf8'), first, 'the same certificate: a client that trusts it keeps working');
    await stop();
    await fs.writeFile(certFile(), 'not a certificate');
    const s = await start({ smtpTls: { starttls: true } });
    const renewed = await fs.readFile(certFile(), 'utf8');
    assert.notEqual(renewed, first);
    const sent = await nodemailer.createTransport({ host: HOST, port: s.smtpPort, requireTLS: true, tls: { ca: renewed } }).sendMail({ from: 'a@app.test', to: 'joe@inbox.test', subject: 'renewed', text: 'x' });
    assert.match(sent.response, /^250 /);
  });

  it('implicit TLS on its own port: nodemailer secure: true delivers; the plain port stays plain', async () => {
    const s = await start({ smtpTls: { starttls: false, implicitPort: 0 } });
    assert.ok(s.smtpsPort !== undefined && s.smtpsPort !== s.smtpPort);
    const certPem = await fs.readFile(certFile(), 'utf8');
    const secure = nodemailer.createTransport({ host: HOST, port: s.smtpsPort, secure: true, tls: { ca: certPem } });
    await secure.sendMail({ from: 'a@app.test', to: 'ann@inbox.test', subject: 'implicit', text: 'x' });
    assert.deepEqual((await subjects('ann')), ['implicit']);
    const strict = nodemailer.createTransport({ host: HOST, port: s.smtpPort, requireTLS: true, tls: { ca: certPem } });
    await assert.rejects(strict.sendMail({ from: 'a@app.test', to: 'ann@inbox.test', subject: 'x', text: 'x' }), /STARTTLS/i);
  });

  it('required credentials: the right login delivers, a wrong one gets 535, none gets 530 (nodemailer and smtplib)', async () => {
    const s = await start({ smtpTls: { starttls: true }, smtpAuth: { username: 'app', password: 'p:ss word' } });
    const ca = await fs.readFile(certFile(), 'utf8');
    const send = (auth?: { user: string; pass: string }, authMethod?: string) =>
      nodemailer
        .createTransport({ host: HOST, port: s.smtpPort, requireTLS: true, tls: { ca }, ...(auth ? { auth } : {}), ...(authMethod ? { authMethod } : {}) })
        .sendMail({ from: 'a@app.test', to: 'kim@inbox.test', subject: auth ? `as ${auth.user}${authMethod ? ` by ${authMethod}` : ''}` : 'anonymous', text: 'x' });
    await send({ user: 'app', pass: 'p:ss word' });
    // CRAM-MD5 proves the password without sending it: checked through its challenge.
    await send({ user: 'app', pass: 'p:ss word' }, 'CRAM-MD5');
    await assert.rejects(send({ user: 'app', pass: 'wrong' }, 'CRAM-MD5'), (e: { responseCode?: number }) => e.responseCode === 535);
    await send({ user: 'app', pass: 'p:ss word' }, 'LOGIN');
    await assert.rejects(send({ user: 'app', pass: 'wrong' }), (e: { responseCode?: number }) => e.responseCode === 535);
    await assert.rejects(send({ user: 'other', pass: 'p:ss word' }), (e: { responseCode?: number }) => e.responseCode === 535);
    await assert.rejects(send(), (e: { responseCode?: number }) => e.responseCode === 530);
    assert.deepEqual((await subjects('kim')).sort(), ['as app', 'as app by CRAM-MD5', 'as app by LOGIN']);

    const wrong = await python(PY_STARTTLS, [String(s.smtpPort), certFile(), 'app', 'nope', 'kim@inbox.test']);
    assert.equal(wrong.code, 4, wrong.out);
    assert.match(wrong.out, /AUTH 535/);
    const right = await python(PY_STARTTLS, [String(s.smtpPort), certFile(), 'app', 'p:ss word', 'kim@inbox.test']);
    assert.equal(right.code, 0, right.out);
    assert.equal((await subjects('kim')).length, 4);
  });

  it('accepts any credentials by default', async () => {
    const s = await start({ smtpTls: { starttls: true } });
    const ca = await fs.readFile(certFile(), 'utf8');
    await nodemailer.createTransport({ host: HOST, port: s.smtpPort, requireTLS: true, tls: { ca }, auth: { user: 'whoever', pass: 'whatever' } }).sendMail({ from: 'a@app.test', to: 'lee@inbox.test', subject: 'any login', text: 'x' });
    assert.deepEqual((await subjects('lee')), ['any login']);
  });

  it("serves the user's own certificate and key, and refuses a key that is not the certificate's before listening", async () => {
    const own = await createSelfSigned({ commonName: 'my cert', altNames: ['localhost', '127.0.0.1'], notAfter: new Date(Date.now() + 86_400_000) });
    const other = await createSelfSigned({ commonName: 'other', altNames: ['localhost'], notAfter: new Date(Date.now() + 86_400_000) });
    const cert = path.join(dir, 'my-cert.pem');
    const key = path.join(dir, 'my-key.pem');
    const otherKey = path.join(dir, 'other-key.pem');
    await fs.writeFile(cert, own.cert);
    await fs.writeFile(key, own.key, { mode: 0o600 });
    await fs.writeFile(otherKey, other.key, { mode: 0o600 });

    const s = await start({ smtpTls: { starttls: true, implicitPort: 0, certFile: cert, keyFile: key } });
    assert.equal(s.smtpTlsCertFile, cert);
    const presented = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: HOST, port: s.smtpsPort!, ca: own.cert, servername: 'localhost' }, () => {
        resolve(socket.getPeerX509Certificate()!.fingerprint256);
        socket.destroy();
      });
      socket.once('error', reject);
    });
    assert.equal(presented, new X509Certificate(own.cert).fingerprint256);
    await assert.rejects(fs.stat(certFile()), /ENOENT/, 'nothing is generated when the user gives a certificate');
    await stop();

    await assert.rejects(start({ smtpTls: { starttls: true, certFile: cert, keyFile: otherKey } }), (e: unknown) => SmtpTlsError.is(e, 'tls_files') && /does not belong to the certificate/.test(e.message));
    await assert.rejects(start({ smtpTls: { starttls: true, certFile: path.join(dir, 'missing.pem'), keyFile: key } }), (e: unknown) => SmtpTlsError.is(e, 'tls_files') && /no such file/.test(e.message));
    // The failed starts released the data folder: a normal start works.
    await start();
  });

  describe('test-inbox serve flags', () => {
    it('--smtp-tls --smtps-port 0 prints the implicit-TLS port in the ready line and generates the certificate', async () => {
      const cli = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir, '--smtp-tls', '--smtps-port', '0']);
      try {
        const ready = (await cli.ready) as { http: string; smtp: string; smtps?: string };
        assert.match(ready.smtps ?? '', /^127\.0\.0\.1:\d+$/);
        assert.notEqual(ready.smtps, ready.smtp);
        const ca = await fs.readFile(certFile(), 'utf8');
        const port = Number(ready.smtps!.split(':')[1]);
        const sent = await nodemailer.createTransport({ host: HOST, port, secure: true, tls: { ca } }).sendMail({ from: 'a@app.test', to: 'cli@inbox.test', subject: 'cli', text: 'x' });
        assert.match(sent.response, /^250 /);
        assert.match(cli.stderr(), /STARTTLS/);
      } finally {
        await cli.stop();
      }
    });

    it('refuses a certificate without its key, and a malformed login, as usage errors without echoing the password', async () => {
      const noKey = startCli(['serve', '--data-dir', dir, '--smtp-tls-cert', path.join(dir, 'c.pem')]);
      assert.equal((await noKey.exited).code, 64);
      assert.match(noKey.stderr(), /--smtp-tls-cert needs --smtp-tls-key/);
      const badAuth = startCli(['serve', '--data-dir', dir], { TEST_INBOX_SMTP_AUTH: 'secretnocolon' });
      assert.equal((await badAuth.exited).code, 64);
      assert.match(badAuth.stderr(), /expected user:password/);
      assert.ok(!badAuth.stderr().includes('secretnocolon'), 'the value is not echoed');
    });
  });
});
