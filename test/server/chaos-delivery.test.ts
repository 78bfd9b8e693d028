// The `delivery` surface of failures on demand (issue 39, docs/chaos.md): a message accepted at
// once but visible only when its delay ends, on a real server with real SMTP (nodemailer), the
// Twilio API through the library, and the library's waitForCode. Its received time is the moment
// it becomes visible, and a restart during the delay goes on waiting and shows it once.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import nodemailer from 'nodemailer';
import { DELAYED_DIR_NAME } from '../../src/server/chaos/delayed';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { chaos, sendSms, TestInboxError, waitForCode } from '../../src/testing';
import { clearProductEnv } from '../support/cli';

const DOMAIN = 'inbox.test';

describe('failures on demand: delivery delays (real server, nodemailer, the library)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer | undefined;
  let tokens: Awaited<ReturnType<typeof loadOrCreateTokens>>;
  let restoreEnv: (() => void) | undefined;

  const start = async (): Promise<InboxServer> => (server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN }));
  async function listed(s: InboxServer, inbox: string): Promise<Array<{ id: string; time: number }>> {
    const r = await fetch(`${s.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/${inbox}`, { headers: { authorization: tokens.apiToken } });
    return ((await r.json()) as { msgs: Array<{ id: string; time: number }> }).msgs;
  }
  async function send(s: InboxServer, to: string, text: string): Promise<string> {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false });
    try {
      return String((await t.sendMail({ from: 'app@example.com', to, subject: 'Your code', text })).response);
    } finally {
      t.close();
    }
  }
  const held = async (): Promise<string[]> => (await fs.readdir(path.join(dataDir, DELAYED_DIR_NAME)).catch(() => [] as string[])).sort();

  beforeEach(async () => {
    restoreEnv = clearProductEnv();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-chaos-delivery-'));
    tokens = await loadOrCreateTokens(dataDir);
    await start();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await fs.rm(dataDir, { recursive: true, force: true });
    restoreEnv?.();
  });

  it('SMTP: the message is acknowledged before it is visible and appears when its delay ends, with that moment as its received time; waitForCode times out on it, and a longer wait started during the delay gets it', async () => {
    const faults = await chaos({ surface: 'delivery', match: { recipient: 'joe@inbox.test' }, fault: { delivery_delay: '5s' }, times: 1 }, { dataDir });
    const sent = Date.now();
    const reply = await send(server!, 'joe@inbox.test', 'Your code is 515151');
    assert.match(reply, /^250 OK: accepted, visible from \d{4}-/);
    assert.deepEqual(await listed(server!, 'joe'), [], 'not visible during the delay');
    assert.equal((await held()).length, 2, 'held durably: its bytes and its record');
    await assert.rejects(waitForCode('joe', { dataDir, since: sent, timeout: '500ms' }), (e: unknown) => TestInboxError.is(e) && e.code === 'timeout');
    // A wait whose `since` is taken during the delay still sees it: it is received when it becomes visible.
    const got = await waitForCode('joe', { dataDir, since: 'now', timeout: '20s' });
    assert.equal(got.code, '515151');
    assert.ok(got.time - sent >= 4_900, `received ${got.time - sent} ms after the send`);
    assert.equal((await listed(server!, 'joe')).length, 1);
    assert.deepEqual(await held(), []);
    // times: 1 — the next message is not held.
    assert.match(await send(server!, 'joe@inbox.test', 'Your code is 626262'), /^250 OK: stored as/);
    assert.deepEqual((await faults.state()).map((r) => [r.fired, r.evaluated]), [[1, 2]]);
  });

  it('survives a restart during the delay: the delay goes on, and the message appears once', async () => {
    await chaos({ surface: 'delivery', match: { recipient: 'ann' }, fault: { delivery_delay: 3_000 } }, { dataDir });
    const sent = Date.now();
    assert.match(await send(server!, 'ann@inbox.test', 'Your code is 737373'), /accepted, visible from/);
    await server!.close();
    server = undefined;
    assert.equal((await held()).length, 2);
    const again = await start();
    assert.equal(again.chaos.size, 0, 'the rules do not survive a restart; the held message does');
    assert.deepEqual(await listed(again, 'ann'), [], 'still waiting after the restart');
    const got = await waitForCode('ann', { dataDir, since: sent, timeout: '20s' });
    assert.equal(got.code, '737373');
    assert.ok(got.time - sent >= 2_900, `visible ${got.time - sent} ms after the send, not at the restart`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await listed(again, 'ann')).length, 1, 'once');
    assert.deepEqual(await held(), []);
  });

  it('a crash after the store kept a held message but before its record went stores it once, to each of its inboxes', async () => {
    await chaos({ surface: 'delivery', match: { recipient: 'ann' }, fault: { delivery_delay: 1_000 } }, { dataDir });
    assert.match(await send(server!, ['ann@inbox.test', 'ann@other.test'].join(', '), 'Your code is 515151'), /accepted, visible from/);
    // The held files as a crash would leave them once the message is stored: copied aside now, put back after the delivery.
    const dir = path.join(dataDir, DELAYED_DIR_NAME);
    const files = await held();
    assert.equal(files.length, 2);
    const saved = await Promise.all(files.map(async (f) => [f, await fs.readFile(path.join(dir, f))] as const));
    await waitForCode('ann', { dataDir, timeout: '10s' });
    await server!.close();
    server = undefined;
    assert.deepEqual(await held(), [], 'delivered: its files are gone');
    for (const [f, bytes] of saved) await fs.writeFile(path.join(dir, f), bytes);
    const again = await start();
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(await held(), [], 'the restart finished the delivery it found done');
    assert.equal((await listed(again, 'ann')).length, 1, 'once in ann@inbox.test');
    const other = (await (await fetch(`${again.httpUrl}/api/v2/domains/other.test/inboxes/ann`, { headers: { authorization: tokens.apiToken } })).json()) as { msgs: unknown[] };
    assert.equal(other.msgs.length, 1, 'once in ann@other.test');
  });

  it('SES v2 Raw: a delivery rule\'s sender is the raw message\'s From', async () => {
    await chaos({ surface: 'delivery', match: { sender: 'billing@acme.test' }, fault: { delivery_delay: 1_500 } }, { dataDir });
    const ses = new SESv2Client({ region: 'eu-west-1', endpoint: server!.httpUrl, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: tokens.providerKey! }, maxAttempts: 1 });
    const raw = (from: string): SendEmailCommand => new SendEmailCommand({ Destination: { ToAddresses: ['joe@inbox.test'] }, Content: { Raw: { Data: Buffer.from(`From: "Billing" <${from}>\r\nTo: joe@inbox.test\r\nSubject: Code\r\n\r\nYour code is 424242\r\n`) } } });
    try {
      await ses.send(raw('app@acme.test'));
      await ses.send(raw('billing@acme.test'));
      assert.equal((await listed(server!, 'joe')).length, 1, 'the other sender\'s is visible at once, the matching one is held');
      await new Promise((r) => setTimeout(r, 2_500));
      assert.equal((await listed(server!, 'joe')).length, 2, 'visible once its delay ended');
    } finally {
      ses.destroy();
    }
  });

  it('Twilio: an SMS whose code arrives late (the send is answered before the SMS is visible)', async () => {
    await chaos({ surface: 'delivery', match: { recipient: '15550100199' }, fault: { delivery_delay: '5s' } }, { dataDir });
    const sent = Date.now();
    const sms = await sendSms({ dataDir, to: '+15550100199', body: 'Your Acme code is 848484' });
    assert.match(sms.sid, /^SM/);
    await assert.rejects(waitForCode('15550100199', { dataDir, since: sent, timeout: '300ms' }), (e: unknown) => TestInboxError.is(e) && e.code === 'timeout');
    assert.equal((await waitForCode('15550100199', { dataDir, since: sent, timeout: '20s' })).code, '848484');
  });

  it('a push stream hears of the message when it becomes visible, not when it was accepted', async () => {
    await chaos({ surface: 'delivery', match: { recipient: 'joe' }, fault: { delivery_delay: 1_500 } }, { dataDir });
    const url = new URL(`${server!.httpUrl}/api/v2/domains/${DOMAIN}/stream/joe`);
    let req: http.ClientRequest | undefined;
    const heard = new Promise<{ at: number; data: { msg: { time: number } } }>((resolve, reject) => {
      req = http.get({ host: url.hostname, port: url.port, path: url.pathname, headers: { authorization: tokens.apiToken } }, (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          const m = /event: message\ndata: (.*)\n\n/.exec(buf);
          if (m) resolve({ at: Date.now(), data: JSON.parse(m[1]) as { msg: { time: number } } });
        });
      });
      req.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 200));
    const sent = Date.now();
    await send(server!, 'joe@inbox.test', 'Your code is 909090');
    const event = await heard;
    req!.destroy();
    assert.ok(event.at - sent >= 1_400, `heard ${event.at - sent} ms after the send`);
    assert.ok(event.data.msg.time - sent >= 1_400, `its time is the moment it became visible (${event.data.msg.time - sent} ms after the send)`);
  });

  it('a start removes the bytes of a message whose record was never written (never acknowledged), and keeps an unreadable record for a person to look at', async () => {
    await server!.close();
    server = undefined;
    const dir = path.join(dataDir, DELAYED_DIR_NAME);
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, '1-aaaaaaaaaaaa.eml'), 'Subject: half written\r\n\r\nx');
    await fs.writeFile(path.join(dir, '2-bbbbbbbbbbbb.json'), '{not json');
    await fs.writeFile(path.join(dir, '2-bbbbbbbbbbbb.eml'), 'Subject: b\r\n\r\ny');
    const logs: string[] = [];
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN, log: (_l, msg) => logs.push(msg) });
    assert.deepEqual(await held(), ['2-bbbbbbbbbbbb.eml', '2-bbbbbbbbbbbb.json']);
    assert.ok(logs.some((l) => /delayed delivery 2-bbbbbbbbbbbb: its record cannot be read/.test(l)), logs.join('\n'));
  });

  it('with no delivery rule nothing is held and no folder is made', async () => {
    await chaos({ surface: 'delivery', match: { recipient: 'someone-else' }, fault: { delivery_delay: '1m' } }, { dataDir });
    assert.match(await send(server!, 'joe@inbox.test', 'Your code is 111222'), /^250 OK: stored as/);
    assert.equal((await listed(server!, 'joe')).length, 1);
    assert.deepEqual(await held(), []);
  });
});
