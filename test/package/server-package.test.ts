// The server as a user installs it: the tarball written by `npm run package`, installed
// offline from the file into a temp prefix (runtime dependencies only: it has none), then
// its `test-inbox` binary run for real — --version, --help, and a serve with a real SMTP
// send, an HTTP list and a fetch. And Ctrl+C as a terminal sends it: one SIGINT to the
// whole process group, also under `npx`, stops the server once, cleanly, lock removed.
// The commands for tests (code, totp) from the installed binary; the library from the
// installed package: typed for a TypeScript consumer, loadable from CJS and ESM, and the
// README's Playwright flow (sign up, wait for the code, enter it) in the real Chromium.
//
//   npm run package && npm run test:package
import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import http from 'node:http';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import nodemailer from 'nodemailer';
import { chromium, type Browser } from 'playwright-core';
import { chromiumPath } from '../../scripts/integration/workbench';
import { EXIT_USAGE, SERVER_ENV_NAMES } from '../../src/shared/contract';
import { type Running, startServer } from '../server/cliProcess';
import { TOKENS_FILE } from '../../src/shared/contract';
import { childEnv } from '../support/cli';

const execFileP = promisify(execFile);
const REPO = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; version: string };
const TARBALL = path.join(REPO, `${manifest.name}-${manifest.version}.tgz`);
/** npm's own CLI, run with this Node (npm_execpath under `npm test`, else `npm` on PATH). */
const NPM = process.env.npm_execpath && existsSync(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ['npm'];

function npm(args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  const [cmd, ...pre] = NPM;
  // A private cache: "offline from the file" must not be helped by packages cached earlier.
  return execFileP(cmd, [...pre, ...args, '--cache', path.join(cwd, '.npm-cache'), '--no-audit', '--no-fund', '--offline'], { cwd, encoding: 'utf8' });
}

/** Runs a `test-inbox serve` command line in its own process group, without inherited tokens. */
function serve(cmd: string, args: string[], cwd: string): Running {
  const env = { ...process.env };
  for (const k of SERVER_ENV_NAMES) delete env[k];
  return startServer(cmd, args, { cwd, env, detached: true });
}

describe('the server package, installed from its tarball', function () {
  this.timeout(120_000);
  let prefix: string;
  let dataDir: string;
  const live: ChildProcess[] = [];

  before(async function () {
    assert.ok(existsSync(TARBALL), `${path.basename(TARBALL)} is missing: run \`npm run package\` first`);
    prefix = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-pkg-'));
    await npm(['install', '--global', '--prefix', prefix, TARBALL], prefix);
  });

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-pkg-data-'));
  });

  afterEach(async () => {
    for (const c of live.splice(0)) {
      if (c.exitCode === null && c.signalCode === null && c.pid) {
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  after(async () => {
    if (prefix) await fs.rm(prefix, { recursive: true, force: true });
  });

  const bin = () => path.join(prefix, 'bin', 'test-inbox');

  it('installs only its own files: no dependencies, a bin, and a manifest that names Node 20.18', async () => {
    const installed = path.join(prefix, 'lib', 'node_modules', 'test-inbox');
    const files = (await fs.readdir(installed)).sort();
    assert.deepEqual(files, ['LICENSE', 'README.md', 'cli.js', 'lib.d.ts', 'lib.js', 'mcp.js', 'mimeWorker.js', 'package.json', 'types.d.ts', 'webui.css', 'webui.js']);
    const pkg = JSON.parse(await fs.readFile(path.join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(pkg.version, manifest.version);
    assert.equal(pkg.dependencies, undefined);
    assert.deepEqual(pkg.engines, { node: '>=20.18.1' });
    assert.deepEqual(pkg.exports, { '.': { types: './lib.d.ts', default: './lib.js' }, './package.json': './package.json' });
    assert.ok(existsSync(bin()), 'the bin link exists');
  });

  it('answers --version and --help', async () => {
    const version = await execFileP(bin(), ['--version'], { encoding: 'utf8' });
    assert.equal(version.stdout, `${manifest.version}\n`);
    const help = await execFileP(bin(), ['--help'], { encoding: 'utf8' });
    assert.match(help.stdout, /^Usage: test-inbox <command>/);
    assert.match(help.stdout, /\n  serve +run the local inbox server/);
    const serveHelp = await execFileP(bin(), ['serve', '--help'], { encoding: 'utf8' });
    assert.match(serveHelp.stdout, /^Usage: test-inbox serve/);
    assert.match(serveHelp.stdout, /--smtp-port/);
  });

  it('serves: a message sent over SMTP is listed and fetched over HTTP', async () => {
    const s = serve(bin(), ['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir], prefix);
    live.push(s.child);
    const ready = await s.ready;
    const [host, port] = ready.smtp.split(':');
    const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'Shop <shop@example.test>', to: 'buyer@inbox.test', subject: 'Your code', text: 'Your sign-in code is 518204.' });
    transport.close();

    const { apiToken } = JSON.parse(await fs.readFile(path.join(dataDir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    const headers = { Authorization: apiToken };
    const list = (await (await fetch(`${ready.http}/api/v2/domains/inbox.test/inboxes/buyer`, { headers })).json()) as { msgs: Array<{ id: string; subject: string }> };
    assert.equal(list.msgs.length, 1);
    assert.equal(list.msgs[0].subject, 'Your code');
    const msg = await fetch(`${ready.http}/api/v2/domains/inbox.test/inboxes/buyer/messages/${list.msgs[0].id}`, { headers });
    assert.equal(msg.status, 200);
    const body = (await msg.json()) as { subject: string; parts: Array<{ body: string }> };
    assert.equal(body.subject, 'Your code');
    assert.ok(body.parts.some((p) => p.body.includes('518204')), 'the fetched message carries the text');

    // `test-inbox mcp` of the installed package (its dist/mcp.js beside cli.js), through the MCP SDK's own client.
    const client = new Client({ name: 'package-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: bin(), args: ['mcp', '--data-dir', dataDir], env: { PATH: process.env.PATH ?? '' }, stderr: 'pipe' }));
    try {
      const r = (await client.callTool({ name: 'wait_for_code', arguments: { inbox: 'buyer@inbox.test' } })) as unknown as { structuredContent: { code: string } };
      assert.equal(r.structuredContent.code, '518204');
    } finally {
      await client.close();
    }

    process.kill(-s.child.pid!, 'SIGTERM');
    assert.deepEqual(await s.exited, { code: 0, signal: null });
  });

  /** A project with the tarball installed as a dependency, as `npm install ./test-inbox-x.y.z.tgz` leaves it. */
  async function project(): Promise<string> {
    const dir = path.join(prefix, 'consumer');
    if (!existsSync(path.join(dir, 'node_modules', 'test-inbox'))) {
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'package.json'), '{"name":"consumer","private":true}\n');
      await npm(['install', TARBALL], dir);
    }
    return dir;
  }

  function runBin(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(bin(), args, { env, encoding: 'utf8' }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }));
    });
  }

  it('runs the commands for tests: code prints only the code, exits 1 on a timeout and 64 on a usage error; totp', async () => {
    const s = serve(bin(), ['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir], prefix);
    live.push(s.child);
    const ready = await s.ready;
    const env = childEnv({ TEST_INBOX_DATA_DIR: dataDir });
    const since = String(Date.now());
    const [host, port] = ready.smtp.split(':');
    const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'shop@example.test', to: 'buyer@inbox.test', subject: 'Your code', text: 'Your sign-in code is 518204.' });
    transport.close();
    assert.deepEqual(await runBin(['code', 'buyer@inbox.test', '--since', since, '--wait', '10s'], env), { code: 0, stdout: '518204\n', stderr: '' });
    const late = await runBin(['code', 'buyer', '--since', 'now', '--wait', '300ms'], env);
    assert.equal(late.code, 1);
    assert.equal(late.stdout, '');
    assert.match(late.stderr, /no message with a one-time code arrived/);
    const usage = await runBin(['code'], env);
    assert.equal(usage.code, EXIT_USAGE);
    assert.match(usage.stderr, /missing <inbox>\nUsage: test-inbox code/);
    const totp = await runBin(['totp', 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', '--digits', '8'], env);
    assert.match(totp.stdout, /^\d{8}\n$/);
    process.kill(-s.child.pid!, 'SIGTERM');
    await s.exited;
  });

  it('exports a typed library: a TypeScript consumer type-checks against its .d.ts; CJS and ESM load it', async () => {
    const dir = await project();
    await fs.writeFile(
      path.join(dir, 'consumer.ts'),
      [
        "import { totp, waitForCode, TestInboxError, type CodeResult, type WaitOptions } from 'test-inbox';",
        "const options: WaitOptions = { since: 'now', timeout: '30s', domain: 'inbox.test' };",
        'export async function code(): Promise<string> {',
        "  const r: CodeResult = await waitForCode('joe', options);",
        '  return r.code;',
        '}',
        "export const now: string = totp('JBSWY3DPEHPK3PXP').code;",
        "export const isTimeout = (e: unknown): boolean => TestInboxError.is(e, 'timeout');",
        '// @ts-expect-error the inbox is a string: the declarations are real types, not any',
        'waitForCode(42);',
        '',
      ].join('\n'),
    );
    const tsc = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', path.join(REPO, 'node_modules', '@types')];
    await execFileP(process.execPath, [tsc, ...flags, 'consumer.ts'], { cwd: dir, encoding: 'utf8' }).catch((e: { stdout?: string }) => assert.fail(`tsc: ${e.stdout}`));
    const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
    const script = `console.log(JSON.stringify(lib.totp('${seed}', { digits: 8, at: 59000 })), typeof lib.waitForCode, typeof lib.sendSms, typeof lib.clearInbox, typeof lib.waitForLink)`;
    const cjs = await execFileP(process.execPath, ['-e', `const lib = require('test-inbox'); ${script}`], { cwd: dir, encoding: 'utf8' });
    const esm = await execFileP(process.execPath, ['--input-type=module', '-e', `import * as lib from 'test-inbox'; ${script}`], { cwd: dir, encoding: 'utf8' });
    for (const out of [cjs.stdout, esm.stdout]) assert.equal(out, '{"code":"94287082","secondsLeft":1} function function function function\n');
  });

  describe('the README Playwright flow, in the real Chromium', () => {
    let browser: Browser | undefined;
    let app: http.Server | undefined;
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => (app ? app.close(resolve) : resolve(undefined)));
    });

    it('signs up on a page whose server sends real SMTP mail, waits for the code with the installed library, enters it', async () => {
      const s = serve(bin(), ['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir], prefix);
      live.push(s.child);
      const ready = await s.ready;
      const [smtpHost, smtpPort] = ready.smtp.split(':');
      const mailer = nodemailer.createTransport({ host: smtpHost, port: Number(smtpPort), secure: false, ignoreTLS: true });
      // A tiny sign-up app: it mails a fresh 6-digit code to the address and checks it.
      const issued = new Map<string, string>();
      const page = (body: string): string => `<!doctype html><html><head><title>Acme</title></head><body>${body}</body></html>`;
      app = http.createServer((req, res) => {
        let data = '';
        req.on('data', (c: Buffer) => (data += c.toString('utf8')));
        req.on('end', () => {
          const form = new URLSearchParams(data);
          const send = (html: string): void => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(html));
          if (req.method === 'POST' && req.url === '/signup') {
            const email = form.get('email') ?? '';
            const code = String(100_000 + Math.floor(Math.random() * 900_000));
            issued.set(email, code);
            mailer.sendMail({ from: 'Acme <no-reply@acme.test>', to: email, subject: 'Confirm your Acme account', text: `Your Acme verification code is ${code}.` }).then(
              () => send(`<form method="post" action="/verify"><input type="hidden" name="email" value="${email}"><label>Code <input id="code" name="code"></label><button>Verify</button></form>`),
              (e: Error) => void res.writeHead(500).end(e.message),
            );
          } else if (req.method === 'POST' && req.url === '/verify') {
            send(issued.get(form.get('email') ?? '') === form.get('code') ? '<h1>Welcome to Acme</h1>' : '<h1>Wrong code</h1>');
          } else {
            send('<form method="post" action="/signup"><label>Email <input id="email" name="email"></label><button>Sign up</button></form>');
          }
        });
      });
      await new Promise<void>((resolve) => app!.listen(0, '127.0.0.1', resolve));
      const appUrl = `http://127.0.0.1:${(app.address() as net.AddressInfo).port}`;
      const email = `new-user@inbox.test`;
      // A previous run's mail to the same address: `since` must keep the test from reading it.
      await mailer.sendMail({ from: 'no-reply@acme.test', to: email, subject: 'Confirm your Acme account', text: 'Your Acme verification code is 999999.' });

      // The installed library, as the README's example imports it.
      const { waitForCode } = createRequire(path.join(await project(), 'package.json'))('test-inbox') as typeof import('../../src/testing');
      browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      const tab = await browser.newPage();
      await tab.goto(appUrl);
      const since = Date.now();
      await tab.fill('#email', email);
      await tab.click('text=Sign up');
      const { code } = await waitForCode(email, { since, dataDir, timeout: '30s' });
      assert.equal(code, issued.get(email));
      await tab.fill('#code', code);
      await tab.click('text=Verify');
      assert.equal(await tab.textContent('h1'), 'Welcome to Acme');
      mailer.close();
      process.kill(-s.child.pid!, 'SIGTERM');
      await s.exited;
    });
  });

  for (const how of ['the installed binary', 'a wrapper forwarding a copy of the signal', 'npx'] as const) {
    it(`stops once and removes its lock on one SIGINT to the process group (${how})`, async () => {
      let s: Running;
      const args = ['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir];
      if (how === 'npx') {
        // A project with the tarball installed locally, as `npm install ./test-inbox-x.y.z.tgz` leaves it.
        const project = path.join(prefix, 'project');
        await fs.mkdir(project, { recursive: true });
        await fs.writeFile(path.join(project, 'package.json'), '{"name":"app","private":true}\n');
        await npm(['install', TARBALL], project);
        const [cmd, ...pre] = NPM;
        s = serve(cmd, [...pre, 'exec', '--offline', '--', 'test-inbox', ...args], project);
      } else {
        s = serve(bin(), args, prefix);
      }
      live.push(s.child);
      const ready = await s.ready;
      // An SMTP client still connected: the stop waits for it a moment, as in real use.
      const [host, port] = ready.smtp.split(':');
      const held = net.connect(Number(port), host);
      held.on('error', () => undefined);
      await new Promise((resolve) => held.once('data', resolve));
      assert.ok(existsSync(path.join(dataDir, '.lock')), 'the running server holds the lock');
      // What a terminal's Ctrl+C does: SIGINT to every process of the foreground group.
      process.kill(-s.child.pid!, 'SIGINT');
      // npx and other wrappers forward the SIGINT they got to their child: a second copy
      // arrives milliseconds after the first.
      if (how === 'a wrapper forwarding a copy of the signal') {
        await new Promise((resolve) => setTimeout(resolve, 50));
        try {
          process.kill(s.child.pid!, 'SIGINT');
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
        }
      }
      const exit = await s.exited;
      held.destroy();
      // The server exits 0; npm exec then ends itself by the signal it got, as npm does, so
      // that the shell sees the job as interrupted.
      const expected = how === 'npx' ? [{ code: 0, signal: null }, { code: null, signal: 'SIGINT' }, { code: 130, signal: null }] : [{ code: 0, signal: null }];
      assert.ok(expected.some((e) => e.code === exit.code && e.signal === exit.signal), `exit ${JSON.stringify(exit)}; stderr:\n${s.stderr()}`);
      assert.equal(s.stderr().match(/SIGINT: stopping/g)?.length, 1, s.stderr());
      assert.doesNotMatch(s.stderr(), /again/);
      assert.ok(!existsSync(path.join(dataDir, '.lock')), 'the lock is removed');
    });
  }
});
