import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import { MAX_SSE_EVENT_CHARS, MAX_SSE_LINE_CHARS, SseParser, SseProtocolError } from '../../src/api/sse';
import type { InboxApi, StreamState } from '../../src/api/types';
import type { StreamEvent } from '../../src/core/wire';

const TOKEN = 'stream-token-xyz';

const messageEvent = (id: string): StreamEvent => ({
  type: 'message',
  domain: 'inbox.test',
  inbox: 'joe',
  msg: { subject: 'Hi', domain: 'inbox.test', from: 'a@b.test', id, to: 'joe', time: 1763776000000, seconds_ago: 0 },
});

function frame(name: string, data: unknown, id?: string): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Resolves when `pred` holds, polling briefly; fails the test after `ms`. */
async function until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('SSE parser', () => {
  it('parses events split at every byte, with CRLF, CR and LF line ends', () => {
    const text = ': ping\r\nevent: message\r\ndata: {"a":1}\r\n\r\nevent: delete\rdata: x\r\rdata: line1\ndata: line2\n\n';
    const bytes = Buffer.from(text, 'utf8');
    const p = new SseParser();
    const events = [];
    for (const b of bytes) events.push(...p.push(Uint8Array.of(b)));
    assert.deepEqual(events, [
      { event: 'message', data: '{"a":1}' },
      { event: 'delete', data: 'x' },
      { event: 'message', data: 'line1\nline2' },
    ]);
  });

  it('keeps UTF-8 sequences split across chunks intact and drops a leading BOM', () => {
    const bytes = Buffer.from('\ufeffdata: héllo ✓\n\n', 'utf8');
    const p = new SseParser();
    const events = [...p.push(bytes.subarray(0, 9)), ...p.push(bytes.subarray(9, 13)), ...p.push(bytes.subarray(13))];
    assert.deepEqual(events, [{ event: 'message', data: 'héllo ✓' }]);
  });

  it('remembers the last event id and the retry the server asked for', () => {
    const p = new SseParser();
    const events = p.push('id: 7\nretry: 2500\nevent: message\ndata: {}\n\n: ping\n\n');
    assert.deepEqual(events, [{ event: 'message', data: '{}', id: '7', retry: 2500 }]);
    assert.equal(p.lastEventId, '7');
    assert.equal(p.retryMs, 2500);
  });

  it('ignores events without data and unknown fields', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('event: message\n\nfoo: bar\ndata\n\n'), [{ event: 'message', data: '' }]);
  });

  it('fails a line longer than MAX_SSE_LINE_CHARS with a typed error, even when it comes in pieces', () => {
    const p = new SseParser();
    p.push('data: ');
    const piece = 'x'.repeat(64 * 1024);
    let fed = 6;
    assert.throws(
      () => {
        for (;;) {
          p.push(piece);
          fed += piece.length;
        }
      },
      (e: unknown) => SseProtocolError.is(e, 'sse_line_too_long'),
    );
    // Refused on the piece that passed the cap: nothing beyond it was ever held.
    assert.ok(fed <= MAX_SSE_LINE_CHARS && fed + piece.length > MAX_SSE_LINE_CHARS, String(fed));
  });

  it('fails an event longer than MAX_SSE_EVENT_CHARS on the line that passes it, whatever follows', () => {
    const p = new SseParser();
    const line = Buffer.from(`data: ${'x'.repeat(1_000_000)}\n`);
    let accepted = 0;
    let error: unknown;
    for (let n = 0; n < 300 && error === undefined; n++) {
      try {
        assert.deepEqual(p.push(line), []);
        accepted++;
      } catch (e) {
        error = e;
      }
    }
    assert.ok(SseProtocolError.is(error, 'sse_event_too_long'), String(error));
    // 300 such lines grew memory by 312 MB before; now at most MAX_SSE_EVENT_CHARS is held.
    assert.equal(accepted, Math.floor(MAX_SSE_EVENT_CHARS / line.length));
  });

  it('measures each event on its own: a blank line starts the count again', () => {
    const p = new SseParser();
    const half = 'y'.repeat(700_000);
    const event = `data: ${half}\ndata: ${half}\n\n`;
    const events = [];
    for (let n = 0; n < 4; n++) events.push(...p.push(event));
    assert.ok(4 * event.length > MAX_SSE_EVENT_CHARS);
    assert.equal(events.length, 4);
    assert.equal(events[3].data, `${half}\n${half}`);
    assert.equal(p.eventsEnded, 4);
  });

  it('counts a CR LF split across chunks as one line end, and a ping as an ended event', () => {
    const p = new SseParser();
    assert.deepEqual([...p.push('data: a\r'), ...p.push('\n'), ...p.push('data: b\r'), ...p.push('\n')], []);
    assert.equal(p.eventsEnded, 0);
    assert.deepEqual(p.push('\r\n'), [{ event: 'message', data: 'a\nb' }]);
    assert.equal(p.eventsEnded, 1);
    assert.deepEqual(p.push(': ping\n\n'), []);
    assert.equal(p.eventsEnded, 2);
  });
});

