// MailHog's API on the drop-in (`serve --compat`, docs/compat.md), driven by the real
// `mailhog` client, unchanged but for the address (host and port).
import assert from 'node:assert/strict';
import type http from 'node:http';
import mailhogClient from 'mailhog';
import { type CompatServer, startCompat } from './compat-harness';

/** What a MailHog item carries beyond the client's declared type (MailHog's envelope paths and Raw). */
interface Envelope {
  From: { Relays: null; Mailbox: string; Domain: string; Params: string };
  To: Array<{ Mailbox: string; Domain: string }>;
  Raw: { From: string; To: string[]; Data: string };
}

describe('compat: MailHog with the real mailhog client', function () {
  this.timeout(60_000);
  let s: CompatServer;
  let mh: ReturnType<typeof mailhogClient>;

  before(async () => {
    s = await startCompat();
    mh = mailhogClient({ host: '127.0.0.1', port: s.server.httpPort });
  });
  after(async () => {
    await s?.close();
  });
  beforeEach(async () => {
    await mh.deleteAll();
  });

  it('messages: {total, count, start, items}, newest first; the client decodes text, html, headers and attachments itself', async () => {
    await s.send({ to: 'ann@inbox.test', subject: 'Grüße', text: 'plain ünïcode', html: '<p>html body</p>', cc: 'cc@inbox.test' });
    await s.send({ to: 'ann@inbox.test', subject: 'second', text: 'two', attachments: [{ filename: 'a.txt', content: 'hello' }] });
    const r = await mh.messages();
    assert.ok(r);
    assert.equal(r.total, 3);
    assert.equal(r.count, 3);
    assert.equal(r.start, 0);
    assert.equal(r.items[0].subject, 'second');
    const first = r.items.find((m) => m.subject === 'Grüße' && (m as unknown as Envelope).Raw.To[0] === 'ann@inbox.test')!;
    assert.ok(first, 'the encoded subject is decoded by the client');
    assert.equal(first.text.trim(), 'plain ünïcode');
    assert.equal(first.html.trim(), '<p>html body</p>');
    assert.equal(first.from, 'Sender Person <sender@example.com>');
    assert.equal(first.to, 'ann@inbox.test');
    assert.equal(first.cc, 'cc@inbox.test');
    assert.ok(first.date instanceof Date && !Number.isNaN(first.date.getTime()));
    assert.ok(!Number.isNaN(first.deliveryDate.getTime()));
    assert.deepEqual((first as unknown as Envelope).From, { Relays: null, Mailbox: 'sender', Domain: 'example.com', Params: '' });
    assert.equal((first as unknown as Envelope).To[0].Mailbox, 'ann');
    assert.match((first as unknown as Envelope).Raw.Data, /^[\s\S]*Subject: =\?/);
    const second = r.items[0];
    assert.equal(second.attachments.length, 1);
    assert.equal(second.attachments[0].name, 'a.txt');
    assert.equal(mh.decode(second.attachments[0].Body, second.attachments[0].encoding), 'hello');
    const page = await mh.messages(1, 1);
    assert.equal(page!.count, 1);
    assert.equal(page!.start, 1);
  });

  it('search by from, to and containing; latestFrom, latestTo, latestContaining', async () => {
    await s.send({ to: 'bob@inbox.test', subject: 'for bob', text: 'secret words here' });
    await s.send({ from: 'other@elsewhere.example', to: 'cat@inbox.test', subject: 'for cat', text: 'nothing' });
    assert.equal((await mh.search('bob@inbox.test', 'to'))!.count, 1);
    assert.equal((await mh.search('other@elsewhere', 'from'))!.items[0].subject, 'for cat');
    assert.equal((await mh.search('secret words'))!.items[0].subject, 'for bob');
    assert.equal((await mh.latestTo('cat@inbox.test'))!.subject, 'for cat');
    assert.equal((await mh.latestFrom('sender@example.com'))!.subject, 'for bob');
    assert.equal((await mh.latestContaining('secret'))!.subject, 'for bob');
    // nothing found: the client resolves 0 (count 0), as with MailHog
    assert.equal(await mh.latestTo('nobody@inbox.test'), 0);
  });

  it('deleteMessage and deleteAll; an unknown ID is a 404 with no body', async () => {
    await s.send({ to: 'dan@inbox.test', subject: 'a', text: 'x' });
    await s.send({ to: 'dan@inbox.test', subject: 'b', text: 'x' });
    const r = await mh.messages();
    const res = (await mh.deleteMessage(r!.items[0].ID)) as http.IncomingMessage;
    assert.equal(res.statusCode, 200);
    assert.equal((await mh.messages())!.total, 1);
    const gone = (await mh.deleteMessage(r!.items[0].ID)) as http.IncomingMessage;
    assert.equal(gone.statusCode, 404);
    const all = (await mh.deleteAll()) as http.IncomingMessage;
    assert.equal(all.statusCode, 200);
    assert.equal((await mh.messages())!.total, 0);
  });

  it('a bad kind is 400; /api/v2/search without kind stays Test Inbox\'s own search', async () => {
    const bad = await fetch(`${s.base}/api/v2/search?kind=subject&query=x`);
    assert.equal(bad.status, 400);
    const own = await fetch(`${s.base}/api/v2/search?q=x`);
    assert.equal(own.status, 401, 'Test Inbox\'s own search still wants its token');
  });
});
