import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createProbe, diskProbe } from '../lib/disk-probe';

describe('bench disk probes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'test-inbox-bench-probe-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('times file creation and leaves its files for the caller to remove', () => {
    const us = createProbe(dir, 50);
    assert.ok(Number.isFinite(us) && us > 0, `got ${us}`);
    const names = readdirSync(dir);
    assert.equal(names.length, 50);
    for (const n of names) assert.equal(statSync(path.join(dir, n)).size, 4096);
  });

  it('counts durable files per second and leaves them in place', async () => {
    const rate = await diskProbe(dir, 200);
    assert.ok(Number.isFinite(rate) && rate > 0, `got ${rate}`);
    assert.ok(readdirSync(dir).length > 0);
    assert.ok(readdirSync(dir).every((n) => n.startsWith('m')), 'every file was renamed into place');
  });
});
