// `npm test` leaves nothing in the temp folder: the API harness (./api-harness.ts) makes a
// folder only for a store of its own, and removes it on close. A second API over a harness's
// store (a second process of one store, as webui-routes.test.ts runs it) makes none.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startApi } from './api-harness';

describe('temp folders of the API harness', () => {
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
});
