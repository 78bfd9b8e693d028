// How a client tells a Test Inbox server from the hosted service before it sends its API token
// (InboxApi.identify): the REAL local server on port 0, reached directly and
// through a recording front that can also rewrite the health answer (an older server) or stand
// for a service with no /healthz of ours.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient } from '../../src/api/client';
import { ApiError } from '../../src/api/errors';
import { hmacHex, tokenProofKey } from '../../src/core/proof';
import type { HealthResponse } from '../../src/core/wire';
import { startInboxServer, type InboxServer } from '../../src/server/server';

const API_TOKEN = 'identify-api-token-3c9e1b';
const WEBHOOK_TOKEN = 'identify-wh-token-8d2f4a';
const DOMAIN = 'team.test';

interface Front {
  url: string;
  /** Every request the front saw: its path and its Authorization header. */
  seen: Array<{ url: string; authorization?: string }>;
  close(): Promise<void>;
}

/** An HTTP front that records requests and answers through `answer` (the server's own answer by default). */
async function startFront(target: string, rewrite?: (url: string, body: Buffer) => { status: number; body: string } | undefined): Promise<Front> {
  const seen: Front['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
    void (async () => {
      const upstream = await fetch(`${target}${req.url}`, { headers: req.headers.authorization ? { authorization: req.headers.authorization } : {} });
      const body = Buffer.from(await upstream.arrayBuffer());
      const out = rewrite?.(req.url ?? '', body) ?? { status: upstream.status, body: body.toString('utf8') };
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(out.body);
    })().catch((e: unknown) => {
      res.writeHead(502);
      res.end(String(e));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('identifying a Test Inbox server by a proof of the API token', function () {
  this.timeout(20_000);
  let dir: string;
  let server: InboxServer;
  const fronts: Front[] = [];

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ti-identify-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, defaultDomain: DOMAIN, log: () => {} });
  });

  afterEach(async () => {
    for (const f of fronts.splice(0)) await f.close();
  });

  after(async () => {
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function front(rewrite?: Parameters<typeof startFront>[1]): Promise<Front> {
    const f = await startFront(server.httpUrl, rewrite);
    fronts.push(f);
    return f;
  }

  it('answers a challenge with the HMAC keyed by the token, and names its default domain', async () => {
    const challenge = 'a-fresh-challenge-19';
    const body = (await (await fetch(`${server.httpUrl}/healthz?challenge=${challenge}`)).json()) as HealthResponse;
    assert.equal(body.defaultDomain, DOMAIN);
    assert.equal(body.tokenProof, await hmacHex(await tokenProofKey(API_TOKEN), challenge));
    assert.notEqual(body.tokenProof, await hmacHex(await tokenProofKey('another-token'), challenge));
    const plain = (await (await fetch(`${server.httpUrl}/healthz`)).json()) as HealthResponse;
    assert.equal(plain.tokenProof, undefined, 'no challenge, no proof');
  });

  it('knows a Test Inbox server that takes its token, having sent the token nowhere', async () => {
    const f = await front();
    const api = createClient({ baseUrl: f.url, apiToken: API_TOKEN });
    const id = await api.identify();
    assert.equal(id.kind, 'test-inbox');
    assert.equal(id.kind === 'test-inbox' && id.health.defaultDomain, DOMAIN);
    assert.equal(f.seen.length, 1);
    assert.match(f.seen[0].url, /^\/healthz\?challenge=[\w-]{20,}$/);
    assert.equal(f.seen[0].authorization, undefined);
    // A second call asks a new challenge: an old answer cannot be replayed.
    await api.identify();
    assert.notEqual(f.seen[1].url, f.seen[0].url);
    await api.dispose();
  });

  it('refuses a Test Inbox server that proves a different token, before sending it', async () => {
    const f = await front();
    const api = createClient({ baseUrl: f.url, apiToken: 'not-the-servers-token' });
    await assert.rejects(api.identify(), (e: unknown) => ApiError.is(e, 'unauthorized') && /uses another API token \(found by a check that does not send this one\)\. Use that server's token: "apiToken" in the tokens\.json of its data folder/.test(e.message));
    assert.deepEqual(
      f.seen.map((s) => s.authorization),
      [undefined],
    );
    await api.dispose();
  });

  it('takes a server that merely says "test-inbox" without a proof for something else (an older server or an impostor)', async () => {
    const f = await front((url, body) => {
      if (!url.startsWith('/healthz')) return undefined;
      const h = JSON.parse(body.toString('utf8')) as HealthResponse;
      delete h.tokenProof;
      return { status: 200, body: JSON.stringify(h) };
    });
    const api = createClient({ baseUrl: f.url, apiToken: API_TOKEN });
    assert.deepEqual(await api.identify(), { kind: 'other' });
    await api.dispose();
  });

  it('refuses a forged proof', async () => {
    const f = await front((url) => (url.startsWith('/healthz') ? { status: 200, body: JSON.stringify({ service: 'test-inbox', version: '9', status: 'ok', tokenProof: 'ab'.repeat(32) }) } : undefined));
    const api = createClient({ baseUrl: f.url, apiToken: API_TOKEN });
    await assert.rejects(api.identify(), (e: unknown) => ApiError.is(e, 'unauthorized'));
    await api.dispose();
  });

  it('takes a service with no health endpoint of ours (the hosted API answers 404) for something else', async () => {
    const f = await front(() => ({ status: 404, body: JSON.stringify({ message: 'not found' }) }));
    const api = createClient({ baseUrl: f.url, apiToken: API_TOKEN });
    assert.deepEqual(await api.identify(), { kind: 'other' });
    await api.dispose();
  });

  it('reports a server that does not answer as a network failure, not as the hosted service', async () => {
    const f = await front();
    const url = f.url;
    await f.close();
    fronts.splice(fronts.indexOf(f), 1);
    const api = createClient({ baseUrl: url, apiToken: API_TOKEN, retries: 0 });
    await assert.rejects(api.identify(), (e: unknown) => ApiError.is(e, 'network'));
    await api.dispose();
  });
});
