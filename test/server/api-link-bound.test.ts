// The link route over an inbox full of newsletters. The work of one request
// is bounded (at most MAX_LINK_PARSES of the messages it found are read and parsed), and it
// stops when the client leaves: the test closes the client mid-request and counts the parses
// (linkScanCounters, bumped as each message is handed to the parser), never a time.
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { linkScanCounters, MAX_LINK_PARSES } from '../../src/server/http/api/latest';
import { API_TOKEN, DOMAIN, type Harness, startApi } from './api-harness';

/** A newsletter with many links and none to click: each takes the parser a while. */
function newsletter(i: number): Buffer {
  const links = Array.from({ length: 1500 }, (_, k) => `<a href="https://news.test/article/${i}/${k}">Article ${k} of issue ${i}</a>`).join('\n');
  return Buffer.from(`From: news@news.test\r\nTo: reader@${DOMAIN}\r\nSubject: Weekly ${i}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body>${links}</body></html>\r\n`);
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), what);
}

describe('HTTP API: the link route bounds its work and stops when the client leaves', function () {
  this.timeout(180_000);
  let h: Harness;
  const NEWSLETTERS = 150;

  before(async () => {
    h = await startApi();
    for (let i = 0; i < NEWSLETTERS; i++) await h.deliver('reader', newsletter(i));
  });
  after(async () => {
    await h?.close();
  });

  it('parses nothing more for a client that left mid-request', async () => {
    const start = linkScanCounters.parsed;
    const socket = net.connect({ host: '127.0.0.1', port: h.port });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    socket.write(`GET /api/v2/domains/private/inboxes/reader/link?wait=0 HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${API_TOKEN}\r\n\r\n`);
    await until('the request began parsing', () => linkScanCounters.parsed - start >= 3);
    socket.destroy();
    // The server sees the close at its next turn; a parse already handed over may finish.
    await new Promise((r) => setTimeout(r, 200));
    const atClose = linkScanCounters.parsed - start;
    await new Promise((r) => setTimeout(r, 3_000));
    const later = linkScanCounters.parsed - start;
    assert.equal(later, atClose, `no message was parsed after the client left (${atClose} before, ${later} after)`);
    assert.ok(atClose < NEWSLETTERS, `the request stopped part way (${atClose} of ${NEWSLETTERS} parsed)`);
  });

  it(`reads at most ${MAX_LINK_PARSES} of the messages a request finds, and says so`, async () => {
    const start = linkScanCounters.parsed;
    const r = await h.call('GET', '/api/v2/domains/private/inboxes/reader/link?wait=0');
    assert.equal(r.status, 404, r.text);
    assert.match(r.json.message, new RegExp(`read the newest ${MAX_LINK_PARSES} messages only: pass since to look at fewer$`));
    assert.equal(linkScanCounters.parsed - start, Math.min(NEWSLETTERS, MAX_LINK_PARSES));
  });
});
