// Live updates: the push stream of the real local server, and polling against a hosted-like
// server (the same real server behind a proxy that has no stream route, like the hosted API).
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClient } from '../../src/api/client';
import type { InboxApi } from '../../src/api/types';
import { LiveUpdates, type NewMail } from '../../src/extension/tree/live';
import { InboxModel } from '../../src/extension/tree/model';
import { AddedInboxes, ReadState } from '../../src/extension/tree/state';
import { startInboxServer, type InboxServer } from '../../src/server/server';
import { memoryLog, memoryMemento as memento } from '../support/memory';

const API_TOKEN = 'live-api-token-0001';
const DOMAIN = 'inbox.test';

/** Forwards every request to `target` except the stream routes, which answer 404 like a server without them. */
async function noStreamProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const t = new URL(target);
  const proxy = http.createServer((req, res) => {
    if (/\/stream(\/|$|\?)/.test(req.url ?? '')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"error","message":"not found"}');
      return;
    }
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (proxy.closeAllConnections(), proxy.close(() => r()))),
  };
}

describe('extension live updates', function () {
  this.timeout(30_000);
  let dir: string;
  let server: InboxServer;
  const quiet = memoryLog().log;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-live-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir: dir, apiToken: API_TOKEN, webhookToken: 'live-wh-token-0002', defaultDomain: DOMAIN });
  });
  afterEach(async () => {
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function setup(api: InboxApi) {
    const store = memento();
    const model = new InboxModel({
      api: async () => api,
      domains: async () => [DOMAIN],
      added: () => new AddedInboxes(store, 's'),
      readState: () => new ReadState(store, 's', 0),
    });
    const news: NewMail[] = [];
    let notify!: () => void;
    const arrived = new Promise<void>((r) => (notify = r));
    const live = new LiveUpdates({ model, api: () => api, pollSeconds: () => 1, log: quiet, onNewMail: (m) => (news.push(m), notify()) });
    await model.roots();
    await model.domainChildren(DOMAIN);
    return { model, live, news, arrived };
  }

  it('applies new mail from the push stream without a refresh', async () => {
    const api = createClient({ baseUrl: server.httpUrl, apiToken: API_TOKEN });
    const { model, live, news, arrived } = await setup(api);
    try {
      live.sync();
      for (let i = 0; i < 100 && live.describe()[DOMAIN] !== 'stream:open'; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(live.describe()[DOMAIN], 'stream:open');
      await api.inject(DOMAIN, 'pushed', { from: 'a@b.test', subject: 'via stream', text: 't' });
      await arrived;
      assert.deepEqual(news[0].msgs.map((m) => m.subject), ['via stream']);
      const inboxes = await model.domainChildren(DOMAIN);
      assert.ok(inboxes.some((n) => n.kind === 'inbox' && n.inbox === 'pushed'));
      assert.equal(model.unreadCount(), 1);
    } finally {
      live.dispose();
      await api.dispose();
    }
  });

  it('falls back to polling while visible when the server has no stream', async () => {
    const proxy = await noStreamProxy(server.httpUrl);
    const api = createClient({ baseUrl: proxy.url, apiToken: API_TOKEN });
    const { model, live, news, arrived } = await setup(api);
    try {
      live.setVisible(true);
      live.sync();
      for (let i = 0; i < 100 && live.describe()[DOMAIN] !== 'polling'; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(live.describe()[DOMAIN], 'polling');
      await api.inject(DOMAIN, 'polled', { from: 'a@b.test', subject: 'via polling', text: 't' });
      await arrived;
      assert.deepEqual(news[0].msgs.map((m) => m.subject), ['via polling']);
      const inboxes = await model.domainChildren(DOMAIN);
      assert.ok(inboxes.some((n) => n.kind === 'inbox' && n.inbox === 'polled'));
    } finally {
      live.dispose();
      await api.dispose();
      await proxy.close();
    }
  });
});
