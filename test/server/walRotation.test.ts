// The write-ahead log's rotation rule, with real files: a checkpoint rotates only a generation
// that was handed a record since the last rotation asked for, even while that rotation waits in
// the log's queue (its byte count lags until it runs). Before, two checkpoints in a row could
// rotate an empty generation and keep its file (seen once in a fresh-clone CI run of
// checkpointOrder.test.ts as generations [1, 2, 3] where [1, 2] were expected).
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WAL_PREFIX, WriteAheadLog } from '../../src/server/store/maildir/wal';

describe('write-ahead log rotation', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-wal-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('has records to rotate from the moment one is handed in until a rotation is asked for, whatever the queue still holds', async () => {
    const wal = new WriteAheadLog(dir);
    await wal.start(1);
    assert.equal(wal.hasRecordsToRotate, false, 'a new generation holds nothing');
    const committed = wal.remove(['inbox-1-1'], true);
    assert.equal(wal.hasRecordsToRotate, true, 'handed a record');
    const rotated = wal.rotate();
    assert.equal(wal.hasRecordsToRotate, false, 'the rotation asked for takes that record, before it has run');
    await committed;
    assert.equal(await rotated, path.join(dir, `${WAL_PREFIX}1`));
    assert.equal(wal.hasRecordsToRotate, false);
    assert.equal(wal.bytes, 0, 'generation 2 holds nothing');
    await wal.remove(['inbox-1-2'], false);
    assert.equal(wal.hasRecordsToRotate, true);
    assert.ok(wal.bytes > 0);
    await wal.close();
    assert.deepEqual((await fs.readdir(dir)).sort(), [`${WAL_PREFIX}1`, `${WAL_PREFIX}2`]);
  });
});
