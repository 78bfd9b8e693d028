// Issue 35, "Done when": every route the HTTP server answers, enumerated from the router's own
// table (src/server/http/table.ts, which httpApi.ts dispatches by), with what a client that has
// proven no credential can cost on it: bytes, time and connections. Each declaration is read
// and then exercised on a real server over real sockets:
// - bytes: a request without its credential declaring 1 MiB past the route's cap and sending one
//   byte is answered without its body being waited for, and holds nothing of the shared byte
//   budget or of the pool of unproven bodies;
// - a route that reads a body before its credential (sign-in, SES without a signed body hash):
//   within its cap the body is held in the unproven pool only, the request timeout answers 408
//   and the server lets go of the socket though the client keeps its side open (time), and past
//   the number the pool holds at once the next is answered 503 (connections);
// - the server-wide caps: headers that never finish get 408, and connections past the cap 503.
// A route added to the table without caps fails the first test; one that reads a body before
// its credential without declaring it reads none (exchange.ts fails closed).
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { ByteBudget } from '../../src/server/budget';
import { parseUrl } from '../../src/server/http/routes';
import { type Credential, classify, ROUTES, routeCaps, type RouteName } from '../../src/server/http/table';
import { startApi, type Harness } from './api-harness';
import { type Stalled, stalledRequest as open, until } from '../support/stalledRequest';

const MIB = 1024 * 1024;
const CREDENTIALS: readonly Credential[] = ['none', 'api-token', 'session', 'webhook-token', 'twilio-basic', 'provider-key', 'sigv4', 'in-body', 'compat'];
/**
 * The credentials that may read a body first: those proven only from the body, and the drop-in
 * APIs (`--compat`), which on loopback have no credential at all and so read their small bodies
 * from the unproven pool always.
 */
const IN_BODY: readonly Credential[] = ['in-body', 'sigv4', 'compat'];

/** The headers of a request that reaches the body of a route whose credential needs it, without proving anything. */
function unprovenHeaders(credential: Credential): Record<string, string> {
  if (credential !== 'sigv4') return {};
  // A well-formed, current AWS Signature V4 that does not sign the body's hash: checkable only with the body.
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  return {
    'x-amz-date': amzDate,
    authorization: `AWS4-HMAC-SHA256 Credential=AKIDPROBE/${amzDate.slice(0, 8)}/eu-west-1/ses/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}`,
  };
}

