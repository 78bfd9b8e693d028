// `npm test` leaves nothing in the temp folder: the API harness (./api-harness.ts) makes a
// folder only for a store of its own, and removes it on close. A second API over a harness's
// store (a second process of one store, as webui-routes.test.ts runs it) makes none. A CLI
// child (./cliProcess.ts) spools into a temp folder of its own, removed when it exits, even
// when a test kills it (the team tests' PostgreSQL-backed servers spool there).
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startApi } from './api-harness';
import { startCli } from './cliProcess';
import { sharedCluster } from '../support/postgres';

/** The temp folder before any test points TMPDIR elsewhere. */
const REAL_TMP = os.tmpdir();

describe('temp folders of the API harness and the CLI children', () => {
  let tmp: string;
  let saved: string | undefined;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-tmpcheck-'));
    saved = process.env.TMPDIR;
    // os.tmpdir() reads TMPDIR at each call: every folder the harness makes lands here.
    process.env.TMPDIR = tmp;
  });
  afterEach(async () => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('a second API over a harness\'s store makes no folder, leaves the store to its owner, and the owner removes its folder', async () => {
    const h = await startApi();
    assert.equal((await fs.readdir(tmp)).length, 1, 'the owner\'s folder');
    const second = await startApi({ store: h.store });
    assert.deepEqual(await fs.readdir(tmp), [path.basename(h.dir)], 'no folder of its own');
    await second.close();
    assert.equal((await h.call('GET', '/api/v2/domains')).status, 200, 'the owner\'s store still serves');
    await h.close();
    assert.deepEqual(await fs.readdir(tmp), []);
  });

  it('a PostgreSQL-backed CLI server killed by SIGKILL leaves nothing in the temp folder', async function () {
    this.timeout(120_000);
    // The shared cluster outlives this test: its folder goes to the real temp folder.
    process.env.TMPDIR = REAL_TMP;
    const cluster = await sharedCluster();
    process.env.TMPDIR = tmp;
    const url = await cluster.createDatabase('tmpcheck');
    const dataDir = await fs.mkdtemp(path.join(REAL_TMP, 'test-inbox-tmpcheck-data-'));
    try {
      const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--store', url], { TEST_INBOX_API_TOKEN: 'tmpcheck-api-token-1', TEST_INBOX_WEBHOOK_TOKEN: 'tmpcheck-webhook-token-2' });
      await r.ready;
      r.child.kill('SIGKILL');
      await r.exited;
      assert.deepEqual(await fs.readdir(tmp), []);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
