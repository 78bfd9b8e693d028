// The server as a user installs it: the tarball written by `npm run package`, installed
// offline from the file into a temp prefix (runtime dependencies only: it has none), then
// its `test-inbox` binary run for real — --version, --help, and a serve with a real SMTP
// send, an HTTP list and a fetch. And Ctrl+C as a terminal sends it: one SIGINT to the
// whole process group, also under `npx`, stops the server once, cleanly, lock removed.
//
//   npm run package && npm run test:package
import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { SERVER_ENV_NAMES } from '../../src/server/contract';
import { type Running, startServer } from '../server/cliProcess';
import { TOKENS_FILE } from '../../src/server/contract';

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
    assert.deepEqual(files, ['LICENSE', 'README.md', 'cli.js', 'package.json']);
    const pkg = JSON.parse(await fs.readFile(path.join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(pkg.version, manifest.version);
    assert.equal(pkg.dependencies, undefined);
    assert.deepEqual(pkg.engines, { node: '>=20.18.1' });
    assert.ok(existsSync(bin()), 'the bin link exists');
  });

  it('answers --version and --help', async () => {
    const version = await execFileP(bin(), ['--version'], { encoding: 'utf8' });
    assert.equal(version.stdout, `${manifest.version}\n`);
    const help = await execFileP(bin(), ['--help'], { encoding: 'utf8' });
    assert.match(help.stdout, /^Usage: test-inbox serve/);
    assert.match(help.stdout, /--smtp-port/);
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

    process.kill(-s.child.pid!, 'SIGTERM');
    assert.deepEqual(await s.exited, { code: 0, signal: null });
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