describe('the router\'s table: every route\'s caps for a client without a credential', function () {
  this.timeout(120_000);
  let h: Harness;
  let budget: ByteBudget;
  const sockets: Stalled[] = [];
  const stalled = async (...args: Parameters<typeof open>): Promise<Stalled> => {
    const s = await open(...args);
    sockets.push(s);
    return s;
  };
  const nothingHeld = async (what: string): Promise<void> => {
    await until(() => (h.api.unprovenPool.inUse === 0 ? true : undefined), 10_000, () => `${what}: the unproven pool still holds ${h.api.unprovenPool.inUse} bytes`);
    assert.equal(budget.inUse, 0, `${what}: the shared byte budget holds ${budget.inUse} bytes`);
  };

  before(async () => {
    budget = new ByteBudget();
    h = await startApi({ budget, compat: { open: false }, providerKey: 'provider-key-route-caps', twilioAuthToken: 'twilio-token-route-caps', requestTimeoutMs: 1_500, headersTimeoutMs: 1_000, maxConnections: 200 });
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.socket.destroy();
  });
  after(async () => {
    await h?.close();
  });

  const names = Object.keys(ROUTES) as RouteName[];

  it('declares for every route its credential and its caps on bytes, time and connections; the router reaches each by its probe', () => {
    const rows: Array<Record<string, string | number>> = [];
    for (const name of names) {
      const d = ROUTES[name];
      const caps = routeCaps(name, h.api.limits);
      assert.ok(CREDENTIALS.includes(d.credential), `${name}: credential ${String(d.credential)}`);
      assert.ok(Number.isSafeInteger(caps.bytes) && caps.bytes >= 0, `${name}: a cap on bytes`);
      assert.ok(Number.isFinite(caps.ms) && caps.ms > 0, `${name}: a cap on time`);
      assert.ok(Number.isSafeInteger(caps.connections) && caps.connections >= 1 && caps.connections <= h.api.limits.maxConnections, `${name}: a cap on connections`);
      // Only a credential that lives in (or is checked with) the body may read one before it holds; a sign-in is small.
      if (caps.bytes > 0) assert.ok(IN_BODY.includes(d.credential), `${name} reads ${caps.bytes} bytes before its ${d.credential} credential`);
      if (d.credential === 'in-body') assert.ok(caps.bytes > 0 && caps.bytes <= 16 * 1024, `${name}: a small cap of its own`);
      // `{"IDs": […]}` of a few hundred messages: a small cap of its own, never the shared budget.
      if (d.credential === 'compat') assert.ok(caps.bytes <= 64 * 1024, `${name}: a small cap of its own`);
      assert.ok(caps.bytes * caps.connections <= h.api.unprovenPool.capacity, `${name}: its connections fit the unproven pool`);
      assert.equal(classify(parseUrl(d.probe.target)).name, name, `the probe ${d.probe.target} reaches ${name}`);
      rows.push({ route: name, path: d.path.slice(0, 50), credential: d.credential, bytes: caps.bytes, ms: caps.ms, connections: caps.connections });
    }
    // What each route costs a client that has proven nothing (the issue asks the test to show it).
    console.table(rows);
  });

  for (const name of names) {
    const d = ROUTES[name];
    it(`${name} (${d.credential}): a body declared past its cap is not waited for, and holds nothing`, async () => {
      const caps = routeCaps(name, h.api.limits);
      const s = await stalled(h.port, d.probe.method, d.probe.target, { declare: caps.bytes + MIB, send: 1, headers: unprovenHeaders(d.credential) });
      const status = await s.answered(10_000);
      assert.notEqual(status, 408, `${name} waited for the body: ${s.answer().slice(0, 200)}`);
      if (caps.bytes > 0) assert.match(s.answer(), /\r\nconnection: close\r\n/i, `${name}: the connection of a body past the cap closes`);
      await nothingHeld(name);
    });

    if (ROUTES[name].unprovenBytes === 0) continue;

    it(`${name} (${d.credential}): a body within its cap is held in the unproven pool only, until the request timeout (408) ends its socket`, async () => {
      const caps = routeCaps(name, h.api.limits);
      const s = await stalled(h.port, d.probe.method, d.probe.target, { declare: caps.bytes, send: 1, headers: unprovenHeaders(d.credential) });
      await until(() => (h.api.unprovenPool.inUse === caps.bytes ? true : undefined), 10_000, () => `${name}: the unproven pool holds ${h.api.unprovenPool.inUse} bytes, not ${caps.bytes}`);
      assert.equal(budget.inUse, 0);
      assert.equal(await s.answered(10_000), 408, s.answer());
      await s.closed(h.api.server, 10_000);
      await nothingHeld(name);
    });

    it(`${name} (${d.credential}): past the connections its cap allows at once, the next is answered 503`, async () => {
      const caps = routeCaps(name, h.api.limits);
      const held = await Promise.all(Array.from({ length: caps.connections }, () => stalled(h.port, d.probe.method, d.probe.target, { declare: caps.bytes, send: 1, headers: unprovenHeaders(d.credential) })));
      await until(() => (h.api.unprovenPool.inUse === caps.bytes * caps.connections ? true : undefined), 10_000, () => `${name}: the pool holds ${h.api.unprovenPool.inUse} bytes`);
      for (const s of held) assert.equal(s.status(), undefined, `${name}: answered early: ${s.answer().slice(0, 100)}`);
      const extra = await stalled(h.port, d.probe.method, d.probe.target, { declare: caps.bytes, send: 1, headers: unprovenHeaders(d.credential) });
      assert.equal(await extra.answered(10_000), 503, extra.answer());
      assert.equal(budget.inUse, 0);
      for (const s of held) s.socket.destroy();
      await nothingHeld(name);
    });
  }

  it('server-wide: headers that never finish are answered 408 within the request timeout, and the server lets go of the socket', async () => {
    const socket = net.connect({ host: '127.0.0.1', port: h.port, allowHalfOpen: true });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let text = '';
    socket.setEncoding('latin1').on('data', (c: string) => (text += c));
    socket.on('error', () => undefined);
    socket.write(`POST /ui/session HTTP/1.1\r\nhost: 127.0.0.1:${h.port}\r\nx-slow: `);
    sockets.push({ socket, answer: () => text, status: () => undefined, answered: () => Promise.resolve(0), closed: () => Promise.resolve() });
    await until(() => (/^HTTP\/1\.1 408 /.test(text) ? true : undefined), 10_000, () => `headers never finished, answer: ${JSON.stringify(text.slice(0, 80))}`);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const openNow = await new Promise<number>((resolve, reject) => h.api.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));
      if (openNow === 0) break;
      assert.ok(Date.now() < deadline, `the server kept ${openNow} connection(s) after the 408`);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('server-wide: connections past the cap are answered 503', async () => {
    const small = await startApi({ maxConnections: 3 });
    try {
      const idle = await Promise.all(Array.from({ length: 3 }, () => new Promise<net.Socket>((resolve) => { const c = net.connect(small.port, '127.0.0.1', () => resolve(c)); c.on('error', () => undefined); })));
      const over = await stalled(small.port, 'GET', '/healthz', { declare: 0, send: 0 });
      assert.equal(await over.answered(10_000), 503, over.answer());
      for (const c of idle) c.destroy();
    } finally {
      await small.close();
    }
  });
});
