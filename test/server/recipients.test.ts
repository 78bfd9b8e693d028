// Recipients on the real server in a child process: at most 100 RCPT per
// message (452 4.5.3 past it), and one message to many recipients writes its bytes once (one
// log record, hard-linked files), measured as the bytes the server process wrote.
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildMessage, SmtpConnection } from '../../bench/lib/smtp-load';
import { DEFAULT_MAX_RECIPIENTS } from '../../src/server/smtp/smtp';
import { type Running, startCli } from './cliProcess';

const API = 'rcpt-api-token-7c2d';
const WEBHOOK = 'rcpt-webhook-token-1f9e';
const MESSAGE_BYTES = 100 * 1024;

/** Bytes a process has handed to write() so far (/proc/<pid>/io `wchar`). */
function written(pid: number): number {
  return Number(/^wchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

describe('recipients of one SMTP message', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: Running;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-rcpt-'));
    server = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--api-token', API, '--webhook-token', WEBHOOK]);
    await server.ready;
  });
  after(async () => {
    await server?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it(`takes ${DEFAULT_MAX_RECIPIENTS} recipients, answers 452 4.5.3 past them, and writes the bytes once for all`, async function () {
    if (process.platform !== 'linux') this.skip();
    const ready = await server.ready;
    const pid = server.child.pid!;
    const message = buildMessage(MESSAGE_BYTES, 'fan@sender.test', 'r0@inbox.test', 'fan-out');
    const c = await SmtpConnection.open('127.0.0.1', Number(ready.smtp.split(':').pop()));
    const before = written(pid);
    await c.expect(c.command('EHLO sender.test'), 250, 'EHLO');
    await c.expect(c.command('MAIL FROM:<fan@sender.test>'), 250, 'MAIL FROM');
    for (let i = 0; i < DEFAULT_MAX_RECIPIENTS; i++) await c.expect(c.command(`RCPT TO:<r${i}@inbox.test>`), 250, `RCPT ${i}`);
    const over = await c.command(`RCPT TO:<r${DEFAULT_MAX_RECIPIENTS}@inbox.test>`);
    assert.equal(over.code, 452, over.text);
    assert.match(over.text, /^452 4\.5\.3 too many recipients/);
    await c.expect(c.command('DATA'), 354, 'DATA');
    const done = await c.data(message);
    assert.equal(done.code, 250, done.text);
    await c.quit();
    const bytes = written(pid) - before;
    // One copy of the message, the log's records and the journal lines (~200 bytes a recipient);
    // a copy per recipient would be 100 × 100 KB in the files plus as much in the log.
    assert.ok(bytes < 2 * MESSAGE_BYTES + DEFAULT_MAX_RECIPIENTS * 1024, `the server wrote ${bytes} bytes`);

    const ids = done.text.replace(/^250 OK: stored as /, '').split(' ');
    assert.equal(ids.length, DEFAULT_MAX_RECIPIENTS);
    const first = await fetch(`${ready.http}/api/v2/domains/private/inboxes/r7/messages/${ids[7]}/raw`, { headers: { authorization: API } });
    assert.deepEqual(Buffer.from(await first.arrayBuffer()), message);
    const missing = await fetch(`${ready.http}/api/v2/domains/private/inboxes/r${DEFAULT_MAX_RECIPIENTS}`, { headers: { authorization: API } });
    assert.deepEqual(((await missing.json()) as { msgs: unknown[] }).msgs, []);
  });
});
