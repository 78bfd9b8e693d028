// Inbucket's API v1 on the drop-in (`serve --compat`, docs/compat.md), driven by the real
// `inbucket-js-client`, unchanged but for the address.
import assert from 'node:assert/strict';
import { InbucketAPIClient } from 'inbucket-js-client';
import { type CompatServer, startCompat } from './compat-harness';

describe('compat: Inbucket with the real inbucket-js-client', function () {
  this.timeout(60_000);
  let s: CompatServer;
  let ib: InbucketAPIClient;

  before(async () => {
    s = await startCompat();
    ib = new InbucketAPIClient(s.base);
  });
  after(async () => {
    await s?.close();
  });
  beforeEach(async () => {
    await fetch(`${s.base}/api/v1/messages`, { method: 'DELETE' });
  });

  it('mailbox: the local part, lower-cased, without +tag, across every domain, oldest first; a full address names the same', async () => {
    await s.send({ to: 'Ann@inbox.test', subject: 'first', text: 'x' });
    await s.send({ to: 'ann+tag@other.test', subject: 'second', text: 'x' });
    await s.send({ to: 'bob@inbox.test', subject: 'not ann', text: 'x' });
    const box = await ib.mailbox('ann');
    assert.deepEqual(box.map((m) => m.subject), ['first', 'second']);
    assert.equal(box[0].mailbox, 'ann');
    assert.equal(box[0].from, 'Sender Person <sender@example.com>');
    assert.equal(typeof box[0].size, 'number');
    assert.ok(!Number.isNaN(Date.parse(box[0].date)));
    assert.deepEqual((await ib.mailbox('ANN@whatever.test')).map((m) => m.subject), ['first', 'second']);
    assert.deepEqual((await ib.mailbox('ann+other@inbox.test')).map((m) => m.subject), ['first', 'second']);
  });

  it('an empty or unknown mailbox is [], never 404', async () => {
    assert.deepEqual(await ib.mailbox('nobody'), []);
  });

  it('message: header, body, attachments with md5; reading marks it seen', async () => {
    await s.send({ to: 'cat@inbox.test', subject: 'Your code', text: 'code 424242', html: '<p>code 424242</p>', attachments: [{ filename: 'a.txt', content: 'hello' }] });
    const [head] = await ib.mailbox('cat');
    assert.equal((head as unknown as { seen: boolean }).seen, false);
    const m = await ib.message('cat', head.id);
    assert.equal(m.subject, 'Your code');
    assert.match(m.body.text, /code 424242/);
    assert.match(m.body.html, /<p>code 424242<\/p>/);
    assert.deepEqual(m.header.Subject, ['Your code']);
    assert.equal(m.attachments.length, 1);
    assert.equal(m.attachments[0].filename, 'a.txt');
    assert.equal(m.attachments[0].md5, '5d41402abc4b2a76b9719d911017c592');
    const dl = await fetch(m.attachments[0]['download-link']);
    assert.equal(await dl.text(), 'hello');
    const [again] = await ib.mailbox('cat');
    assert.equal((again as unknown as { seen: boolean }).seen, true);
  });

  it('messageSource: the raw message as text, as Inbucket sends it (so the client, which parses JSON, rejects it as it does with Inbucket)', async () => {
    await s.send({ to: 'dan@inbox.test', subject: 'src', text: 'x' });
    const [head] = await ib.mailbox('dan');
    const raw = await fetch(`${s.base}/api/v1/mailbox/dan/${head.id}/source`);
    assert.equal(raw.status, 200);
    assert.match(await raw.text(), /Subject: src/);
    await assert.rejects(ib.messageSource('dan', head.id), SyntaxError);
  });

  it('deleteMessage and purgeMailbox answer "OK"; the others stay', async () => {
    await s.send({ to: 'eve@inbox.test', subject: 'a', text: 'x' });
    await s.send({ to: 'eve@inbox.test', subject: 'b', text: 'x' });
    await s.send({ to: 'fay@inbox.test', subject: 'c', text: 'x' });
    const [a] = await ib.mailbox('eve');
    assert.equal(await ib.deleteMessage('eve', a.id), 'OK');
    assert.deepEqual((await ib.mailbox('eve')).map((m) => m.subject), ['b']);
    assert.equal(await ib.purgeMailbox('eve'), 'OK');
    assert.deepEqual(await ib.mailbox('eve'), []);
    assert.equal((await ib.mailbox('fay')).length, 1);
  });

  it('error paths: an unknown ID, and a message of another mailbox, are 404', async () => {
    await s.send({ to: 'gus@inbox.test', subject: 'g', text: 'x' });
    const [g] = await ib.mailbox('gus');
    await assert.rejects(ib.message('gus', 'nobody-1-1'), /request error: 404/);
    await assert.rejects(ib.message('hal', g.id), /request error: 404/);
    await assert.rejects(ib.deleteMessage('hal', g.id), /request error: 404/);
    await assert.rejects(ib.message('gus', '%zz'), /request error: 400/);
    assert.equal((await ib.mailbox('gus')).length, 1);
  });
});
