// The platform rules of src/shared/portableFs.ts, each with the platform as a parameter: the
// Windows and macOS branches are checked on Linux, and npm run test:windows runs this file
// under Windows' Node too.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BUSY_RETRY_DELAYS_MS, fsyncOpenFlags, isBusy, modesApply, retryBusy, retryBusySync } from '../../src/shared/portableFs';

const busy = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: resource busy or locked`), { code });

describe('portable file-system rules', () => {
  it('treats modes as meaningful on POSIX only (Windows has ACLs)', () => {
    assert.equal(modesApply('win32'), false);
    assert.equal(modesApply('darwin'), true);
    assert.equal(modesApply('linux'), true);
  });

  it('retries a rename that Windows refuses for a moment (EPERM, EBUSY, EACCES), with growing waits and without blocking', async () => {
    for (const code of ['EPERM', 'EBUSY', 'EACCES']) {
      let tries = 0;
      const waits: number[] = [];
      const r = await retryBusy(
        async () => {
          if (++tries < 4) throw busy(code);
          return 'renamed';
        },
        'win32',
        async (ms) => void waits.push(ms),
      );
      assert.equal(r, 'renamed');
      assert.deepEqual(waits, BUSY_RETRY_DELAYS_MS.slice(0, 3));
    }
  });

  it('gives up after its last wait, and never retries on POSIX or for other errors', async () => {
    let tries = 0;
    await assert.rejects(retryBusy(async () => void (tries++, (() => { throw busy('EBUSY'); })()), 'win32', async () => undefined), /EBUSY/);
    assert.equal(tries, BUSY_RETRY_DELAYS_MS.length + 1);
    for (const [platform, code] of [['linux', 'EPERM'], ['darwin', 'EBUSY'], ['win32', 'ENOENT']] as const) {
      let n = 0;
      await assert.rejects(retryBusy(async () => void (n++, (() => { throw busy(code); })()), platform, async () => undefined));
      assert.equal(n, 1, `${platform} ${code} is final`);
      assert.equal(isBusy(busy(code), platform), false);
    }
  });

  it('retries synchronously on a worker thread, the same rule', () => {
    let tries = 0;
    assert.equal(retryBusySync(() => (++tries < 3 ? (() => { throw busy('EPERM'); })() : 'ok'), 'win32'), 'ok');
    assert.equal(tries, 3);
  });

  it('opens a file for writing to fsync it (Windows flushes only writable handles), and a directory read-only', async () => {
    assert.equal(fsyncOpenFlags('file'), 'r+');
    assert.equal(fsyncOpenFlags('dir'), 'r');
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ti-fsync-'));
    try {
      const file = path.join(dir, 'm.eml');
      await fs.writeFile(file, 'hello', { mode: 0o600 });
      const fh = await fs.open(file, fsyncOpenFlags('file'));
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      assert.equal(await fs.readFile(file, 'utf8'), 'hello', 'r+ neither truncates nor creates');
      await assert.rejects(fs.open(path.join(dir, 'absent'), fsyncOpenFlags('file')), /ENOENT/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
