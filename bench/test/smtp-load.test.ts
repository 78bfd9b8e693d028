// The SMTP load client against a real smtp-server on port 0: it must count only what the
// server acknowledged, deliver intact bytes, and report failures instead of hiding them.
// Run with `npx mocha bench/test/*.test.ts` (not part of `npm test`).
import assert from 'node:assert/strict';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { buildMessage, runSmtpLoad, sendMany, sendOne, DEFAULT_MESSAGE_BYTES } from '../lib/smtp-load';

interface Counted {
  server: SMTPServer;
  port: number;
  accepted: number;
  refused: number;
  bodies: Buffer[];
  recipients: string[];
}

async function countingServer(decide: (n: number) => boolean = () => true): Promise<Counted> {
  const state = { accepted: 0, refused: 0, bodies: [] as Buffer[], recipients: [] as string[] };
  let n = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (decide(++n)) {
          state.accepted++;
          state.bodies.push(Buffer.concat(chunks));
          state.recipients.push(...session.envelope.rcptTo.map((r) => r.address));
          callback(null, 'ok');
        } else {
          state.refused++;
          const err = Object.assign(new Error('refused for the test'), { responseCode: 554 });
          callback(err);
        }
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(state, { server, port });
}

function close(c: Counted): Promise<void> {
  return new Promise((resolve) => c.server.close(() => resolve()));
}

describe('bench SMTP load client', () => {
  it('builds a message of exactly the requested size with CRLF lines and no line starting with a dot', () => {
    for (const size of [1024, DEFAULT_MESSAGE_BYTES, 4097, 65536]) {
      const m = buildMessage(size, 'a@b.test', 'c@d.test', 'subject 1');
      assert.equal(m.length, size);
      const text = m.toString('latin1');
      assert.ok(text.endsWith('\r\n'));
      assert.equal(text.replace(/\r\n/g, '').includes('\n'), false, 'bare LF found');
      assert.equal(text.split('\r\n').some((l) => l.startsWith('.')), false);
    }
    assert.throws(() => buildMessage(100, 'a@b.test', 'c@d.test', 's'), RangeError);
  });

  it('delivers the message bytes intact to the server', async () => {
    const srv = await countingServer();
    try {
      const msg = buildMessage(DEFAULT_MESSAGE_BYTES, 'sender@bench.test', 'x@inbox.test', 'intact');
      const reply = await sendOne('127.0.0.1', srv.port, 'x@inbox.test', msg);
      assert.equal(reply.code, 250);
      assert.equal(srv.accepted, 1);
      assert.deepEqual(srv.bodies[0], msg);
      assert.deepEqual(srv.recipients, ['x@inbox.test']);
    } finally {
      await close(srv);
    }
  });

  it('counts only acknowledged messages and reports the refused ones', async () => {
    // Every third message is refused with 554 after its data.
    const srv = await countingServer((n) => n % 3 !== 0);
    try {
      const r = await runSmtpLoad({ host: '127.0.0.1', port: srv.port, connections: 4, warmupMs: 100, durationMs: 600 });
      assert.ok(r.acked > 0, 'nothing acknowledged');
      assert.ok(r.rejected > 0, 'refusals not reported');
      assert.match(r.firstError ?? '', /554/);
      // The window is a part of the whole run: never more than the server accepted.
      assert.ok(r.acked <= srv.accepted, `${r.acked} counted but the server accepted ${srv.accepted}`);
      assert.equal(r.failedConnections, 0);
      assert.ok(r.msgsPerSec > 0 && Number.isFinite(r.latencyP50Ms) && r.latencyP99Ms >= r.latencyP50Ms);
    } finally {
      await close(srv);
    }
  });

  it('reports connections the server drops instead of counting them', async () => {
    // A server that greets, answers EHLO and then hangs up at the first MAIL FROM.
    const server = net.createServer((socket) => {
      socket.write('220 test\r\n');
      socket.on('data', (d) => {
        if (d.toString().startsWith('EHLO')) socket.write('250-test\r\n250 8BITMIME\r\n');
        else socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (server.address() as AddressInfo).port;
      const r = await runSmtpLoad({ host: '127.0.0.1', port, connections: 2, warmupMs: 50, durationMs: 200 });
      assert.equal(r.acked, 0);
      assert.equal(r.failedConnections, 2);
      assert.match(r.firstError ?? '', /closed/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('sends exactly the requested number of messages to the chosen recipients', async () => {
    const srv = await countingServer();
    try {
      await sendMany('127.0.0.1', srv.port, 3, 25, (i) => (i % 5 === 0 ? 'big@inbox.test' : `u${i % 2}@inbox.test`));
      assert.equal(srv.accepted, 25);
      const count = (a: string) => srv.recipients.filter((r) => r === a).length;
      assert.equal(count('big@inbox.test'), 5);
      assert.equal(count('u0@inbox.test') + count('u1@inbox.test'), 20);
    } finally {
      await close(srv);
    }
  });

  it('rejects sendMany when the server refuses a message', async () => {
    const srv = await countingServer((n) => n !== 4);
    try {
      await assert.rejects(sendMany('127.0.0.1', srv.port, 1, 10, () => 'x@inbox.test'), /end of data: expected 250/);
    } finally {
      await close(srv);
    }
  });
});
