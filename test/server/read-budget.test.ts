// Reads of stored messages under their own byte budget, in process so
// the budgets can be watched: a read holds its share until its response closes, a second read
// waits while the first holds it all, and intake (SMTP, spooled or not) never waits for reads.
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { sendOne } from '../../bench/lib/smtp-load';
import { ByteBudget } from '../../src/server/budget';
import { createSmtpServer, type InboxSmtpServer } from '../../src/server/smtp/smtp';
import { API_TOKEN, DOMAIN, type Harness, startApi } from './api-harness';

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), what);
}

describe('HTTP API: reads wait for their own budget, intake never waits for reads', function () {
  this.timeout(120_000);
  const budget = new ByteBudget(4 * 1024 * 1024);
  const readBudget = new ByteBudget(1024 * 1024);
  let h: Harness;
  let smtp: InboxSmtpServer;
  let smtpPort: number;

  before(async () => {
    h = await startApi({ budget, readBudget });
    smtp = createSmtpServer({ store: h.store, host: '127.0.0.1', port: 0, budget });
    smtpPort = (await smtp.start()).port;
  });
  after(async () => {
    await smtp?.stop();
    await h?.close();
  });

  it('holds a read until its response closes, queues the next, and takes mail meanwhile', async () => {
    // Larger than the loopback socket buffers: a client that reads nothing keeps the response open.
    const big = Buffer.concat([Buffer.from(`From: a@acme.test\r\nTo: big@${DOMAIN}\r\nSubject: big\r\n\r\n`), Buffer.alloc(24 * 1024 * 1024, 'z'.charCodeAt(0))]);
    const meta = await h.deliver('big', big);
    const stalled = net.connect({ host: '127.0.0.1', port: h.port });
    await new Promise<void>((resolve) => stalled.once('connect', resolve));
    stalled.on('error', () => undefined);
    stalled.pause();
    stalled.write(`GET /api/v2/domains/private/messages/${meta.id}/raw HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${API_TOKEN}\r\n\r\n`);
    await until('the stalled read holds the whole read budget', () => readBudget.inUse === readBudget.capacity);

    const second = h.call('GET', `/api/v2/domains/private/messages/${meta.id}/raw`);
    await until('the second read waits for the first', () => readBudget.waiters === 1);

    // Intake goes on: a small message and one spooled to disk (past 256 KB) are both stored.
    assert.equal((await sendOne('127.0.0.1', smtpPort, `small@${DOMAIN}`)).code, 250);
    const spooled = Buffer.from(`From: a@acme.test\r\nTo: spool@${DOMAIN}\r\nSubject: spooled\r\n\r\n${`${'s'.repeat(76)}\r\n`.repeat(8000)}`);
    assert.equal((await sendOne('127.0.0.1', smtpPort, `spool@${DOMAIN}`, spooled)).code, 250);
    assert.equal(readBudget.waiters, 1, 'the second read still waits');

    stalled.destroy();
    const r = await second;
    assert.equal(r.status, 200);
    assert.ok(r.bytes.equals(big), 'the waiting read got the whole message');
    await until('every read gave its share back', () => readBudget.inUse === 0 && budget.inUse === 0);
  });
});
