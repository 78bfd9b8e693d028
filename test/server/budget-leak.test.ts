// The byte budget on the real server in a child process: the shared byte budget cannot be
// leaked by clients that go away while they wait for it, and a stop always stops.
// - The budget is filled with stalled SMTP DATA (each session holds ~200 KB in memory).
// - 40 `POST /healthz` with `Content-Length: 1048576` and no body, and 40 authenticated
//   injects of the same shape, are sent and their sockets closed.
// - The SMTP sessions are freed. Then an inject and a spooled SMTP message must be stored,
//   and SIGTERM must stop the server while a request waits for memory.
// Before the fix the healthz requests took budget before their route was known, and a grant
// that arrived after its socket closed was never given back: every later write hung.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_BUDGET_BYTES } from '../../src/server/budget';
import { buildMessage } from '../../bench/lib/smtp-load';
import { sharedCluster } from '../support/postgres';
import { STORE_KIND } from './api-harness';
import { type Running, startCli } from './cliProcess';

const API = 'budget-api-token-71c2';
const WEBHOOK = 'budget-webhook-token-0d3e';
/** Under the spool threshold (256 KB) with its line breaks: each stalled session keeps it in memory, under budget. */
const STALL_BYTES = 200 * 1024;
/** Enough stalled sessions to take the whole default budget (the last ones spill to files). */
const STALLED = Math.ceil(DEFAULT_BUDGET_BYTES / STALL_BYTES) + 8;

/** A raw SMTP session: reads replies line by line. */
class Smtp {
  private buf = '';
  private readonly waiters: Array<(line: string) => void> = [];
  private readonly lines: string[] = [];
  private constructor(readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl).replace(/\r$/, '');
        this.buf = this.buf.slice(nl + 1);
        if (line[3] === '-') continue;
        const w = this.waiters.shift();
        if (w) w(line);
        else this.lines.push(line);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      for (const w of this.waiters.splice(0)) w('closed');
    });
  }
  static async open(port: number): Promise<Smtp> {
    const socket = net.connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const s = new Smtp(socket);
    assert.match(await s.reply(), /^220/);
    return s;
  }
  reply(): Promise<string> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (this.socket.destroyed) return Promise.resolve('closed');
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  async command(line: string): Promise<string> {
    this.socket.write(line + '\r\n');
    return this.reply();
  }
  /** EHLO, MAIL, RCPT, DATA: ready for the body. */
  async begin(to: string): Promise<void> {
    assert.match(await this.command('EHLO budget.test'), /^250/);
    assert.match(await this.command('MAIL FROM:<s@budget.test>'), /^250/);
    assert.match(await this.command(`RCPT TO:<${to}>`), /^250/);
    assert.match(await this.command('DATA'), /^354/);
  }
  write(bytes: Buffer | string): Promise<void> {
    return new Promise((resolve) => this.socket.write(bytes, () => resolve()));
  }
}

/** Opens a socket, sends a request head announcing a 1 MiB body, sends no body. */
async function stalledPost(httpUrl: string, target: string, headers: Record<string, string> = {}): Promise<{ socket: net.Socket; answer: () => string }> {
  const { hostname, port } = new URL(httpUrl);
  const socket = net.connect({ host: hostname, port: Number(port) });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
  socket.on('error', () => undefined);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`POST ${target} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1048576\r\n${extra}\r\n`);
  return { socket, answer: () => answer };
}

async function inject(httpUrl: string, inbox: string, subject: string): Promise<Response> {
  return fetch(`${httpUrl}/api/v2/domains/private/inboxes/${inbox}/messages`, {
    method: 'POST',
    headers: { authorization: API, 'content-type': 'application/json' },
    body: JSON.stringify({ subject, text: 'after the flood' }),
    // A hang is the failure this test looks for: it fails with a message instead of at mocha's timeout.
    signal: AbortSignal.timeout(60_000),
  });
}

