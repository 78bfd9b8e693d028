// A data folder or tokens.json that another user owns, or that group or others can write, is
// refused with a message naming the path, its owner and its mode, as ssh refuses such a key
// file. Real folders chown'ed to `nobody` (the tests run as root, which
// may chown; elsewhere they are skipped), a real `serve` process, and the test library.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TOKENS_FILE } from '../../src/shared/contract';
import { LOCK_FILE } from '../../src/server/store/maildir/lock';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens, TokensError } from '../../src/server/tokens';
import { connect } from '../../src/testing/connection';
import { TestInboxError } from '../../src/testing/types';
import { startCli } from './cliProcess';

/** nobody's uid on Debian. */
const NOBODY = 65534;
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe('data folder and tokens.json of another user, or writable by others (serve, library)', function () {
  this.timeout(60_000);
  let parent: string;
  let dataDir: string;

  before(function () {
    if (!asRoot) this.skip();
  });
  beforeEach(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-owner-'));
    dataDir = path.join(parent, 'data');
    await fs.mkdir(dataDir, { mode: 0o700 });
  });
  afterEach(async () => {
    await fs.rm(parent, { recursive: true, force: true });
  });

  /** Runs `serve` on the data dir to its end; resolves its exit code and stderr. */
  async function serve(): Promise<{ code: number | null; stderr: string }> {
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir]);
    const exit = await Promise.race([r.exited, r.ready.then(() => 'started' as const, () => 'failed' as const)]);
    if (exit === 'started') {
      await r.stop();
      assert.fail(`serve started on a data folder it should refuse:\n${r.stderr()}`);
    }
    const { code } = await r.exited;
    return { code, stderr: r.stderr() };
  }

  it('refuses a data folder that belongs to another user, naming it, its owner and its mode, and writes nothing into it', async () => {
    await fs.chown(dataDir, NOBODY, NOBODY);
    const r = await serve();
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^test-inbox: ${dataDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} belongs to nobody \\(uid ${NOBODY}\\), not to you \\(root \\(uid 0\\)\\), mode 0700; .*chown`, 'm'));
    assert.deepEqual(await fs.readdir(dataDir), [], 'no lock, no tokens, no mail written');
  });

  it('refuses a data folder that group or others can write', async () => {
    await fs.chmod(dataDir, 0o777);
    const r = await serve();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /data can be written by group and others \(owner root \(uid 0\), mode 0777\); .*chmod go-w/);
    assert.deepEqual(await fs.readdir(dataDir), []);
    assert.equal((await fs.stat(dataDir)).mode & 0o777, 0o777, 'not silently tightened');
  });

  it('refuses a tokens.json that belongs to another user or that others can write, and leaves it as it was', async () => {
    const file = path.join(dataDir, TOKENS_FILE);
    const planted = JSON.stringify({ apiToken: 'planted-api-token', webhookToken: 'planted-webhook-token' });
    await fs.writeFile(file, planted, { mode: 0o600 });
    await fs.chown(file, NOBODY, NOBODY);
    let r = await serve();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /tokens\.json belongs to nobody \(uid 65534\), not to you \(root \(uid 0\)\), mode 0600/);
    await fs.chown(file, 0, 0);
    await fs.chmod(file, 0o622);
    r = await serve();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /tokens\.json can be written by group and others \(owner root \(uid 0\), mode 0622\)/);
    assert.equal(await fs.readFile(file, 'utf8'), planted);
    assert.deepEqual((await fs.readdir(dataDir)).filter((n) => n === LOCK_FILE), [], 'the lock was not taken');
    // The same rule where tokens are read in-process (the test servers, the benches).
    await assert.rejects(loadOrCreateTokens(dataDir), (e: unknown) => TokensError.is(e, 'tokens_unsafe') && /mode 0622/.test((e as Error).message));
  });

  it('the test library does not use a tokens.json of another user, even of the proven server', async () => {
    const tokens = await loadOrCreateTokens(dataDir);
    const server: InboxServer = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: 'inbox.test' });
    try {
      const env = { TEST_INBOX_DATA_DIR: dataDir };
      const ok = await connect({}, env);
      assert.equal(ok.savedTokens.apiToken, tokens.apiToken);
      await ok.close();
      await fs.chown(path.join(dataDir, TOKENS_FILE), NOBODY, NOBODY);
      await assert.rejects(connect({}, env), (e: unknown) => TestInboxError.is(e, 'unauthorized') && /tokens\.json was not used: .*tokens\.json belongs to uid 65534, not to you \(uid 0\), mode 0600/.test(e.message));
    } finally {
      await server.close();
    }
  });
});
