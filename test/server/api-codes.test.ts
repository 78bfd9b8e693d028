// The code, link and TOTP routes for automated tests: a real HTTP API on port 0, mail sent by
// nodemailer through the real SMTP server into the same store.
import { strict as assert } from 'node:assert';
import nodemailer from 'nodemailer';
import { createSmtpServer, type InboxSmtpServer } from '../../src/server/smtp/smtp';
import { totpAt } from '../../src/core/totp';
import { DOMAIN, type Harness, type Reply, startApi } from './api-harness';

/** RFC 6238's SHA-1 seed "12345678901234567890" in base32. */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

function assertError(r: Reply, status: number, message: RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json?.status, 'error', r.text);
  assert.match(r.json.message, message);
}

describe('HTTP API: code, link and TOTP routes', () => {
  let h: Harness;
  let smtp: InboxSmtpServer;
  let smtpPort: number;

  beforeEach(async () => {
    h = await startApi();
    smtp = createSmtpServer({ store: h.store, host: '127.0.0.1', port: 0 });
    smtpPort = (await smtp.start()).port;
  });

  afterEach(async () => {
    await smtp.stop();
    await h.close();
  });

  async function send(inbox: string, mail: { subject: string; text?: string; html?: string; headers?: Record<string, string> }): Promise<void> {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'Acme <no-reply@acme.test>', to: `${inbox}@${DOMAIN}`, ...mail });
    transport.close();
  }

  const latestId = async (inbox: string): Promise<string> => (await h.store.list(DOMAIN, inbox, { limit: 1, skip: 0, sort: 'descending' })).msgs[0].id;

  describe('code', () => {
    it('answers the newest message with a code, skipping newer ones without', async () => {
      await send('joe', { subject: 'Old code', text: 'Your code is 111111' });
      await send('joe', { subject: 'Your sign-in code', text: 'Your verification code is 482913.' });
      const withCode = (await latestId('joe'));
      await send('joe', { subject: 'Newsletter', text: 'Nothing to see here.' });
      for (const d of ['domains', 'domain']) {
        const r = await h.call('GET', `/api/v2/${d}/private/inboxes/joe/code`);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(Object.keys(r.json).sort(), ['code', 'from', 'id', 'subject', 'time']);
        assert.equal(r.json.code, '482913');
        assert.equal(r.json.id, withCode);
        assert.equal(r.json.subject, 'Your sign-in code');
        assert.equal(r.json.from, 'Acme <no-reply@acme.test>');
      }
    });

    it('never answers a message at or before since (a time in ms or a message id)', async () => {
      await send('ann', { subject: 'Code', text: 'Your code is 111111' });
      const first = (await h.store.get((await latestId('ann'))))!;
      const byId = await h.call('GET', `/api/v2/domains/private/inboxes/ann/code?since=${first.id}`);
      assertError(byId, 404, /no message with a one-time code in inbox ann@private after message /);
      const byTime = await h.call('GET', `/api/v2/domains/private/inboxes/ann/code?since=${first.time}`);
      assertError(byTime, 404, /one-time code in inbox ann@private after .*Z \(since=[0-9]+\)$/);
      const before = await h.call('GET', `/api/v2/domains/private/inboxes/ann/code?since=${first.time - 1}`);
      assert.equal(before.json.code, '111111');
    });

    it('a since id whose message was consumed by delete=true still marks its point in time', async () => {
      // Two messages, most likely in one second: the order within it comes from the ids.
      await send('cal', { subject: 'Code', text: 'Your code is 333333' });
      await send('cal', { subject: 'Code', text: 'Your code is 444444' });
      const taken = await h.call('GET', '/api/v2/domains/private/inboxes/cal/code?delete=true');
      assert.equal(taken.json.code, '444444', taken.text);
      assert.equal(await h.store.get(taken.json.id), undefined, 'consumed');
      const none = await h.call('GET', `/api/v2/domains/private/inboxes/cal/code?since=${taken.json.id}`);
      assertError(none, 404, new RegExp(`no message with a one-time code in inbox cal@private after message ${taken.json.id} \\(no longer stored\\)$`));
      await send('cal', { subject: 'Code', text: 'Your code is 555555' });
      const next = await h.call('GET', `/api/v2/domains/private/inboxes/cal/code?since=${taken.json.id}`);
      assert.equal(next.status, 200, next.text);
      assert.equal(next.json.code, '555555');
      // The consumed id of another inbox is still not a point of this one.
      assertError(await h.call('GET', `/api/v2/domains/private/inboxes/ann/code?since=${taken.json.id}`), 400, /neither a time in milliseconds nor the id of a message in inbox ann/);
    });

    it('waits for a code sent by SMTP after since, ignoring mail without one and other inboxes', async () => {
      await send('kim', { subject: 'Old', text: 'Your code is 111111' });
      const since = (await latestId('kim'));
      const waiting = h.call('GET', `/api/v2/domains/private/inboxes/kim/code?since=${since}&wait=30s`);
      await new Promise((r) => setTimeout(r, 150));
      await send('kim', { subject: 'Welcome', text: 'No code in this one.' });
      await send('other', { subject: 'Code', text: 'Your code is 999999' });
      await send('kim', { subject: 'Your code', text: 'Use 735201 to sign in.' });
      const r = await waiting;
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.code, '735201');
      assert.notEqual(r.json.id, since);
    });

    it('ends a wait on an empty inbox with 404 when nothing arrives', async () => {
      const started = Date.now();
      const r = await h.call('GET', '/api/v2/domains/private/inboxes/nobody/code?wait=300ms');
      assertError(r, 404, /^no message with a one-time code in inbox nobody@private \(waited 0\.3 s\)$/);
      assert.ok(Date.now() - started >= 250);
    });

    it('delete=true removes the message, so a second run cannot read the same code', async () => {
      await send('once', { subject: 'Code', text: 'Your code is 246810' });
      const id = (await latestId('once'));
      const both = await Promise.all([
        h.call('GET', '/api/v2/domains/private/inboxes/once/code?delete=true'),
        h.call('GET', '/api/v2/domains/private/inboxes/once/code?delete=true'),
      ]);
      assert.deepEqual(both.map((r) => r.status).sort(), [200, 404]);
      assert.equal(both.find((r) => r.status === 200)!.json.code, '246810');
      assert.equal(await h.store.get(id), undefined);
    });
  });

  describe('link', () => {
    const html = (verify: string) =>
      `<p>Welcome!</p><a href="https://shop.test/help">Help</a> <a href="https://click.shop.test/ls/click?upn=${verify}">Bestätigen Sie Ihre E-Mail-Adresse</a> <a href="https://shop.test/reset-password?t=9">Reset password</a>`;

    it('answers the first link of the asked kind with its text, through a click tracker', async () => {
      await send('lee', { subject: 'Bitte bestätigen', html: html('AAA'), headers: { 'List-Unsubscribe': '<https://shop.test/u/1>' } });
      const id = (await latestId('lee'));
      const verify = await h.call('GET', '/api/v2/domains/private/inboxes/lee/link?kind=verify');
      assert.equal(verify.status, 200, verify.text);
      assert.deepEqual(verify.json, {
        url: 'https://click.shop.test/ls/click?upn=AAA',
        kind: 'verify-email',
        text: 'Bestätigen Sie Ihre E-Mail-Adresse',
        id,
        time: (await h.store.get(id))!.time,
        subject: 'Bitte bestätigen',
        from: 'Acme <no-reply@acme.test>',
      });
      const any = await h.call('GET', '/api/v2/domains/private/inboxes/lee/link');
      assert.equal(any.json.kind, 'verify-email');
      const reset = await h.call('GET', '/api/v2/domains/private/inboxes/lee/link?kind=reset');
      assert.equal(reset.json.url, 'https://shop.test/reset-password?t=9');
      assertError(await h.call('GET', '/api/v2/domains/private/inboxes/lee/link?kind=login'), 404, /no message with a magic-login link/);
    });

    it('waits for a link after since and deletes its message with delete=true', async () => {
      await send('mia', { subject: 'First', html: html('OLD') });
      const since = (await h.store.get((await latestId('mia'))))!.time;
      const waiting = h.call('GET', `/api/v2/domains/private/inboxes/mia/link?kind=verify&since=${since}&wait=1m&delete=true`);
      await new Promise((r) => setTimeout(r, 150));
      await send('mia', { subject: 'Second', html: html('NEW') });
      const r = await waiting;
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.url, 'https://click.shop.test/ls/click?upn=NEW');
      assert.equal(await h.store.get(r.json.id), undefined);
      assert.equal((await h.store.list(DOMAIN, 'mia', { limit: 10, skip: 0, sort: 'descending' })).msgs.length, 1);
    });
  });

  describe('totp', () => {
    it('answers the current code and seconds left, with the defaults and with options', async () => {
      const r = await h.call('GET', `/api/v2/totp/${RFC_SECRET}`);
      assert.equal(r.status, 200, r.text);
      assert.match(r.json.code, /^[0-9]{6}$/);
      assert.ok(r.json.seconds_left >= 1 && r.json.seconds_left <= 30);
      // The code of now or of the neighbouring step (the request may cross a boundary).
      const near = [-30_000, 0, 30_000].map((d) => totpAt(RFC_SECRET, { digits: 6, algorithm: 'SHA1', period: 30 }, Date.now() + d).code);
      assert.ok(near.includes(r.json.code));
      const eight = await h.call('GET', `/api/v2/totp/${RFC_SECRET}?digits=8&algorithm=SHA512&period=60`);
      assert.match(eight.json.code, /^[0-9]{8}$/);
      assert.ok(eight.json.seconds_left >= 1 && eight.json.seconds_left <= 60);
    });

    it('needs the API token', async () => {
      assert.equal((await h.call('GET', `/api/v2/totp/${RFC_SECRET}`, { anonymous: true })).status, 401);
    });
  });

  it('refuses bad input with 400 naming the problem', async () => {
    await send('joe', { subject: 'x', text: 'Your code is 123456' });
    const cases: Array<[string, RegExp]> = [
      ['/api/v2/domains/private/inboxes/.bad/code', /bad inbox ".bad"/],
      ['/api/v2/domains/private/inboxes/*/code', /name one inbox/],
      ['/api/v2/domains/private/inboxes/joe/code?wait=forever', /wait must be a number of seconds/],
      ['/api/v2/domains/private/inboxes/joe/link?wait=5x', /wait must be a number of seconds/],
      ['/api/v2/domains/private/inboxes/joe/code?since=yesterday', /since "yesterday" is neither a time in milliseconds nor the id of a message in inbox joe/],
      [`/api/v2/domains/private/inboxes/ann/code?since=${(await latestId('joe'))}`, /neither a time in milliseconds nor the id of a message in inbox ann/],
      ['/api/v2/domains/private/inboxes/joe/code?delete=maybe', /delete must be true or false/],
      ['/api/v2/domains/private/inboxes/joe/link?kind=shop', /kind must be one of verify, reset, login, any/],
      ['/api/v2/totp/NOT-BASE32!', /bad base32 secret: "!" is not a base32 character/],
      ['/api/v2/totp/ABC', /bad base32 secret: .*not a whole number of bytes/],
      [`/api/v2/totp/${RFC_SECRET}?digits=4`, /digits must be a whole number from 6 to 8/],
      [`/api/v2/totp/${RFC_SECRET}?algorithm=MD5`, /algorithm must be one of SHA1, SHA256, SHA512/],
    ];
    for (const [target, message] of cases) assertError(await h.call('GET', target), 400, message);
    const post = await h.call('POST', '/api/v2/domains/private/inboxes/joe/code', { body: {} });
    assert.equal(post.status, 405);
  });

  describe('since after retention', () => {
    let kept: Harness;
    beforeEach(async () => {
      kept = await startApi({}, { maxMessages: 1 });
    });
    afterEach(async () => {
      await kept.close();
    });

    it('a since id whose message retention removed still marks its point in time', async () => {
      const mail = (code: string): Buffer => Buffer.from(`From: a@acme.test\r\nTo: ret@${DOMAIN}\r\nSubject: Code\r\n\r\nYour code is ${code}\r\n`);
      const first = await kept.deliver('ret', mail('666666'));
      await kept.deliver('ret', mail('777777'));
      // The Maildir store applies retention as it adds; PostgreSQL in its sweep.
      for (let i = 0; i < 300 && (await kept.store.get(first.id)) !== undefined; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await kept.store.get(first.id), undefined, 'retention removed the first message');
      const r = await kept.call('GET', `/api/v2/domains/private/inboxes/ret/code?since=${first.id}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.code, '777777');
    });
  });
});
