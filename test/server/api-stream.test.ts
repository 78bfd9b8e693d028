import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamEvent } from '../../src/core/wire';
import { StreamHub } from '../../src/server/http/stream';
import { API_TOKEN, DOMAIN, startApi, type Harness } from './api-harness';

interface Sse {
  res: http.IncomingMessage;
  frames: Array<{ event?: string; data?: string; comment?: string; retry?: string }>;
  /** Resolves with the first `event:` frame (after those already taken) matching `pred`. */
  next(pred?: (e: { event: string; data: StreamEvent }) => boolean): Promise<{ event: string; data: StreamEvent }>;
  ended: Promise<void>;
  close(): void;
}

function openStream(port: number, target: string): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, headers: { host: 'localhost', authorization: API_TOKEN } }, (res) => {
      const frames: Sse['frames'] = [];
      const waiters: Array<() => void> = [];
      let taken = 0;
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const frame: Sse['frames'][number] = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data = line.slice(6);
            else if (line.startsWith('retry: ')) frame.retry = line.slice(7);
          }
          frames.push(frame);
        }
        for (const w of waiters.splice(0)) w();
      });
      const ended = new Promise<void>((r) => res.on('end', r));
      const next: Sse['next'] = (pred = () => true) =>
        new Promise((resolveNext, rejectNext) => {
          const look = () => {
            const events = frames.filter((f) => f.event !== undefined);
            while (taken < events.length) {
              const f = events[taken++];
              const e = { event: f.event ?? '', data: JSON.parse(f.data ?? 'null') as StreamEvent };
              if (pred(e)) return resolveNext(e);
            }
            if (res.readableEnded) return rejectNext(new Error('stream ended'));
            waiters.push(look);
          };
          look();
        });
      resolve({ res, frames, next, ended, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

describe('HTTP API: push stream and shutdown', () => {
  let h: Harness;
  const streams: Sse[] = [];

  beforeEach(async () => {
    h = await startApi();
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await h.close();
  });

  async function stream(target: string): Promise<Sse> {
    const s = await openStream(h.port, target);
    streams.push(s);
    return s;
  }

  async function inject(inbox: string, subject: string, domain = 'private'): Promise<string> {
    const r = await h.call('POST', `/api/v2/domains/${domain}/inboxes/${inbox}`, { body: { subject } });
    assert.equal(r.status, 200, r.text);
    return r.json.id;
  }

  it('is a text/event-stream without CORS headers that starts with a retry hint', async () => {
    const s = await stream('/api/v2/domains/private/stream');
    assert.equal(s.res.statusCode, 200);
    assert.match(s.res.headers['content-type'] ?? '', /^text\/event-stream/);
    assert.equal(s.res.headers['access-control-allow-origin'], undefined);
    // A compressing proxy (code-server's, test/e2e/openInBrowser.test.ts) must pass events on as they come.
    assert.match(s.res.headers['cache-control'] ?? '', /\bno-transform\b/);
    await inject('joe', 'x');
    await s.next();
    assert.ok(s.frames[0].retry !== undefined);
  });

  it('pushes event: message with the summary of each new message of the watched inbox only', async () => {
    const s = await stream('/api/v2/domains/private/stream/joe');
    await inject('ann', 'not for joe');
    const id = await inject('Joe', 'for joe');
    const e = await s.next();
    assert.equal(e.event, 'message');
    assert.equal(e.data.type, 'message');
    assert.equal(e.data.domain, DOMAIN);
    assert.equal(e.data.inbox, 'joe');
    assert.equal(e.data.msg?.id, id);
    assert.equal(e.data.msg?.subject, 'for joe');
    assert.deepEqual(Object.keys(e.data.msg ?? {}).sort(), ['domain', 'from', 'id', 'seconds_ago', 'subject', 'time', 'to']);
    const events = s.frames.filter((f) => f.event);
    assert.equal(events.length, 1);
  });

  it('pushes every inbox of a domain, and only that domain when it is named', async () => {
    const all = await stream('/api/v2/domain/private/stream/');
    const named = await stream('/api/v2/domains/other.test/stream/*');
    await inject('ann', 'default domain');
    await inject('bob', 'other domain', 'other.test');
    assert.equal((await all.next()).data.inbox, 'ann');
    assert.equal((await all.next()).data.inbox, 'bob');
    const e = await named.next();
    assert.deepEqual([e.data.domain, e.data.inbox], ['other.test', 'bob']);
  });

  it('pushes event: delete with the removed ids on delete and clear', async () => {
    const a = await inject('joe', 'a');
    const b = await inject('joe', 'b');
    const c = await inject('joe', 'c');
    const s = await stream('/api/v2/domains/private/stream/joe');
    await h.call('DELETE', `/api/v2/domains/private/messages/${a}`);
    const d1 = await s.next();
    assert.equal(d1.event, 'delete');
    assert.deepEqual(d1.data, { type: 'delete', domain: DOMAIN, inbox: 'joe', ids: [a] });
    await h.call('DELETE', '/api/v2/domains/private/inboxes/joe');
    const d2 = await s.next();
    assert.deepEqual(d2.data.ids?.sort(), [b, c].sort());
  });

  it('refuses bad names on the stream route', async () => {
    const r = await h.call('GET', '/api/v2/domains/private/stream/..');
    assert.equal(r.status, 400);
    assert.equal(r.json.status, 'error');
  });

  it('close() ends open streams and pending long-polls, and stops the server', async () => {
    const s = await stream('/api/v2/domains/private/stream/joe');
    const poll = h.call('GET', '/api/v2/domains/private/inboxes/joe?wait=60');
    // Both connections accepted (the stream's and the poll's), then a moment for the poll's request to be read.
    const connections = () => new Promise<number>((r, j) => h.api.server.getConnections((e, n) => (e ? j(e) : r(n))));
    while ((await connections()) < 2) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 200));
    await h.api.close();
    await s.ended;
    const r = await poll;
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.msgs, []);
    assert.equal(h.api.server.listening, false);
  });
});

describe('StreamHub', () => {
  let h: Harness;
  let hub: StreamHub;
  let server: http.Server;
  let port: number;

  beforeEach(async () => {
    h = await startApi();
    hub = new StreamHub(h.store, { pingMs: 30 });
    server = http.createServer((_req, res) => hub.open(res, { domain: undefined, inbox: 'joe' }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    hub.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await h.close();
  });

  it('sends a ": ping" comment on every interval', async () => {
    const s = await openStream(port, '/');
    while (s.frames.filter((f) => f.comment === 'ping').length < 2) await new Promise((r) => setTimeout(r, 20));
    s.close();
  });

  it('forgets a client that goes away, and one that stops reading', async function () {
    // Filling the loopback socket buffers takes a few MB of events: slow on a busy machine.
    this.timeout(90_000);
    const s = await openStream(port, '/');
    assert.equal(hub.size, 1);
    s.close();
    while (hub.size > 0) await new Promise((r) => setTimeout(r, 10));
    // A reader that never reads: its backlog grows past the cap with big subjects, then it is dropped.
    const stalled = await openStream(port, '/');
    stalled.res.pause();
    assert.equal(hub.size, 1);
    const subject = 'word '.repeat(30_000).trim();
    for (let sent = 0; sent < 400 && hub.size > 0; sent++) await h.call('POST', '/api/v2/domains/private/inboxes/joe', { body: { subject } });
    assert.equal(hub.size, 0);
    stalled.close();
  });
});
