// The server as a user's machine runs it, on whatever platform this runs on: `npm run test:node`
// runs it on Linux, and `npm run test:windows` runs the same file with Windows' own Node under
// Wine (scripts/windows/run.ts). It starts the built server the way the extension does (forked,
// with an IPC channel), in a data folder under a profile path with a space and non-ASCII letters,
// deep enough that message paths pass Windows' 260-character limit; takes SMTP; reads a code and
// a link through the CLI; stops it uncleanly (SIGKILL, TerminateProcess on Windows) right after an
// acknowledgement; deletes; stops it cleanly through the channel; and checks what each start finds.
import assert from 'node:assert/strict';
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { DATA_DIR_ENV, LOCK_FILE, parseReadyLine, type ReadyLine, SERVER_FILE, serveArgs, stopServerProcess, TOKENS_FILE, withoutTokensEnv } from '../../src/shared/contract';

const REPO = path.resolve(__dirname, '..', '..');
/** The built server, as the extension and the npm package run it (the test run builds first). */
const CLI = process.env.TEST_INBOX_CLI_BUNDLE ?? path.join(REPO, 'dist', 'cli.js');
/** Windows' MAX_PATH: every message file of this test lies past it. */
const MAX_PATH = 260;

interface Started {
  child: ChildProcess;
  ready: ReadyLine;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(dataDir: string): Promise<Started> {
  const child = fork(CLI, serveArgs({ httpPort: 0, smtpPort: 0, dataDir }), { env: withoutTokensEnv(process.env), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const ready = parseReadyLine(out.slice(0, nl));
      if (ready) resolve({ child, ready, stderr: () => err, exited });
      else reject(new Error(`not a ready line: ${out.slice(0, nl)}`));
    });
    void exited.then(({ code }) => reject(new Error(`serve exited with ${code} before it was ready:\n${err}`)));
  });
}

/** A CLI command of the built server (`code`, `link`), reading the data folder as a user's script does. */
function cli(args: string[], dataDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...withoutTokensEnv(process.env), [DATA_DIR_ENV]: dataDir } }, (e, stdout, stderr) => {
      if (e) reject(new Error(`test-inbox ${args.join(' ')} failed: ${e.message}\n${stderr}`));
      else resolve(stdout.trim());
    });
  });
}

async function subjects(s: Started, apiToken: string, inbox: string): Promise<Array<{ id: string; subject: string }>> {
  const res = await fetch(`${s.ready.http}/api/v2/domains/inbox.test/inboxes/${inbox}?limit=50&sort=ascending`, { headers: { authorization: apiToken } });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { msgs: Array<{ id: string; subject: string }> }).msgs.map((m) => ({ id: m.id, subject: m.subject }));
}

describe(`the server on ${process.platform}: clean and unclean stops`, function () {
  // Under Wine a process start costs a second or two, and this test starts five.
  this.timeout(180_000);
  let root: string;

  before(async () => {
    await fs.access(CLI).catch(() => assert.fail(`${CLI} is missing: run npm run build first`));
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'ti José Núñez '));
  });
  after(async () => {
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  it('starts, takes SMTP, answers code and link reads, loses nothing acknowledged to an unclean stop, and keeps a delete across a clean stop', async () => {
    // Deep enough that mail/<domain>/<inbox>/new/<id>.eml is past MAX_PATH.
    const deep = Array.from({ length: 6 }, (_, i) => `folder ${i} with spaces and ünïcödé`);
    const dataDir = path.join(root, 'Profile Ñ', ...deep, 'data');
    assert.ok(dataDir.length + 80 > MAX_PATH, `the data folder is ${dataDir.length} characters`);

    let s = await start(dataDir);
    const { apiToken } = JSON.parse(await fs.readFile(path.join(dataDir, TOKENS_FILE), 'utf8')) as { apiToken: string };
    const send = async (subject: string, text: string): Promise<void> => {
      const transport = nodemailer.createTransport({ host: s.ready.smtp.host, port: s.ready.smtp.port, secure: false, ignoreTLS: true });
      const info = await transport.sendMail({ from: 'app@example.com', to: 'joe@inbox.test', subject, text });
      transport.close();
      assert.match(info.response, /^250 /);
    };
    await send('Your sign-in code', 'Your code is 482913. It expires in 10 minutes.');
    assert.equal(await cli(['code', 'joe@inbox.test', '--wait', '10s'], dataDir), '482913');
    await send('Confirm your address', 'Confirm: https://app.example.com/verify?token=abc123 (valid for a day)');
    assert.equal(await cli(['link', 'joe@inbox.test', '--wait', '10s'], dataDir), 'https://app.example.com/verify?token=abc123');
    const files = await listFiles(path.join(dataDir, 'mail'));
    assert.ok(files.some((f) => f.length > MAX_PATH), `a message file past ${MAX_PATH} characters: ${files.map((f) => f.length).join(', ')}`);

    // Acknowledged, then the process is gone at once: TerminateProcess on Windows, SIGKILL here.
    await send('Acknowledged just before the crash', 'Your code is 771204.');
    s.child.kill('SIGKILL');
    await s.exited;
    assert.ok(existsSync(path.join(dataDir, LOCK_FILE)), 'an unclean stop leaves its lock behind');

    s = await start(dataDir);
    const afterCrash = await subjects(s, apiToken, 'joe');
    assert.deepEqual(afterCrash.map((m) => m.subject), ['Your sign-in code', 'Confirm your address', 'Acknowledged just before the crash']);
    assert.equal(await cli(['code', 'joe@inbox.test', '--wait', '10s'], dataDir), '771204');

    const del = await fetch(`${s.ready.http}/api/v2/domains/inbox.test/inboxes/joe/messages/${afterCrash[1].id}`, { method: 'DELETE', headers: { authorization: apiToken } });
    assert.equal(del.status, 200, await del.text());

    // The clean stop every starter uses: the IPC channel closes, the server closes its store and exits 0.
    assert.equal(await stopServerProcess(s.child), 'clean');
    assert.deepEqual(await s.exited, { code: 0, signal: null });
    assert.equal(existsSync(path.join(dataDir, LOCK_FILE)), false, 'a clean stop releases the lock');
    assert.equal(existsSync(path.join(dataDir, SERVER_FILE)), false, 'a clean stop removes the server file');

    s = await start(dataDir);
    assert.deepEqual((await subjects(s, apiToken, 'joe')).map((m) => m.subject), ['Your sign-in code', 'Acknowledged just before the crash']);
    // Deleted after an unclean stop too: the delete was durable when it was answered.
    const del2 = await fetch(`${s.ready.http}/api/v2/domains/inbox.test/inboxes/joe/messages/${afterCrash[0].id}`, { method: 'DELETE', headers: { authorization: apiToken } });
    assert.equal(del2.status, 200, await del2.text());
    s.child.kill('SIGKILL');
    await s.exited;
    s = await start(dataDir);
    assert.deepEqual((await subjects(s, apiToken, 'joe')).map((m) => m.subject), ['Acknowledged just before the crash']);
    assert.equal(await stopServerProcess(s.child), 'clean');
    assert.equal((await s.exited).code, 0, s.stderr());
  });
});

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const d of await fs.readdir(dir, { withFileTypes: true, recursive: true })) if (d.isFile()) out.push(path.join(d.parentPath ?? d.path, d.name));
  return out;
}
