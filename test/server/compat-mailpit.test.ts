// Mailpit's API v1 on the drop-in (`serve --compat`, docs/compat.md), driven by the real
// `mailpit-api` client, unchanged but for the address, and by the hand-written pattern of
// suites on the Supabase local stack (plain fetch: search, then the message by ID).
import assert from 'node:assert/strict';
import { MailpitClient } from 'mailpit-api';
import { type CompatServer, startCompat } from './compat-harness';

describe('compat: Mailpit v1 with the real mailpit-api client', function () {
  this.timeout(60_000);
  let s: CompatServer;
  let mailpit: MailpitClient;

  before(async () => {
    s = await startCompat();
    mailpit = new MailpitClient(s.base);
  });
  after(async () => {
    await s?.close();
  });
  beforeEach(async () => {
    await mailpit.deleteMessages();
  });

  it('getInfo answers in Mailpit\'s shape', async () => {
    await s.send({ to: 'ann@inbox.test', subject: 'info', text: 'x' });
    const info = await mailpit.getInfo();
    assert.equal(info.Messages, 1);
    assert.equal(info.Unread, 1);
    assert.equal(typeof info.Version, 'string');
  });

  it('listMessages: newest first, Mailpit\'s summary fields, Attachments a number, the legacy count', async () => {
    await s.send({ to: 'Ann <ann@inbox.test>', cc: 'carl@inbox.test', subject: 'first', text: 'one' });
    await s.send({ to: 'ann@inbox.test', subject: 'second', text: 'two', attachments: [{ filename: 'a.txt', content: 'hello' }] });
    const list = await mailpit.listMessages();
    // two recipients of the first: one copy per inbox, each its own message
    assert.equal(list.total, 3);
    assert.equal(list.messages_count, 3);
    assert.equal((list as unknown as { count: number }).count, 3);
    assert.equal(list.start, 0);
    assert.deepEqual(list.tags, []);
    const [newest] = list.messages;
    assert.equal(newest.Subject, 'second');
    assert.equal(newest.Attachments, 1);
    assert.equal(newest.Read, false);
    assert.deepEqual(newest.From, { Name: 'Sender Person', Address: 'sender@example.com' });
    assert.deepEqual(newest.To, [{ Name: '', Address: 'ann@inbox.test' }]);
    assert.deepEqual(newest.Cc, []);
    assert.deepEqual(newest.Tags, []);
    assert.match(newest.ID, /^[a-z0-9._~-]+$/i);
    assert.ok(!Number.isNaN(Date.parse(newest.Created)));
    const older = list.messages.find((m) => m.Subject === 'first')!;
    assert.equal(older.Attachments, 0);
    assert.deepEqual(older.Cc, [{ Name: '', Address: 'carl@inbox.test' }]);
    const page = await mailpit.listMessages(1, 1);
    assert.equal(page.messages.length, 1);
    assert.equal(page.start, 1);
  });

  it('getMessageSummary (by ID and latest), headers, source, attachment, HTML and text views', async () => {
    await s.send({ to: 'bob@inbox.test', subject: 'Your code', text: 'code 123456', html: '<p>code <b>123456</b></p><script>alert(1)</script>', messageId: '<m1@example.com>', attachments: [{ filename: 'a.txt', content: 'hello' }, { filename: 'p.png', content: Buffer.from('89504e47', 'hex'), contentType: 'image/png' }] });
    const latest = await mailpit.getMessageSummary();
    assert.equal(latest.Subject, 'Your code');
    assert.equal(latest.MessageID, 'm1@example.com');
    assert.match(latest.Text, /code 123456/);
    assert.match(latest.HTML, /<b>123456<\/b>/);
    assert.equal(latest.Attachments.length, 2);
    assert.deepEqual(latest.Inline, []);
    assert.deepEqual(latest.Tags, []);
    const byId = await mailpit.getMessageSummary(latest.ID);
    assert.equal(byId.ID, latest.ID);
    const headers = await mailpit.getMessageHeaders(latest.ID);
    assert.deepEqual(headers['Message-Id'], ['<m1@example.com>']);
    assert.deepEqual(headers.Subject, ['Your code']);
    const source = await mailpit.getMessageSource(latest.ID);
    assert.match(source, /Subject: Your code/);
    const txt = latest.Attachments.find((a) => a.FileName === 'a.txt')!;
    const blob = await mailpit.getMessageAttachment(latest.ID, txt.PartID);
    assert.equal(await blob.text(), 'hello');
    const html = await mailpit.renderMessageHTML(latest.ID);
    assert.match(html, /<b>123456<\/b>/);
    const text = await mailpit.renderMessageText(latest.ID);
    assert.match(text, /code 123456/);
  });

  it('a message with HTML alone has a Text made from its HTML, as Mailpit gives (a suite reads its code there)', async () => {
    await s.send({ to: 'bob@inbox.test', subject: 'html only', html: '<p>Your code is <b>654321</b></p>' });
    const m = await mailpit.getMessageSummary();
    assert.match(m.Text, /Your code is 654321/);
    assert.match(await mailpit.renderMessageText(m.ID), /Your code is 654321/);
  });

  it('/view and /part carry the message view\'s policy: sandbox, nosniff; parts other than images are attachments', async () => {
    await s.send({ to: 'bob@inbox.test', subject: 'v', html: '<p>hi</p>', attachments: [{ filename: 'a.html', content: '<script>1</script>', contentType: 'text/html' }, { filename: 'p.png', content: Buffer.from('89504e47', 'hex'), contentType: 'image/png' }] });
    const m = await mailpit.getMessageSummary();
    const view = await fetch(`${s.base}/view/${m.ID}.html`);
    assert.equal(view.status, 200);
    assert.equal(view.headers.get('content-security-policy'), 'sandbox');
    assert.equal(view.headers.get('x-content-type-options'), 'nosniff');
    const htmlPart = m.Attachments.find((a) => a.FileName === 'a.html')!;
    const part = await fetch(`${s.base}/api/v1/message/${m.ID}/part/${htmlPart.PartID}`);
    assert.equal(part.status, 200);
    assert.match(part.headers.get('content-disposition') ?? '', /^attachment;/);
    assert.equal(part.headers.get('content-security-policy'), 'sandbox');
    assert.equal(part.headers.get('x-content-type-options'), 'nosniff');
    const png = m.Attachments.find((a) => a.FileName === 'p.png') ?? m.Inline.find((a) => a.FileName === 'p.png')!;
    const img = await fetch(`${s.base}/api/v1/message/${m.ID}/part/${png.PartID}`);
    assert.match(img.headers.get('content-disposition') ?? '', /^inline;/);
    assert.equal(img.headers.get('content-type'), 'image/png');
  });

  it('reading a message marks it read; setReadStatus sets marks; is:read and is:unread search them', async () => {
    await s.send({ to: 'cat@inbox.test', subject: 'one', text: 'a' });
    await s.send({ to: 'cat@inbox.test', subject: 'two', text: 'b' });
    const list = await mailpit.listMessages();
    const two = list.messages[0];
    await mailpit.getMessageSummary(two.ID);
    assert.equal((await mailpit.searchMessages({ query: 'is:read' })).messages_count, 1);
    const byAddress = await mailpit.searchMessages({ query: 'to:cat' });
    assert.equal(byAddress.messages_count, 2);
    assert.equal((byAddress as unknown as { messages_unread: number }).messages_unread, 1);
    assert.equal(byAddress.unread, 1);
    assert.equal((await mailpit.searchMessages({ query: 'is:unread' })).messages[0].Subject, 'one');
    assert.equal(await mailpit.setReadStatus({ IDs: [two.ID], Read: false }), 'ok');
    assert.equal((await mailpit.searchMessages({ query: 'is:read' })).messages_count, 0);
    await mailpit.setReadStatus({ Read: true });
    assert.equal((await mailpit.listMessages()).unread, 0);
    await mailpit.setReadStatus({ Search: 'subject:one', Read: false });
    assert.equal((await mailpit.listMessages()).unread, 1);
  });

  it('searchMessages maps Mailpit\'s query syntax onto the one search core', async () => {
    await s.send({ to: 'dan@inbox.test', subject: 'Welcome aboard', text: 'hello there' });
    await s.send({ from: 'other@sender.example', to: 'eve@inbox.test', subject: 'Reset your password', text: 'click', attachments: [{ filename: 'x.txt', content: 'x' }] });
    const q = async (query: string): Promise<string[]> => (await mailpit.searchMessages({ query })).messages.map((m) => m.Subject);
    assert.deepEqual(await q('to:dan@inbox.test'), ['Welcome aboard']);
    assert.deepEqual(await q('to:eve'), ['Reset your password']);
    assert.deepEqual(await q('from:other@sender'), ['Reset your password']);
    assert.deepEqual(await q('subject:"your password"'), ['Reset your password']);
    assert.deepEqual(await q('has:attachment'), ['Reset your password']);
    assert.deepEqual(await q('hello'), ['Welcome aboard']);
    assert.deepEqual(await q('"hello there"'), ['Welcome aboard']);
    assert.deepEqual(await q('-subject:welcome'), ['Reset your password']);
    assert.deepEqual(await q('nothing-like-this'), []);
    await assert.rejects(mailpit.searchMessages({ query: 'tag:x' }), /400/);
  });

  it('waitForMessage and waitForMessages: found, and their time-out', async () => {
    setTimeout(() => void s.send({ to: 'fay@inbox.test', subject: 'later', text: 'x' }), 300);
    const m = await mailpit.waitForMessage({ query: 'to:fay@inbox.test' }, { timeout: 10_000, interval: 100 });
    assert.equal(m.Subject, 'later');
    const many = await mailpit.waitForMessages({ query: 'to:fay', count: 1 }, { timeout: 5_000, interval: 100 });
    assert.equal(many.messages_count, 1);
    await assert.rejects(mailpit.waitForMessage({ query: 'to:nobody-here' }, { timeout: 400, interval: 100 }), /Timeout waiting/);
    await assert.rejects(mailpit.waitForMessages({ count: 5 }, { timeout: 400, interval: 100 }), /Timeout waiting/);
  });

  it('latest takes ?query=', async () => {
    await s.send({ to: 'gus@inbox.test', subject: 'for gus', text: 'x' });
    await s.send({ to: 'hal@inbox.test', subject: 'for hal', text: 'x' });
    const r = await fetch(`${s.base}/api/v1/message/latest?query=${encodeURIComponent('to:gus')}`);
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { Subject: string }).Subject, 'for gus');
  });

  it('deleteMessages by IDs, deleteMessagesBySearch, deleteMessages all', async () => {
    await s.send({ to: 'ida@inbox.test', subject: 'a', text: 'x' });
    await s.send({ to: 'ida@inbox.test', subject: 'b', text: 'x' });
    await s.send({ to: 'jon@inbox.test', subject: 'c', text: 'x' });
    const list = await mailpit.listMessages();
    const a = list.messages.find((m) => m.Subject === 'a')!;
    assert.equal(await mailpit.deleteMessages({ IDs: [a.ID] }), 'ok');
    assert.deepEqual((await mailpit.listMessages()).messages.map((m) => m.Subject).sort(), ['b', 'c']);
    assert.equal(await mailpit.deleteMessagesBySearch({ query: 'to:jon' }), 'ok');
    assert.deepEqual((await mailpit.listMessages()).messages.map((m) => m.Subject), ['b']);
    await mailpit.deleteMessages();
    assert.equal((await mailpit.listMessages()).total, 0);
  });

  it('error paths: unknown IDs, latest of nothing, a bad part, a malformed body are Mailpit\'s plain-text errors', async () => {
    await assert.rejects(mailpit.getMessageSummary('nobody-1-1'), /404/);
    await assert.rejects(mailpit.getMessageSummary(), /404/);
    await assert.rejects(mailpit.getMessageHeaders('zzz'), /404/);
    await assert.rejects(mailpit.getMessageSource('zzz'), /404/);
    await assert.rejects(mailpit.renderMessageHTML('zzz'), /404/);
    await s.send({ to: 'kim@inbox.test', subject: 'k', text: 'x' });
    const m = await mailpit.getMessageSummary();
    await assert.rejects(mailpit.getMessageAttachment(m.ID, '9'), /404/);
    await assert.rejects(mailpit.renderMessageHTML(m.ID), /404/);
    const bad = await fetch(`${s.base}/api/v1/messages`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: '{"IDs": 5}' });
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal((await mailpit.listMessages()).total, 1, 'nothing deleted');
  });

  it('the hand-written pattern: GET /api/v1/search?query=to:<address>, then GET /api/v1/message/<ID>', async () => {
    await s.send({ to: 'user+signup@inbox.test', subject: 'Confirm your signup', html: '<a href="http://localhost:3000/auth/v1/verify?token=abc">Confirm</a>' });
    const search = await fetch(`${s.base}/api/v1/search?query=${encodeURIComponent('to:user+signup@inbox.test')}`);
    assert.equal(search.status, 200);
    const body = (await search.json()) as { messages: Array<{ ID: string }> };
    assert.equal(body.messages.length, 1);
    const msg = await fetch(`${s.base}/api/v1/message/${body.messages[0].ID}`);
    assert.equal(msg.status, 200);
    const full = (await msg.json()) as { HTML: string; Subject: string };
    assert.equal(full.Subject, 'Confirm your signup');
    assert.match(full.HTML, /verify\?token=abc/);
  });
});
