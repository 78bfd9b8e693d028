// Shared setup of the HTTP API conformance tests: a real store (the MaildirStore in a temp dir,
// or with TEST_INBOX_TEST_STORE=postgres the PostgresStore on a fresh database of a throwaway
// cluster, test/support/postgres.ts), the
// real HTTP API listening on 127.0.0.1 port 0, and a raw node:http client (fetch would
// normalise `..` in paths and forbids setting Host, both of which the tests need).
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHttpApi, type HttpApi, type HttpApiOptions } from '../../src/server/http/httpApi';
import { APPLIED_SURFACES, ChaosRules, serverRuleId } from '../../src/server/chaos/rules';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { PostgresStore } from '../../src/server/store/postgres/store';
import type { MessageMeta, RetentionOptions, Store } from '../../src/server/store/types';
import { sharedCluster } from '../support/postgres';

/** Which store the server suites run against: `npm run test:node` runs them with each. */
export const STORE_KIND: 'maildir' | 'postgres' = process.env.TEST_INBOX_TEST_STORE === 'postgres' ? 'postgres' : 'maildir';
/** Assertions about the Maildir's files hold only on that store. */
export const ON_MAILDIR = STORE_KIND === 'maildir';

/** A new, empty, unopened store of STORE_KIND; `dir` is the Maildir's folder (a scratch folder for PostgreSQL). */
export async function makeStore(dir: string, log: (level: string, msg: string) => void, retention?: Partial<RetentionOptions>): Promise<Store> {
  // PostgreSQL applies retention in a periodic sweep: a short period lets a test see it.
  if (STORE_KIND === 'postgres') return new PostgresStore({ url: await (await sharedCluster()).createDatabase(), log, ...(retention ? { retention, sweepIntervalMs: 200 } : {}) });
  return new MaildirStore({ dir, log, ...(retention ? { retention } : {}) });
}

export const API_TOKEN = 'api-token-3f9c2b7e1d';
export const WEBHOOK_TOKEN = 'wh-token-8a1e6c4d0b';
export const DOMAIN = 'inbox.test';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  bytes: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface CallOptions {
  /** Extra or replacing headers; `authorization: undefined` sends none. */
  headers?: Record<string, string | undefined>;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  /** Send no Authorization header. */
  anonymous?: boolean;
}

export interface Harness {
  api: HttpApi;
  store: Store;
  /** The store's temp folder; '' over a store given in `over.store`. */
  dir: string;
  port: number;
  logs: Array<{ level: string; msg: string }>;
  call(method: string, target: string, opts?: CallOptions): Promise<Reply>;
  /** Stores a message straight through the store, as the SMTP server would. */
  deliver(inbox: string, raw: Buffer, domain?: string): Promise<MessageMeta>;
  close(): Promise<void>;
}

/**
 * A real HTTP API on port 0 over a store of its own in a temp folder, or over `over.store` (a
 * second process of one store): then it makes no folder or store, and close() leaves the store
 * to its owner.
 */
export async function startApi(over: Partial<HttpApiOptions> = {}, retention?: Partial<RetentionOptions>): Promise<Harness> {
  const logs: Array<{ level: string; msg: string }> = [];
  const shared = over.store;
  const dir = shared === undefined ? await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-api-')) : '';
  const store = shared ?? (await makeStore(dir, (level, msg) => logs.push({ level, msg }), retention));
  if (shared === undefined) await store.open();
  // On PostgreSQL the fault rules are kept in its table, as a team server keeps them (server.ts).
  const team = STORE_KIND === 'postgres' && shared === undefined && over.chaos === undefined ? (store as PostgresStore) : undefined;
  const chaos = team && new ChaosRules(over.clock ? () => over.clock!.now() : Date.now, over.delayed ? APPLIED_SURFACES : APPLIED_SURFACES.filter((s) => s !== 'delivery'), serverRuleId, team.chaosRules);
  await chaos?.open();
  const api = createHttpApi({
    ...(chaos ? { chaos } : {}),
    store,
    apiToken: API_TOKEN,
    webhookToken: WEBHOOK_TOKEN,
    defaultDomain: DOMAIN,
    version: '9.9.9-test',
    log: (level, msg) => logs.push({ level, msg }),
    ...over,
  });
  await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  const port = (api.server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true });

  const call = (method: string, target: string, opts: CallOptions = {}): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { host: `127.0.0.1:${port}` };
      if (!opts.anonymous) headers.authorization = API_TOKEN;
      let payload: Buffer | undefined;
      if (opts.body !== undefined) {
        if (Buffer.isBuffer(opts.body)) payload = opts.body;
        else if (typeof opts.body === 'string') payload = Buffer.from(opts.body);
        else payload = Buffer.from(JSON.stringify(opts.body));
        headers['content-type'] = 'application/json';
      }
      for (const [k, v] of Object.entries(opts.headers ?? {})) {
        if (v === undefined) delete headers[k.toLowerCase()];
        else headers[k.toLowerCase()] = v;
      }
      const req = http.request({ host: '127.0.0.1', port, method, path: target, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, bytes, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });

  return {
    api,
    store,
    dir,
    port,
    logs,
    call,
    async deliver(inbox, raw, domain = DOMAIN) {
      const [meta] = await store.add([{ domain, inbox }], raw, 'smtp');
      return meta;
    },
    async close() {
      agent.destroy();
      await api.close();
      if (shared !== undefined) return;
      await chaos?.close();
      await store.close();
      await fs.rm(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** docs/api.md §2.2 / §2.6: `<inbox>-<number>-<number>`. */
export const ID_SHAPE = /^[a-z0-9!#$%&'*+=?^_`{|}~.-]+-[0-9]+-[0-9]+$/;

/** Sends `request` on a new connection and resolves everything the server sent until it closed. */
export function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (c) => (data += c.toString('utf8')));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

/**
 * Asks `/healthz` one request at a time (`gapMs` apart) while a heavy request runs, each
 * answer checked for 200; `stop()` ends the loop and resolves the latencies, sorted (ms).
 */
export function probeHealthz(h: Harness, gapMs = 0): { stop(): Promise<number[]> } {
  let done = false;
  const health: number[] = [];
  const loop = (async () => {
    while (!done) {
      const t0 = performance.now();
      assert.equal((await h.call('GET', '/healthz', { anonymous: true })).status, 200);
      health.push(performance.now() - t0);
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    }
  })();
  return {
    async stop() {
      done = true;
      await loop;
      return health.sort((a, b) => a - b);
    },
  };
}

/** Sends CONNECT, then resets the socket (an RST, not a FIN) after `afterMs`. */
export function connectAndReset(port: number, target: string, afterMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      setTimeout(() => {
        s.resetAndDestroy();
        resolve();
      }, afterMs);
    });
    s.on('error', () => resolve());
  });
}
