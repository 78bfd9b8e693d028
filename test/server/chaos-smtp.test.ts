// Failures on demand at each SMTP stage (issue 39, docs/chaos.md), on a real server set through
// its HTTP API, with nodemailer as the sender: it sees the codes, a refused message is not
// stored, one bad recipient of several is refused while the others get their copies.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { type InboxServer, startInboxServer } from '../../src/server/server';

const API = 'api-token-chaos-smtp-5b8e2f';
const WEBHOOK = 'wh-token-chaos-smtp-1c7d9a';

type SendError = Error & { responseCode?: number; code?: string };

describe('failures on demand: SMTP faults at each stage (real server, nodemailer)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: InboxServer;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-chaos-smtp-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API, webhookToken: WEBHOOK, defaultDomain: 'inbox.test' });
  });
  after(async () => {
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await call('DELETE', '/api/v2/chaos');
    await call('DELETE', '/api/v2/domains/inbox.test/inboxes');
  });

  async function call(method: string, target: string, body?: unknown): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const r = await fetch(`${server.httpUrl}${target}`, { method, headers: { authorization: API, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, json: await r.json() };
  }
  async function rules(...set: unknown[]): Promise<void> {
    const r = await call('PUT', '/api/v2/chaos', set);
    assert.equal(r.status, 200, JSON.stringify(r.json));
  }
  async function stored(inbox: string): Promise<number> {
    return ((await call('GET', `/api/v2/domains/inbox.test/inboxes/${inbox}`)).json.msgs as unknown[]).length;
  }
  async function counters(): Promise<Array<[number, number]>> {
    return ((await call('GET', '/api/v2/chaos')).json.rules as Array<{ fired: number; evaluated: number }>).map((r) => [r.fired, r.evaluated]);
  }
  function transport(extra: Record<string, unknown> = {}): nodemailer.Transporter {
    return nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ...extra });
  }
  async function refused(send: Promise<unknown>): Promise<SendError> {
    return send.then(
      () => assert.fail('the send was not refused'),
      (e: unknown) => e as SendError,
    );
  }
  const mail = (to: string | string[], from = 'app@example.com'): nodemailer.SendMailOptions => ({ from, to, subject: 'Your code', text: 'Your code is 424242' });

  it('connect: the greeting is the rule\'s reply, which nodemailer reports with its code; a dropped connection is retried by nodemailer\'s pool', async () => {
    await rules({ surface: 'smtp', match: { all: true, stage: 'connect' }, fault: { reply: { code: 421, text: '4.3.2 try again later' } }, times: 1 });
    const t = transport();
    const e = await refused(t.sendMail(mail('joe@inbox.test')));
    assert.equal(e.responseCode, 421);
    assert.match(e.message, /4\.3\.2 try again later/);
    await t.sendMail(mail('joe@inbox.test'));
    t.close();
    assert.equal(await stored('joe'), 1);

    await rules({ surface: 'smtp', match: { all: true, stage: 'connect' }, fault: { drop: true }, times: 1 });
    const pool = transport({ pool: true, maxConnections: 1 });
    const info = await pool.sendMail(mail('joe@inbox.test'));
    pool.close();
    assert.match(String(info.response), /^250 /);
    assert.deepEqual(await counters(), [[1, 2]], 'the first connection was dropped, the pool\'s second went through');
    assert.equal(await stored('joe'), 2);
  });

  it('ehlo: the rule answers the greeting command; a 421 ends the session, a 451 makes nodemailer fall back to HELO (a second evaluation)', async () => {
    await rules({ surface: 'smtp', match: { all: true, stage: 'ehlo' }, fault: { reply: { code: 421, text: '4.7.0 not now' } }, times: 1 });
    const t = transport();
    const e = await refused(t.sendMail(mail('joe@inbox.test')));
    assert.equal(e.responseCode, 421);
    await rules({ surface: 'smtp', match: { all: true, stage: 'ehlo' }, fault: { reply: { code: 451, text: '4.7.0 say HELO' } }, times: 1 });
    await t.sendMail(mail('joe@inbox.test'));
    t.close();
    assert.deepEqual(await counters(), [[1, 2]]);
    assert.equal(await stored('joe'), 1);
  });

  it('auth: a 535 for the login reaches nodemailer as EAUTH, and nothing is stored', async () => {
    await rules({ surface: 'smtp', match: { all: true, stage: 'auth' }, fault: { reply: { code: 535, text: '5.7.8 Authentication credentials invalid' } } });
    const t = transport({ auth: { user: 'app', pass: 'secret' } });
    const e = await refused(t.sendMail(mail('joe@inbox.test')));
    t.close();
    assert.equal(e.code, 'EAUTH');
    assert.equal(e.responseCode, 535);
    assert.equal(await stored('joe'), 0);
  });

  it('mail: only the matching sender is refused', async () => {
    await rules({ surface: 'smtp', match: { sender: '*@spammy.test', stage: 'mail' }, fault: { reply: { code: 550, text: '5.7.1 sender refused' } } });
    const t = transport();
    const e = await refused(t.sendMail(mail('joe@inbox.test', 'app@spammy.test')));
    assert.equal(e.responseCode, 550);
    await t.sendMail(mail('joe@inbox.test', 'app@example.com'));
    t.close();
    assert.equal(await stored('joe'), 1);
  });

  it('rcpt: one bad recipient of several gets 550 while the others get their copies', async () => {
    await rules({ surface: 'smtp', match: { recipient: 'ann@inbox.test', stage: 'rcpt' }, fault: { reply: { code: 550, text: '5.1.1 no such user' } } });
    const t = transport();
    const info = await t.sendMail(mail(['joe@inbox.test', 'ann@inbox.test', 'bob@inbox.test']));
    t.close();
    assert.deepEqual(info.rejected, ['ann@inbox.test']);
    assert.deepEqual(info.accepted, ['joe@inbox.test', 'bob@inbox.test']);
    assert.match(String((info.rejectedErrors as SendError[] | undefined)?.[0]?.message), /550 5\.1\.1 no such user/);
    assert.deepEqual([await stored('joe'), await stored('ann'), await stored('bob')], [1, 0, 1]);
  });

  it('rcpt: greylisting answers 451 once; the app\'s retry of the 4xx then delivers, and the counters say so', async () => {
    await rules({ surface: 'smtp', match: { recipient: 'joe@inbox.test', stage: 'rcpt' }, fault: { reply: { code: 451, text: '4.7.1 Greylisted, try again later' } }, times: 1 });
    const t = transport({ pool: true });
    const e = await refused(t.sendMail(mail('joe@inbox.test')));
    assert.equal(e.responseCode, 451);
    assert.equal(await stored('joe'), 0, 'a refused message is not stored');
    await t.sendMail(mail('joe@inbox.test'));
    t.close();
    assert.equal(await stored('joe'), 1);
    assert.deepEqual(await counters(), [[1, 2]]);
  });

  it('data: a drop cuts the connection while the body is sent; a reply refuses the message after its body; neither stores anything', async () => {
    await rules({ surface: 'smtp', match: { recipient: 'joe', stage: 'data' }, fault: { drop: true }, times: 1 });
    const t = transport();
    const dropped = await refused(t.sendMail(mail('joe@inbox.test')));
    assert.equal(dropped.code, 'ECONNECTION');
    await rules({ surface: 'smtp', match: { recipient: 'joe', stage: 'data' }, fault: { reply: { code: 554, text: '5.6.0 content rejected' } }, times: 1 });
    const e = await refused(t.sendMail(mail('joe@inbox.test')));
    assert.equal(e.responseCode, 554);
    assert.equal(await stored('joe'), 0);
    await t.sendMail(mail('joe@inbox.test'));
    t.close();
    assert.equal(await stored('joe'), 1);
  });

  it('on a dual-stack bind (::), an IPv4 client\'s drop at DATA cuts its own connection at once (smtp-server rewrites its address: sockets are found by session)', async () => {
    const v6dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-chaos-smtp-v6-'));
    const dual = await startInboxServer({ host: '::', httpPort: 0, smtpPort: 0, dataDir: v6dir, apiToken: API, webhookToken: WEBHOOK, defaultDomain: 'inbox.test' });
    try {
      const put = await fetch(`http://127.0.0.1:${new URL(dual.httpUrl).port}/api/v2/chaos`, { method: 'PUT', headers: { authorization: API, 'content-type': 'application/json' }, body: JSON.stringify([{ surface: 'smtp', match: { all: true, stage: 'data' }, fault: { drop: true } }]) });
      assert.equal(put.status, 200, await put.text());
      // A socket timeout far beyond the test's: only the drop can end this send.
      const t = nodemailer.createTransport({ host: '127.0.0.1', port: dual.smtpPort, secure: false, socketTimeout: 600_000 });
      const dropped = await refused(t.sendMail(mail('joe@inbox.test')));
      t.close();
      assert.equal(dropped.code, 'ECONNECTION');
    } finally {
      await dual.close();
      await fs.rm(v6dir, { recursive: true, force: true });
    }
  });

  it('a delay holds back the reply: at MAIL before it is answered, at DATA the 250 of a message already stored', async () => {
    await rules({ surface: 'smtp', match: { all: true, stage: 'mail' }, fault: { delay: '800ms' }, times: 1 }, { surface: 'smtp', match: { all: true, stage: 'data' }, fault: { delay: 800 }, times: 1 });
    const t = transport();
    const started = Date.now();
    const info = await t.sendMail(mail('joe@inbox.test'));
    t.close();
    assert.ok(Date.now() - started >= 1_500, `took ${Date.now() - started} ms`);
    assert.match(String(info.response), /^250 OK: stored as/);
    assert.equal(await stored('joe'), 1);
  });

  it('with no rule, mail flows as ever; a rule for another stage or recipient does not touch it', async () => {
    await rules({ surface: 'smtp', match: { recipient: 'ann', stage: 'rcpt' }, fault: { drop: true } }, { surface: 'resend', match: { all: true }, fault: { status: 429 } });
    const t = transport();
    await t.sendMail(mail('joe@inbox.test'));
    await call('DELETE', '/api/v2/chaos');
    await t.sendMail(mail('joe@inbox.test'));
    t.close();
    assert.equal(await stored('joe'), 2);
  });
});
