// One local inbox per user: `test-inbox serve` with its defaults and the
// extension's local server with its defaults use the same data folder, so whichever starts
// first serves the mail and the other attaches to it by the identity proof. The old default
// folder (the extension's storage) is moved there, not lost. A data folder of a release that
// this one cannot read is refused, naming the release that wrote it. Real processes: a `serve`
// child from the source and the extension's LocalServer.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { defaultLocalDataDir } from '../../src/extension/connection/dataFolder';
import { LocalServer } from '../../src/extension/connection/localServer';
import { DEFAULT_DOMAIN, defaultDataDir, EXIT_DATA_DIR_IN_USE, EXIT_FAILURE } from '../../src/shared/contract';
import { startInboxServer } from '../../src/server/server';
import { LAYOUT_FILE, WRITER_FILE } from '../../src/server/store/maildir/layout';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { VERSION } from '../../src/server/version';
import { connect } from '../../src/testing/connection';
import { waitForCodeOn } from '../../src/testing/wait';
import { startCli } from '../server/cliProcess';
import { memoryLog } from '../support/memory';
import { closedPort } from '../support/ports';
import { cliEntry } from '../support/cli';

const { cliPath: CLI, execArgv: EXEC_ARGV } = cliEntry();

async function sendCode(smtpPort: number, to: string, code: string): Promise<void> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
  try {
    await t.sendMail({ from: 'shop@example.test', to, subject: 'Code', text: `Your code is ${code}` });
  } finally {
    t.close();
  }
}

describe('one local inbox per user: serve and the extension share the default data folder', function () {
  this.timeout(90_000);
  let home: string;
  let env: NodeJS.ProcessEnv;
  let httpPort: number;
  let smtpPort: number;
  const stops: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-oneinbox-'));
    env = { XDG_DATA_HOME: path.join(home, 'xdg') };
    httpPort = await closedPort();
    smtpPort = await closedPort();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    await fs.rm(home, { recursive: true, force: true });
  });

  /** The extension's local server as connection/connection.ts builds it, on the default data folder. */
  const extensionServer = (): LocalServer => {
    const server = new LocalServer({ cliPath: CLI, execArgv: EXEC_ARGV, httpPort, smtpPort, dataDir: defaultDataDir(env), domain: DEFAULT_DOMAIN, log: memoryLog().log });
    stops.push(() => server.stop());
    return server;
  };
  /** `test-inbox serve` in a terminal with no --data-dir (the env names the user's XDG folder). */
  const terminalServe = () => {
    const r = startCli(['serve', '--http-port', String(httpPort), '--smtp-port', String(smtpPort)], { ...env, TEST_INBOX_DATA_DIR: '' });
    stops.push(async () => {
      if (r.child.exitCode === null) await r.stop();
    });
    return r;
  };

  it('serve first: the extension attaches to it by the proof, and both see the same mail', async () => {
    const serve = terminalServe();
    await serve.ready;
    const running = await extensionServer().start();
    assert.equal(running.mode, 'attached');
    assert.equal(running.proven.pid, serve.child.pid, 'the proof names the terminal server');
    await sendCode(smtpPort, 'joe@inbox.test', '246810');
    // The test library with its defaults reads it from the same folder's server and tokens.
    const conn = await connect({}, env);
    try {
      assert.equal(conn.baseUrl, running.http);
      assert.equal((await waitForCodeOn(conn, 'joe', { timeout: '10s' })).code, '246810');
    } finally {
      await conn.close();
    }
  });

  it('extension first: serve in a terminal names the running server, and the library reads the extension server\'s mail', async () => {
    const running = await extensionServer().start();
    assert.equal(running.mode, 'started');
    const serve = terminalServe();
    const { code } = await serve.exited;
    assert.equal(code, EXIT_DATA_DIR_IN_USE, serve.stderr());
    assert.match(serve.stderr(), new RegExp(`It serves ${running.http.replace(/[.]/g, '\\.')} \\(SMTP 127\\.0\\.0\\.1:${smtpPort}\\): the test commands, the library and the editor attach to it`));
    await sendCode(smtpPort, 'ann@inbox.test', '135790');
    const conn = await connect({}, env);
    try {
      assert.equal(conn.baseUrl, running.http, 'found through the shared folder\'s server.json');
      assert.equal((await waitForCodeOn(conn, 'ann', { timeout: '10s' })).code, '135790');
    } finally {
      await conn.close();
    }
  });

  it('moves the mail of the old default folder (the extension\'s storage) into the shared one once, and loses none', async () => {
    const legacy = path.join(home, 'globalStorage', 'server');
    const shared = defaultDataDir(env);
    await fs.mkdir(legacy, { recursive: true, mode: 0o700 });
    const tokens = await loadOrCreateTokens(legacy);
    const old = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: legacy, ...tokens, defaultDomain: DEFAULT_DOMAIN });
    await sendCode(old.smtpPort, 'kept@inbox.test', '112233');
    await old.close();

    const { log, lines } = memoryLog();
    assert.equal(await defaultLocalDataDir(legacy, shared, log), shared);
    assert.ok(lines.some((l) => /Moved the local server's mail from .* to /.test(l)), lines.join('\n'));
    await assert.rejects(fs.stat(legacy), 'the old folder is gone (moved)');
    // The moved folder is a working data folder: the old mail is there, with its tokens.
    const reopened = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: shared, ...(await loadOrCreateTokens(shared)), defaultDomain: DEFAULT_DOMAIN });
    stops.push(() => reopened.close());
    const conn = await connect({ server: reopened.httpUrl, token: tokens.apiToken }, {});
    try {
      assert.equal((await waitForCodeOn(conn, 'kept', { timeout: 0 })).code, '112233');
    } finally {
      await conn.close();
    }
    // A second call finds nothing to move; a shared folder with mail of its own is never overwritten.
    assert.equal(await defaultLocalDataDir(legacy, shared, log), shared);
    await fs.mkdir(legacy, { recursive: true });
    await fs.writeFile(path.join(legacy, 'marker'), 'old');
    assert.equal(await defaultLocalDataDir(legacy, shared, log), shared);
    assert.equal(await fs.readFile(path.join(legacy, 'marker'), 'utf8'), 'old', 'left in place, named in the log');
    assert.ok(lines.some((l) => /Mail of earlier versions stays in /.test(l)));
  });

  it('refuses a data folder of a layout it cannot read, naming the release that wrote it, and changes nothing', async () => {
    const dir = defaultDataDir(env);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(dir, LAYOUT_FILE), '9\n', { mode: 0o600 });
    await fs.writeFile(path.join(dir, WRITER_FILE), '7.1.0\n', { mode: 0o600 });
    const before = (await fs.readdir(dir)).sort();
    const serve = terminalServe();
    const { code } = await serve.exited;
    assert.equal(code, EXIT_FAILURE);
    assert.match(serve.stderr(), new RegExp(`has layout 9, written by Test Inbox 7\\.1\\.0; this is Test Inbox ${VERSION.replace(/\./g, '\\.')} \\(layout 2\\)`));
    assert.deepEqual((await fs.readdir(dir)).sort(), before, 'nothing written');
    assert.equal(await fs.readFile(path.join(dir, WRITER_FILE), 'utf8'), '7.1.0\n');
    // A folder this release opens records it.
    const own = path.join(home, 'own');
    const s = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: own, ...(await loadOrCreateTokens(own)), defaultDomain: DEFAULT_DOMAIN });
    await s.close();
    assert.equal(await fs.readFile(path.join(own, WRITER_FILE), 'utf8'), `${VERSION}\n`);
  });
});
