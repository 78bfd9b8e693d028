import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { stopServerProcess } from '../../src/shared/contract';

/** A real Node child that runs `script`, with an IPC channel when asked. */
function child(script: string, ipc: boolean): ChildProcess {
  return spawn(process.execPath, ['-e', script], { stdio: ipc ? ['ignore', 'ignore', 'ignore', 'ipc'] : 'ignore' });
}

const idle = 'setInterval(() => {}, 1000);';
const exitOnDisconnect = `${idle} process.on('disconnect', () => process.exit(0));`;

describe('stopServerProcess: the one clean stop, per platform (real children)', () => {
  it('POSIX: SIGTERM, a clean stop', async () => {
    const c = child(idle, false);
    assert.equal(await stopServerProcess(c, 10_000, 'linux'), 'clean');
    assert.equal(c.signalCode, 'SIGTERM');
  });

  it('POSIX: a child that ignores SIGTERM is killed after the grace period', async () => {
    const c = spawn(process.execPath, ['-e', `process.on('SIGTERM', () => {}); ${idle} process.stdout.write('ready');`], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise((r) => c.stdout!.once('data', r)); // its SIGTERM handler is installed
    assert.equal(await stopServerProcess(c, 200, 'linux'), 'killed');
    assert.equal(c.signalCode, 'SIGKILL');
  });

  it('Windows: the IPC channel closes, and the server exits by itself (exit code 0)', async () => {
    const c = child(exitOnDisconnect, true);
    assert.equal(await stopServerProcess(c, 10_000, 'win32'), 'clean');
    assert.equal(c.exitCode, 0);
  });

  it('Windows without a channel: nothing but a kill stops it, at once (no grace period is waited)', async () => {
    const c = child(idle, false);
    const t0 = Date.now();
    assert.equal(await stopServerProcess(c, 60_000, 'win32'), 'killed');
    assert.equal(c.signalCode, 'SIGKILL');
    assert.ok(Date.now() - t0 < 10_000, 'stopped without waiting for the grace period');
  });

  it('a child already gone is a clean stop', async () => {
    const c = child('', false);
    await new Promise((r) => c.once('exit', r));
    assert.equal(await stopServerProcess(c, 10_000, 'linux'), 'clean');
  });
});
