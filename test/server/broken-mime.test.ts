// Broken or hostile MIME never gives 500: a message nested deeper than the
// parser's limit, or one the parser throws on, is answered 200 by every read view with what
// could be read and a notice; raw always has the whole message.
import assert from 'node:assert/strict';
import { startApi, type Harness } from './api-harness';

/** A message whose multiparts nest `depth` levels deep, with a link and a code in the innermost text. */
function nested(depth: number): Buffer {
  let body = 'Content-Type: text/plain; charset=utf-8\r\n\r\nYour code is 918273. https://deep.test/verify\r\n';
  for (let i = depth; i > 0; i--) {
    body = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${body}\r\n--b${i}--\r\n`;
  }
  return Buffer.from(`From: Deep <deep@sender.test>\r\nTo: joe@inbox.test\r\nSubject: nested deep\r\nMIME-Version: 1.0\r\n${body}`);
}

describe('broken or hostile MIME', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(async () => {
    await h.close();
  });

  it('answers every read view of a message nested 65 multiparts deep with 200, what could be read and a notice', async () => {
    const raw = nested(65);
    const meta = await h.deliver('joe', raw);
    const base = `/api/v2/domains/private/inboxes/joe/messages/${meta.id}`;
    const message = await h.call('GET', base);
    assert.equal(message.status, 200, message.text);
    assert.equal(message.json.subject, 'nested deep');
    assert.equal(message.json.headers.from, 'Deep <deep@sender.test>');
    assert.match(message.json.notice, /could not be read in full \(Maximum MIME nesting depth of 64 levels exceeded\)/);
    assert.match(message.json.parts[0].body, /Your code is 918273/);
    const links = await h.call('GET', `${base}/links`);
    assert.equal(links.status, 200, links.text);
    assert.deepEqual(links.json.links, ['https://deep.test/verify']);
    assert.match(links.json.notice, /could not be read in full/);
    const attachments = await h.call('GET', `${base}/attachments`);
    assert.equal(attachments.status, 200, attachments.text);
    assert.deepEqual(attachments.json.attachments, []);
    assert.match(attachments.json.notice, /could not be read in full/);
    const one = await h.call('GET', `${base}/attachments/0`);
    assert.equal(one.status, 404);
    assert.match(one.json.message, /no readable attachment 0: the message could not be read in full/);
    const rawReply = await h.call('GET', `${base}/raw`);
    assert.equal(rawReply.status, 200);
    assert.deepEqual(rawReply.bytes, raw);
    const code = await h.call('GET', '/api/v2/domains/private/inboxes/joe/link');
    assert.notEqual(code.status, 500, code.text);
  });

  it('reads a message nested 64 deep in full, without a notice', async () => {
    const meta = await h.deliver('joe', nested(60));
    const message = await h.call('GET', `/api/v2/domains/private/inboxes/joe/messages/${meta.id}`);
    assert.equal(message.status, 200, message.text);
    assert.equal(message.json.notice, undefined);
    assert.match(message.json.parts[0].body, /Your code is 918273/);
  });

  it('answers 200 with a notice for a header block the parser refuses, and raw still works', async () => {
    const raw = Buffer.from(`From: a@b.test\r\nSubject: huge header\r\nX-Big: ${'x'.repeat(2 * 1024 * 1024)}\r\n\r\nbody text https://still.test/x\r\n`);
    const meta = await h.deliver('joe', raw);
    const base = `/api/v2/domains/private/inboxes/joe/messages/${meta.id}`;
    for (const view of ['', '/links', '/attachments']) {
      const r = await h.call('GET', `${base}${view}`);
      assert.equal(r.status, 200, `${view}: ${r.text.slice(0, 300)}`);
    }
    assert.deepEqual((await h.call('GET', `${base}/raw`)).bytes, raw);
  });
});