describe('byte budget under clients that go away', function () {
  this.timeout(300_000);
  let dataDir: string;
  let server: Running;
  let httpUrl: string;
  let smtpPort: number;

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-budget-'));
    const store = STORE_KIND === 'postgres' ? ['--store', await (await sharedCluster()).createDatabase()] : [];
    server = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--api-token', API, '--webhook-token', WEBHOOK, ...store]);
    const ready = await server.ready;
    httpUrl = ready.http;
    smtpPort = Number(ready.smtp.split(':').pop());
  });
  after(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await server?.exited;
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('leaks nothing to waiters that leave, takes no budget before the route and token are checked, and stops on SIGTERM', async () => {
    // 1. Stalled SMTP DATA fills the budget.
    const stalled: Smtp[] = [];
    for (let i = 0; i < STALLED; i++) {
      const s = await Smtp.open(smtpPort);
      await s.begin(`stall${i}@budget.test`);
      await s.write(`Subject: stall ${i}\r\n\r\n`);
      await s.write(Buffer.alloc(STALL_BYTES, 'a'.charCodeAt(0)).toString('latin1').replace(/(.{76})/g, '$1\r\n'));
      stalled.push(s);
    }
    // Let the server take in what was written.
    await new Promise((r) => setTimeout(r, 1_000));

    // 2. Requests that announce a body and never send it; then their clients go away.
    const health = await Promise.all(Array.from({ length: 40 }, () => stalledPost(httpUrl, '/healthz')));
    const unauthenticated = await Promise.all(Array.from({ length: 20 }, () => stalledPost(httpUrl, '/api/v2/domains/private/inboxes/gone/messages')));
    const authenticated = await Promise.all(Array.from({ length: 40 }, () => stalledPost(httpUrl, '/api/v2/domains/private/inboxes/gone/messages', { authorization: API })));
    await new Promise((r) => setTimeout(r, 1_000));
    // No body is needed to refuse POST /healthz (405) or a request without its token (401): those answer at once, full budget or not.
    for (const h of health) assert.match(h.answer(), /^HTTP\/1\.1 405 /, `healthz answered: ${JSON.stringify(h.answer().slice(0, 80))}`);
    for (const u of unauthenticated) assert.match(u.answer(), /^HTTP\/1\.1 401 /, `an inject without a token answered: ${JSON.stringify(u.answer().slice(0, 80))}`);
    for (const a of authenticated) assert.equal(a.answer(), '', 'an authenticated inject waits for memory');
    for (const r of [...health, ...unauthenticated, ...authenticated]) r.socket.destroy();

    // 3. The SMTP sessions finish: every one is stored.
    const replies = await Promise.all(stalled.map(async (s) => (await s.write('\r\n.\r\n'), s.reply())));
    for (const r of replies) assert.match(r, /^250 /);
    for (const s of stalled) s.socket.destroy();

    // 4. Nothing leaked: an inject and a spooled (1 MB) SMTP message are stored.
    const after = await inject(httpUrl, 'after', 'inject after the flood');
    assert.equal(after.status, 200, await after.text());
    const big = await Smtp.open(smtpPort);
    await big.begin('big@budget.test');
    await big.write(buildMessage(1024 * 1024, 's@budget.test', 'big@budget.test', 'big after the flood'));
    assert.match(await big.command('.'), /^250 /);
    big.socket.destroy();

    // 5. SIGTERM stops the server while a request waits for memory: the budget is full of
    //    stalled authenticated injects (each holds 1 MiB), one more waits behind them.
    const holders = await Promise.all(Array.from({ length: DEFAULT_BUDGET_BYTES / (1024 * 1024) + 2 }, () => stalledPost(httpUrl, '/api/v2/domains/private/inboxes/hold/messages', { authorization: API })));
    const spooled = await Smtp.open(smtpPort);
    await spooled.begin('spooled@budget.test');
    await spooled.write(buildMessage(1024 * 1024, 's@budget.test', 'spooled@budget.test', 'waits for its head'));
    const spooledReply = spooled.command('.');
    await new Promise((r) => setTimeout(r, 1_000));
    server.child.kill('SIGTERM');
    const exit = await Promise.race([server.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 60_000))]);
    assert.notEqual(exit, 'hung', 'SIGTERM stopped the server');
    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr());
    // The message that waited for memory was not acknowledged: the sender keeps it and retries.
    assert.doesNotMatch(await spooledReply, /^250/);
    for (const h of holders) h.socket.destroy();
  });
});
