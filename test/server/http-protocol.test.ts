// HTTP protocol edges of the local API, over raw sockets against the real
// server: Host header rules, absolute-form targets, HEAD, CONNECT and unknown methods, and a
// request trickled in too slowly.
import assert from 'node:assert/strict';
import net from 'node:net';
import { API_TOKEN, connectAndReset, rawRequest, startApi, type Harness } from './api-harness';

function statusOf(reply: string): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(reply)?.[1] ?? 0);
}

/** The JSON error body of a raw reply. */
function errorOf(reply: string): { status: string; message: string } {
  assert.match(reply, /\r\ncontent-type: application\/json/i, reply);
  return JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { status: string; message: string };
}

describe('HTTP protocol: Host, absolute form, HEAD, methods and slow requests', () => {
  let h: Harness;
  const list = '/api/v2/domains/private/inboxes/joe';

  beforeEach(async () => {
    h = await startApi({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
  });
  afterEach(async () => {
    await h.close();
  });

  it('answers 400 with JSON to a request without Host, and to one with two', async () => {
    const none = await rawRequest(h.port, `GET ${list} HTTP/1.1\r\nAuthorization: ${API_TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.equal(statusOf(none), 400, none);
    assert.match(errorOf(none).message, /no Host header/);
    const two = await rawRequest(h.port, `GET ${list} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.test\r\nAuthorization: ${API_TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.equal(statusOf(two), 400, two);
    assert.match(errorOf(two).message, /more than one Host header/);
    const one = await rawRequest(h.port, `GET ${list} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${API_TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.equal(statusOf(one), 200, one);
  });

  it('answers 421 to an absolute-form target naming another host, whatever the Host header says', async () => {
    const foreign = await rawRequest(h.port, `GET http://evil.test${list} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${API_TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.equal(statusOf(foreign), 421, foreign);
    assert.match(errorOf(foreign).message, /"evil\.test" is not allowed/);
    const userinfo = await rawRequest(h.port, `GET http://127.0.0.1@evil.test${list} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${API_TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.equal(statusOf(userinfo), 421, userinfo);
    const own = await rawRequest(h.port, `GET http://127.0.0.1:${h.port}${list} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${API_TOKEN}\r\nConnection: close\r\n\r\n`);
    assert.equal(statusOf(own), 200, own);
  });

  it('answers HEAD on every GET route with the GET status and headers and no body', async () => {
    await h.call('POST', list, { body: { subject: 'hi', text: 'code 123456' } });
    const id = (await h.call('GET', list)).json.msgs[0].id as string;
    const stream = await h.call('HEAD', '/api/v2/domains/private/stream/joe');
    assert.equal(stream.status, 200);
    assert.match(stream.headers['content-type'] ?? '', /^text\/event-stream/);
    for (const path of ['/healthz', list, `${list}/messages/${id}`, `${list}/messages/${id}/raw`, `${list}/messages/${id}/links`]) {
      const get = await h.call('GET', path);
      const head = await h.call('HEAD', path);
      assert.equal(head.status, 200, `${path}: ${head.text}`);
      assert.equal(head.status, get.status, path);
      assert.equal(head.headers['content-type'], get.headers['content-type'], path);
      assert.equal(head.bytes.length, 0, path);
    }
    const missing = await h.call('HEAD', `${list}/messages/joe-1-99999`);
    assert.equal(missing.status, 404);
  });

  it('answers CONNECT and unknown methods with a JSON 405 and keeps serving', async () => {
    const connect = await rawRequest(h.port, 'CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n');
    assert.equal(statusOf(connect), 405, connect);
    assert.match(errorOf(connect).message, /CONNECT is not supported; use GET, HEAD, POST, PUT, DELETE/);
    assert.match(connect, /\r\nallow: GET, HEAD, POST, PUT, DELETE\r\n/i);
    const unknown = await rawRequest(h.port, `FROB ${list} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    assert.equal(statusOf(unknown), 405, unknown);
    assert.match(errorOf(unknown).message, /method is not supported; use GET, HEAD, POST, PUT, DELETE/);
    assert.match(unknown, /\r\nallow: GET, HEAD, POST, PUT, DELETE\r\n/i);
    const put = await h.call('PUT', list, { body: {} });
    assert.equal(put.status, 405);
    assert.match(put.json.message, /PUT is not allowed/);
    assert.equal((await h.call('GET', '/healthz')).status, 200);
  });

  it('keeps serving when a client resets its CONNECT socket, before or after the answer', async () => {
    for (const after of [0, 50]) await connectAndReset(h.port, 'example.com:443', after);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await h.call('GET', '/healthz')).status, 200);
  });

  it('cuts a request whose headers or body trickle in below the minimum rate, and stores nothing', async () => {
    const trickle = (parts: string[], gapMs: number): Promise<{ reply: string; ms: number }> =>
      new Promise((resolve, reject) => {
        const t0 = Date.now();
        const socket = net.connect(h.port, '127.0.0.1');
        let reply = '';
        let i = 0;
        const timer = setInterval(() => {
          if (i < parts.length && socket.writable) socket.write(parts[i++]);
        }, gapMs);
        socket.on('data', (c) => (reply += c.toString('utf8')));
        socket.on('close', () => {
          clearInterval(timer);
          resolve({ reply, ms: Date.now() - t0 });
        });
        socket.on('error', () => undefined);
        setTimeout(() => reject(new Error('the slow request was never cut')), 10_000);
      });
    // Headers one byte at a time, far slower than the 300 ms the server allows for them.
    const headers = `POST ${list} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${API_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n`;
    const slowHeaders = await trickle(headers.split(''), 50);
    assert.ok(slowHeaders.reply === '' || /^HTTP\/1\.1 408 /.test(slowHeaders.reply), slowHeaders.reply);
    // Headers at once, then a body of 40 bytes one byte every 100 ms: 4 s, past the 600 ms request timeout.
    const body = JSON.stringify({ text: 'x'.repeat(40 - 11) });
    assert.equal(body.length, 40);
    const slowBody = await trickle([headers, ...body.split('')], 100);
    assert.ok(slowBody.ms < 3_500, `cut after ${slowBody.ms} ms`);
    assert.ok(slowBody.reply === '' || /^HTTP\/1\.1 408 /.test(slowBody.reply), slowBody.reply);
    assert.deepEqual((await h.call('GET', list)).json.msgs, []);
  });
});
