// Child-process helpers of the bench, with real child processes.
// Run with `npx mocha --no-config -r tsx/cjs --extension ts 'bench/test/*.test.ts'` (not part of `npm test`).
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { BenchProcessError, cpuMs, freePort, portOf, rssMb, startWithReadyLine, startWithSmtpProbe } from '../lib/procs';
import { indexedFromHeaders } from '../lib/store-fixture';

const node = process.execPath;

describe('bench child processes', () => {
  it('resolves with the parsed JSON ready line and stops the child', async () => {
    const s = await startWithReadyLine<{ http: string }>(node, ['-e', 'console.log(JSON.stringify({http:"http://127.0.0.1:1234"})); setInterval(() => {}, 1000)']);
    try {
      assert.equal(s.ready.http, 'http://127.0.0.1:1234');
      assert.ok(s.readyMs > 0);
      assert.ok(rssMb(s.child.pid ?? 0) > 1, 'RSS of a live node process');
    } finally {
      await s.stop();
    }
    assert.ok(s.child.exitCode !== null || s.child.signalCode !== null);
  });

  it('rejects with the stderr of a child that exits before it is ready', async () => {
    await assert.rejects(startWithReadyLine(node, ['-e', 'console.error("port 2525 is taken"); process.exit(2)']), (e: unknown) => {
      assert.ok(BenchProcessError.is(e));
      assert.equal(e.code, 'PROC_EXIT');
      assert.match(e.message, /code 2/);
      assert.match(e.message, /port 2525 is taken/);
      return true;
    });
  });

  it('rejects a first stdout line that is not JSON', async () => {
    await assert.rejects(startWithReadyLine(node, ['-e', 'console.log("listening on 1234"); setInterval(() => {}, 1000)']), (e: unknown) => {
      assert.ok(BenchProcessError.is(e));
      assert.equal(e.code, 'PROC_READY_LINE');
      return true;
    });
  });

  it('waits for an SMTP greeting on the given port', async () => {
    const port = await freePort();
    const script = `setTimeout(() => require('net').createServer((s) => s.end('220 hi\\r\\n')).listen(${port}, '127.0.0.1'), 300)`;
    const s = await startWithSmtpProbe(node, ['-e', script], port);
    try {
      assert.equal(s.ready, port);
      const greeting = await new Promise<string>((resolve) => net.connect(port, '127.0.0.1').on('data', (d) => resolve(d.toString())));
      assert.match(greeting, /^220/);
    } finally {
      await s.stop();
    }
  });

  it('reads the CPU time a child has used from /proc', async function () {
    if (process.platform !== 'linux') this.skip();
    // The child burns 200 ms of its own CPU time (not wall time), then says it is ready.
    const script = 'while ((process.cpuUsage().user + process.cpuUsage().system) < 200000) {} console.log("{}"); setInterval(() => {}, 1000)';
    const s = await startWithReadyLine(node, ['-e', script]);
    try {
      const used = cpuMs(s.child.pid ?? 0);
      assert.ok(used >= 190, `read ${used} ms`);
    } finally {
      await s.stop();
    }
    assert.ok(Number.isNaN(cpuMs(s.child.pid ?? 0)), 'a process that is gone has no CPU time');
  });

  it('reads the port of both ready-line address forms', () => {
    assert.equal(portOf('127.0.0.1:2525'), 2525);
    assert.equal(portOf('http://127.0.0.1:2580'), 2580);
    assert.equal(portOf('http://[::1]:2580/'), 2580);
    assert.throws(() => portOf('localhost'), BenchProcessError);
  });

  it("reads how many messages the server indexed from headers out of its start-up log", () => {
    assert.equal(indexedFromHeaders('2026-01-01T00:00:00Z info store: 100000 message(s) in 1 domain(s) at /d (1234 indexed from their headers)\n'), 1234);
    assert.equal(indexedFromHeaders('2026-01-01T00:00:00Z info store: 100000 message(s) in 1 domain(s) at /d\n'), 0);
  });
});
