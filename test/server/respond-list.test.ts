import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJsonList } from '../../src/server/http/respond';

describe('sendJsonList: a list answer, at once when small, in slices that take turns when large (a real node:http server)', () => {
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n'));
      const items = Array.from({ length: n }, (_, i) => i);
      void sendJsonList(res, 'msgs', items, (i) => ({ id: `m${i}`, n: i }), n % 2 === 0 ? { domain: 'inbox.test', to: 'joe' } : {});
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  for (const n of [0, 1, 50, 100, 101, 250, 1000]) {
    it(`${n} items: the same JSON either way, ${n <= 100 ? 'with its length (one write)' : 'chunked (written in pieces)'}`, async () => {
      const r = await fetch(`${base}/?n=${n}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-length') !== null, n <= 100);
      const expected = { msgs: Array.from({ length: n }, (_, i) => ({ id: `m${i}`, n: i })), ...(n % 2 === 0 ? { domain: 'inbox.test', to: 'joe' } : {}) };
      assert.deepEqual(await r.json(), expected);
    });
  }
});