describe('push subscription', () => {
  let server: http.Server | undefined;
  let api: InboxApi | undefined;
  const logs: string[] = [];

  async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void): Promise<string> {
    let n = 0;
    server = http.createServer((req, res) => handler(req, res, ++n));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  function client(base: string): InboxApi {
    api = createClient({ baseUrl: base, apiToken: TOKEN, log: (_l, m) => logs.push(m), stream: { initialDelayMs: 20, maxDelayMs: 200 } });
    return api;
  }

  afterEach(async () => {
    await api?.dispose();
    api = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((r) => server!.close(() => r()));
      server = undefined;
    }
    for (const l of logs) assert.ok(!l.includes(TOKEN), `token in log: ${l}`);
    logs.length = 0;
  });

  it('opens the stream with the token header and delivers message and delete events', async () => {
    const requests: http.IncomingMessage[] = [];
    const base = await serve((req, res) => {
      requests.push(req);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': ping\n\n');
      const text = frame('message', messageEvent('joe-1763776000-1')) + frame('delete', { type: 'delete', domain: 'inbox.test', inbox: 'joe', ids: ['joe-1763776000-1'] });
      // Write in small pieces so events straddle chunks.
      let i = 0;
      const t = setInterval(() => {
        if (i >= text.length) return clearInterval(t);
        res.write(text.slice(i, i + 7));
        i += 7;
      }, 1);
      res.on('close', () => clearInterval(t));
    });
    const events: StreamEvent[] = [];
    const states: StreamState[] = [];
    const sub = client(base).subscribe('inbox.test', 'joe', { onEvent: (e) => events.push(e), onState: (s) => states.push(s) });
    await until(() => events.length === 2, 'two events');
    assert.deepEqual(events[0], messageEvent('joe-1763776000-1'));
    assert.deepEqual(events[1].ids, ['joe-1763776000-1']);
    assert.deepEqual(states, ['connecting', 'open']);
    assert.equal(sub.state, 'open');
    assert.equal(requests[0].url, '/api/v2/domains/inbox.test/stream/joe');
    assert.equal(requests[0].headers.authorization, TOKEN);
    assert.equal(requests[0].headers.accept, 'text/event-stream');
    sub.dispose();
    assert.equal(sub.state, 'closed');
  });

  it('reconnects after the server drops the stream and sends Last-Event-ID', async () => {
    const lastIds: Array<string | undefined> = [];
    const base = await serve((req, res, n) => {
      lastIds.push(req.headers['last-event-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame('message', messageEvent(`joe-1763776000-${n}`), String(n)));
      if (n === 1) setTimeout(() => res.destroy(), 20);
    });
    const events: StreamEvent[] = [];
    const states: Array<[StreamState, string | undefined]> = [];
    const sub = client(base).subscribe('inbox.test', undefined, {
      onEvent: (e) => events.push(e),
      onState: (s, err) => states.push([s, err ? (ApiError.is(err) ? err.code : 'other') : undefined]),
    });
    await until(() => events.length === 2, 'an event from the second connection');
    assert.deepEqual(
      events.map((e) => e.msg?.id),
      ['joe-1763776000-1', 'joe-1763776000-2'],
    );
    assert.deepEqual(
      states.map(([s]) => s),
      ['connecting', 'open', 'reconnecting', 'open'],
    );
    assert.equal(states[2][1], 'network');
    assert.deepEqual(lastIds, [undefined, '1']);
    sub.dispose();
  });

  it('keeps reconnecting with backoff while the server fails with 503', async () => {
    const base = await serve((_req, res, n) => {
      if (n <= 3) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"status":"error","message":"starting"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame('message', messageEvent('joe-1763776000-9')));
    });
    const events: StreamEvent[] = [];
    const states: StreamState[] = [];
    const sub = client(base).subscribe('inbox.test', 'joe', { onEvent: (e) => events.push(e), onState: (s) => states.push(s) });
    await until(() => events.length === 1, 'the event after recovery');
    assert.deepEqual(states, ['connecting', 'reconnecting', 'reconnecting', 'reconnecting', 'open']);
    sub.dispose();
  });

  it('waits as long as Retry-After asks before reconnecting, beyond the backoff cap', async () => {
    const base = await serve((_req, res, n) => {
      if (n === 1) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end('{"status":"error","message":"too many streams"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame('message', messageEvent('joe-1763776000-4')));
    });
    const events: StreamEvent[] = [];
    let reconnectErr: Error | undefined;
    const sub = client(base).subscribe('inbox.test', 'joe', {
      onEvent: (e) => events.push(e),
      onState: (s, err) => {
        if (s === 'reconnecting') reconnectErr = err;
      },
    });
    await until(() => events.length === 1, 'the event after the wait');
    assert.ok(ApiError.is(reconnectErr, 'rate_limited'));
    assert.equal(reconnectErr.retryAfterMs, 1000);
    // The client's backoff cap here is 200 ms; the server's 1 s wins.
    assert.ok(logs.some((l) => /Reconnecting in 1000 ms/.test(l)), logs.join('\n'));
    sub.dispose();
  });

  it('reports unsupported on 404 and stops', async () => {
    let hits = 0;
    const base = await serve((_req, res) => {
      hits++;
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"status":"error","message":"no such route"}');
    });
    const states: StreamState[] = [];
    const sub = client(base).subscribe('inbox.test', 'joe', { onEvent: () => undefined, onState: (s) => states.push(s) });
    await until(() => sub.state === 'unsupported', 'unsupported');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(hits, 1);
    assert.deepEqual(states, ['connecting', 'unsupported']);
  });

  it('reports unsupported when a server without the route answers 400', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"status":"error","message":"Unknown endpoint"}');
    });
    let err: Error | undefined;
    const sub = client(base).subscribe('private', undefined, {
      onEvent: () => undefined,
      onState: (s, e) => {
        if (s === 'unsupported') err = e;
      },
    });
    await until(() => sub.state === 'unsupported', 'unsupported');
    assert.ok(ApiError.is(err, 'bad_request'));
  });

  it('closes with an unauthorized error on 401 and does not retry', async () => {
    let hits = 0;
    const base = await serve((_req, res) => {
      hits++;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"status":"error","message":"token required"}');
    });
    let closedWith: Error | undefined;
    const sub = client(base).subscribe('inbox.test', 'joe', {
      onEvent: () => undefined,
      onState: (s, err) => {
        if (s === 'closed') closedWith = err;
      },
    });
    await until(() => sub.state === 'closed', 'closed');
    assert.ok(ApiError.is(closedWith, 'unauthorized'));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(hits, 1);
  });

  it('skips a malformed event and delivers the next one', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {not json\n\n');
      res.write(frame('message', { type: 'message', domain: 'd', inbox: 'joe', msg: { id: 5 } }));
      res.write(frame('message', messageEvent('joe-1763776000-3')));
    });
    const events: StreamEvent[] = [];
    const sub = client(base).subscribe('inbox.test', 'joe', { onEvent: (e) => events.push(e) });
    await until(() => events.length === 1, 'the good event');
    assert.equal(events[0].msg?.id, 'joe-1763776000-3');
    assert.ok(logs.some((l) => /malformed event/.test(l) && /msg\.from/.test(l)));
    sub.dispose();
  });

  it('survives a handler that throws', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame('message', messageEvent('joe-1763776000-1')) + frame('message', messageEvent('joe-1763776000-2')));
    });
    const seen: string[] = [];
    const sub = client(base).subscribe('inbox.test', 'joe', {
      onEvent: (e) => {
        seen.push(e.msg!.id);
        throw new Error('handler bug');
      },
    });
    await until(() => seen.length === 2, 'both events');
    assert.equal(sub.state, 'open');
    sub.dispose();
  });

  it('reconnects when the stream goes quiet for longer than the idle timeout', async () => {
    const base = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n === 2) res.write(frame('message', messageEvent('joe-1763776000-2')));
      else res.flushHeaders(); // the first connection opens, then stays silent
    });
    await api?.dispose();
    api = createClient({ baseUrl: base, apiToken: TOKEN, stream: { initialDelayMs: 20, maxDelayMs: 100, idleTimeoutMs: 150 } });
    const events: StreamEvent[] = [];
    const errors: string[] = [];
    const sub = api.subscribe('inbox.test', 'joe', {
      onEvent: (e) => events.push(e),
      onState: (s, err) => {
        if (s === 'reconnecting' && ApiError.is(err)) errors.push(err.code);
      },
    });
    await until(() => events.length === 1, 'an event after the idle reconnect');
    assert.equal(errors[0], 'timeout');
    sub.dispose();
  });

  it('fails the stream with a protocol error when one event grows past the cap, without reading the rest', async () => {
    const line = `data: ${'x'.repeat(1_000_000)}\n`;
    const offered = 300 * line.length;
    let written = 0;
    const base = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n > 1) {
        res.write(frame('message', messageEvent('joe-1763776000-5')));
        return;
      }
      // 300 lines of ~1 MB with no blank line, as fast as the client reads them.
      let sent = 0;
      const pump = (): void => {
        while (sent < 300 && !res.destroyed) {
          sent++;
          written += line.length;
          if (!res.write(line)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    const events: StreamEvent[] = [];
    let failure: Error | undefined;
    const sub = client(base).subscribe('inbox.test', 'joe', {
      onEvent: (e) => events.push(e),
      onState: (s, err) => {
        if (s === 'reconnecting') failure ??= err;
      },
    });
    await until(() => events.length === 1, 'the event after reconnecting');
    assert.ok(ApiError.is(failure, 'protocol'), String(failure));
    assert.equal(failure.cause?.code, 'sse_event_too_long');
    assert.match(failure.message, /event longer than/);
    // The client hung up after about MAX_SSE_EVENT_CHARS; what the server got out beyond that
    // sat in socket buffers, a few MB at most, never the 300 MB offered.
    assert.ok(written < 32 * 1024 * 1024 && written < offered / 8, `${written} bytes written`);
    assert.equal(events[0].msg?.id, 'joe-1763776000-5');
    sub.dispose();
  });

  it('times out a server that keeps sending bytes but never ends an event', async () => {
    const base = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n > 1) {
        res.write(frame('message', messageEvent('joe-1763776000-6')));
        return;
      }
      // Far more often than the idle timeout, but never a blank line.
      const t = setInterval(() => res.write('data: a\n'), 20);
      res.on('close', () => clearInterval(t));
    });
    await api?.dispose();
    api = createClient({ baseUrl: base, apiToken: TOKEN, stream: { initialDelayMs: 20, maxDelayMs: 100, idleTimeoutMs: 200 } });
    const events: StreamEvent[] = [];
    const errors: string[] = [];
    const sub = api.subscribe('inbox.test', 'joe', {
      onEvent: (e) => events.push(e),
      onState: (s, err) => {
        if (s === 'reconnecting' && ApiError.is(err)) errors.push(err.code);
      },
    });
    await until(() => events.length === 1, 'the event after the idle reconnect');
    assert.deepEqual(errors, ['timeout']);
    assert.equal(events[0].msg?.id, 'joe-1763776000-6');
    sub.dispose();
  });

  it('keeps a quiet stream open while the server pings more often than the idle timeout', async () => {
    // Pings 20× more often than the idle timeout: a busy CI machine delaying timers by a few
    // hundred milliseconds cannot make the gap between two pings look idle.
    const PING_EVERY_MS = 50;
    const QUIET_IDLE_MS = 1_000;
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const t = setInterval(() => res.write(': ping\n\n'), PING_EVERY_MS);
      // Well past two idle timeouts: without the pings the stream would have been dropped.
      const later = setTimeout(() => res.write(frame('message', messageEvent('joe-1763776000-7'))), 3 * QUIET_IDLE_MS);
      res.on('close', () => {
        clearInterval(t);
        clearTimeout(later);
      });
    });
    await api?.dispose();
    api = createClient({ baseUrl: base, apiToken: TOKEN, stream: { initialDelayMs: 20, maxDelayMs: 100, idleTimeoutMs: QUIET_IDLE_MS } });
    const events: StreamEvent[] = [];
    const states: StreamState[] = [];
    const sub = api.subscribe('inbox.test', 'joe', { onEvent: (e) => events.push(e), onState: (s) => states.push(s) });
    await until(() => events.length === 1, 'the event after three idle timeouts of pings', 10_000);
    assert.deepEqual(states, ['connecting', 'open']);
    assert.equal(events[0].msg?.id, 'joe-1763776000-7');
    sub.dispose();
  });

  it('reports closed with invalid_input for a bad inbox, without connecting', async () => {
    let hits = 0;
    const base = await serve((_req, res) => {
      hits++;
      res.end();
    });
    let closedWith: Error | undefined;
    const sub = client(base).subscribe('inbox.test', '../x', {
      onEvent: () => undefined,
      onState: (s, err) => {
        if (s === 'closed') closedWith = err;
      },
    });
    await until(() => closedWith !== undefined, 'closed');
    assert.ok(ApiError.is(closedWith, 'invalid_input'));
    assert.equal(sub.state, 'closed');
    assert.equal(hits, 0);
  });

  it('closes every subscription when the client is disposed', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': ping\n\n');
    });
    const c = client(base);
    const a = c.subscribe('inbox.test', 'joe', { onEvent: () => undefined });
    const b = c.subscribe('inbox.test', undefined, { onEvent: () => undefined });
    await until(() => a.state === 'open' && b.state === 'open', 'both open');
    await c.dispose();
    assert.equal(a.state, 'closed');
    assert.equal(b.state, 'closed');
  });
});
