// test/support/atExit.ts: cleanups at exit share one process listener, even when the module is
// loaded many times over (as it is once per suite bundle in the extension host).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const MODULE = path.resolve(__dirname, '..', 'support', 'atExit.ts');
const COPIES = 12;

describe('test support: atExit', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-inbox-atexit-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(`${COPIES} copies of the module (one per suite bundle) add one exit listener, and every cleanup runs once at exit`, () => {
    // The child loads a fresh copy of the module per "bundle" (require cache cleared), as the
    // extension host loads one copy per compiled suite, and registers from each copy.
    const script = `
      const fs = require('node:fs');
      const path = require('node:path');
      const before = process.listenerCount('exit');
      for (let i = 0; i < ${COPIES}; i++) {
        delete require.cache[require.resolve(${JSON.stringify(MODULE)})];
        const { atExit } = require(${JSON.stringify(MODULE)});
        atExit('own ' + i, () => fs.appendFileSync(path.join(${JSON.stringify(dir)}, 'own-' + i), 'x'));
        // The same helper in every bundle registers the same cleanup: it runs once.
        atExit('shared', () => fs.appendFileSync(path.join(${JSON.stringify(dir)}, 'shared'), 'x'));
      }
      process.stdout.write(String(process.listenerCount('exit') - before));
    `;
    const r = spawnSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { encoding: 'utf8', cwd: path.resolve(__dirname, '..', '..') });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning/);
    assert.equal(r.stdout, '1', 'exit listeners added');
    for (let i = 0; i < COPIES; i++) assert.equal(fs.readFileSync(path.join(dir, `own-${i}`), 'utf8'), 'x', `cleanup ${i} ran once`);
    assert.equal(fs.readFileSync(path.join(dir, 'shared'), 'utf8'), 'x', 'the shared cleanup ran once');
  });
});
