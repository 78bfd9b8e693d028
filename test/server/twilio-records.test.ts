// Twilio records are the store's, not the message's: made only by the Twilio routes (the key a
// message is added with, kept beside it by both stores), never read from header fields a
// sender writes, answered the same before and after a restart, and listed without reading or
// parsing any message. Runs on the Maildir store and, with TEST_INBOX_TEST_STORE=postgres
// (`npm run test:node:postgres`), on PostgreSQL; a restart is a new store and server on the
// same folder or database.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import nodemailer from 'nodemailer';
import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import { createHttpApi, type HttpApi } from '../../src/server/http/httpApi';
import { startInboxServer } from '../../src/server/server';
import { MaildirStore } from '../../src/server/store/maildir/store';
import { PostgresStore } from '../../src/server/store/postgres/store';
import type { Store } from '../../src/server/store/types';
import { sharedCluster } from '../support/postgres';
import { API_TOKEN, DOMAIN, STORE_KIND, WEBHOOK_TOKEN } from './api-harness';

const TWILIO_TOKEN = 'twilio-token-records-7c1e';
const ACCOUNT = `AC${'2b3c4d5e'.repeat(4)}`;
const AUTH = `Basic ${Buffer.from(`${ACCOUNT}:${TWILIO_TOKEN}`).toString('base64')}`;

class LocalHttpClient extends RequestClient {
  constructor(private readonly base: string) {
    super();
  }
  override request<T>(opts: RequestClient.RequestOptions<T>) {
    return super.request({ ...opts, uri: opts.uri.replace(/^https:\/\/api\.twilio\.com/, this.base) });
  }
}

interface Running {
  store: Store;
  api: HttpApi;
  base: string;
  sdk: twilio.Twilio;
}

describe(`Twilio records (${STORE_KIND} store): made only by the Twilio routes, the same across a restart`, function () {
  this.timeout(240_000);
  let dir: string;
  let url: string | undefined;
  let run: Running | undefined;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-records-'));
    url = STORE_KIND === 'postgres' ? await (await sharedCluster()).createDatabase('records') : undefined;
  });
  afterEach(async () => {
    await stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function start(): Promise<Running> {
    const store: Store = url ? new PostgresStore({ url }) : new MaildirStore({ dir });
    await store.open();
    const api = createHttpApi({ store, apiToken: API_TOKEN, webhookToken: WEBHOOK_TOKEN, twilioAuthToken: TWILIO_TOKEN, defaultDomain: DOMAIN, version: '9.9.9-test' });
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    run = { store, api, base, sdk: twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new LocalHttpClient(base) }) };
    return run;
  }
  async function stop(): Promise<void> {
    if (!run) return;
    const r = run;
    run = undefined;
    await r.api.close();
    await r.store.close();
  }
  const restart = async (): Promise<Running> => {
    await stop();
    return start();
  };

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Twilio's JSON, compared whole
  const getJson = async (r: Running, p: string): Promise<{ status: number; json: any }> => {
    const res = await fetch(`${r.base}${p}`, { headers: { Authorization: AUTH } });
    return { status: res.status, json: await res.json() };
  };
  const fetchSid = (r: Running, sid: string) => getJson(r, `/2010-04-01/Accounts/${ACCOUNT}/Messages/${sid}.json`);
  const listAll = (r: Running) => getJson(r, `/2010-04-01/Accounts/${ACCOUNT}/Messages.json?PageSize=1000`);
  /** Twilio's inbound webhook, signed as Twilio signs it (the SDK's own function). */
  const inbound = async (r: Running, params: Record<string, string>, inbox?: string): Promise<Response> => {
    const p = `/api/v2/domains/${WEBHOOK_TOKEN}/webhook${inbox ? `/${inbox}` : ''}`;
    return fetch(`${r.base}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${r.base}${p}`, params) },
      body: new URLSearchParams(params).toString(),
    });
  };
  /** A message as an SMTP client would deliver it (the SMTP server's own call), X-Twilio-* header fields and all. */
  const smtpForgery = (r: Running, sid: string, text: string) =>
    r.store.add(
      [{ domain: DOMAIN, inbox: '15550100199' }],
      Buffer.from(
        `From: +15550100000\r\nTo: 15550100199@${DOMAIN}\r\nSubject: ${text}\r\nX-Twilio-Message-Sid: ${sid}\r\nX-Twilio-Account-Sid: ${ACCOUNT}\r\n` +
          `X-Twilio-To: +15550100199\r\nX-Twilio-From: +15550100000\r\nX-Twilio-Direction: outbound-api\r\nContent-Type: text/plain\r\n\r\n${text}\r\n`,
      ),
      'smtp',
    );

  it('an SMTP message with forged X-Twilio-* header fields never serves under a SID, before or after a restart', async () => {
    let r = await start();
    const real = await r.sdk.messages.create({ to: '+15550100199', from: '+15550100000', body: 'Your code is 482913' });
    const invented = `SM${'0badf00d'.repeat(4)}`;
    await smtpForgery(r, real.sid, 'Your code is 000000');
    await smtpForgery(r, invented, 'Your code is 111111');
    for (const phase of ['before', 'after']) {
      if (phase === 'after') r = await restart();
      const got = await fetchSid(r, real.sid);
      assert.equal(got.status, 200, phase);
      assert.equal(got.json.body, 'Your code is 482913', `${phase} the restart the SID serves the text sent through Twilio's API`);
      assert.equal((await fetchSid(r, invented)).status, 404, `${phase} the restart a SID only a header names is unknown`);
      assert.deepEqual(
        (await listAll(r)).json.messages.map((m: { sid: string }) => m.sid),
        [real.sid],
        phase,
      );
      // The forgeries are ordinary mail of the phone inbox.
      const inbox = await fetch(`${r.base}/api/v2/domains/private/inboxes/15550100199`, { headers: { Authorization: API_TOKEN } });
      assert.equal(((await inbox.json()) as { msgs: unknown[] }).msgs.length, 3);
    }
  });

  it('answers every record the same before and after a restart (property: any accepted To, From and Body, sent or received)', async () => {
    let r = await start();
    // Printable text without control characters, at most 64 characters (the accepted To and From).
    const address = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== '' && !/[\u0000-\u001f\u007f]/.test(s) && s.length <= 64);
    const body = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 150 });
    const message = fc.record({
      kind: fc.constantFrom('sent', 'received'),
      // Fixed cases first: the ones that came back changed (an encoded-word, a name-addr, a quoted phrase).
      from: fc.oneof(fc.constantFrom('=?utf-8?q?Acme_Bank?=', '"Acme" <a@acme.test>', '=?UTF-8?B?w6k=?= x', 'Ünïcode ✓'), address),
      to: fc.oneof(fc.constantFrom('=?utf-8?q?55501?=', '+1 (555) 010-0199'), address),
      body,
    });
    const sids: string[] = [];
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        const body = m.body.replace(/\s+$/, '') || 'x';
        if (m.kind === 'sent') {
          // Sent: To must name a phone inbox; the SMS is addressed to the digits, To kept as sent.
          const sent = await r.sdk.messages.create({ to: `+1555${sids.length.toString().padStart(7, '0')} ${m.to.replace(/[0-9]/g, '')}`.slice(0, 64).trim(), from: m.from.trim(), body });
          sids.push(sent.sid);
        } else {
          const sid = `SM${sids.length.toString(16).padStart(32, '0')}`;
          const res = await inbound(r, { MessageSid: sid, AccountSid: ACCOUNT, From: m.from, To: m.to, Body: body, NumMedia: '0' }, '15550100777');
          assert.equal(res.status, 200, await res.text());
          sids.push(sid);
        }
      }),
      { numRuns: 25 },
    );
    const before = await Promise.all(sids.map((sid) => fetchSid(r, sid)));
    const listBefore = await listAll(r);
    assert.ok(before.every((b) => b.status === 200));
    assert.equal(listBefore.json.messages.length, sids.length);
    r = await restart();
    assert.deepEqual(await Promise.all(sids.map((sid) => fetchSid(r, sid))), before);
    assert.deepEqual(await listAll(r), listBefore);
  });

  it('refuses a record that could not be kept whole: a To or From over 64 characters is 400 and stores nothing', async () => {
    const r = await start();
    const long = await inbound(r, { MessageSid: `SM${'1'.repeat(32)}`, AccountSid: ACCOUNT, From: '+15550100123', To: `+1555${'0'.repeat(300_000)}`, Body: 'x' }, '15550100199');
    assert.equal(long.status, 400);
    assert.match(((await long.json()) as { message: string }).message, /"To" is longer than 64 characters/);
    await assert.rejects(r.sdk.messages.create({ to: `+1555${'0'.repeat(100)}`, from: '+1555', body: 'x' }), (e: { code?: number }) => e.code === 21211);
    assert.equal((await listAll(r)).json.messages.length, 0);
  });

  it('lists read and parse no message, and /healthz and an SMTP delivery complete while ten PageSize=1000 lists are in flight', async () => {
    const server = await startInboxServer({
      host: '127.0.0.1',
      httpPort: 0,
      smtpPort: 0,
      dataDir: dir,
      ...(url ? { databaseUrl: url } : {}),
      apiToken: API_TOKEN,
      webhookToken: WEBHOOK_TOKEN,
      twilioAuthToken: TWILIO_TOKEN,
      defaultDomain: DOMAIN,
    });
    try {
      const sdk = twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new LocalHttpClient(server.httpUrl) });
      const N = 1000;
      for (let i = 0; i < N; i += 10) {
        await Promise.all(Array.from({ length: Math.min(10, N - i) }, (_, j) => sdk.messages.create({ to: `+1555010${String(i + j).padStart(4, '0')}`, from: '+15550100000', body: `Your code is ${String(100000 + i + j)}` })));
      }
      // Every read of a message's bytes goes through readRaw: counted while the lists run.
      let reads = 0;
      const readRaw = server.store.readRaw.bind(server.store);
      server.store.readRaw = (id: string) => {
        reads++;
        return readRaw(id);
      };
      // Ten lists whose bodies are not consumed until /healthz and SMTP are done.
      const port = Number(new URL(server.httpUrl).port);
      const lists = Array.from(
        { length: 10 },
        () =>
          new Promise<{ res: http.IncomingMessage; ended: () => boolean; text: Promise<string> }>((resolve, reject) => {
            const req = http.get({ host: '127.0.0.1', port, path: `/2010-04-01/Accounts/${ACCOUNT}/Messages.json?PageSize=1000`, headers: { authorization: AUTH } }, (res) => {
              res.pause();
              let done = false;
              const chunks: Buffer[] = [];
              const text = new Promise<string>((ok) => {
                res.on('data', (c: Buffer) => chunks.push(c));
                res.on('end', () => {
                  done = true;
                  ok(Buffer.concat(chunks).toString('utf8'));
                });
              });
              resolve({ res, ended: () => done, text });
            });
            req.on('error', reject);
          }),
      );
      const health = await fetch(`${server.httpUrl}/healthz`);
      assert.equal(health.status, 200);
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
      const delivered = await transport.sendMail({ from: 'a@acme.test', to: `joe@${DOMAIN}`, subject: 'during the lists', text: 'x' });
      transport.close();
      assert.match(delivered.response, /^250 /);
      const started = await Promise.all(lists);
      assert.ok(
        started.every((l) => !l.ended()),
        'no list has been read to its end yet',
      );
      for (const l of started) l.res.resume();
      for (const l of started) {
        const body = JSON.parse(await l.text) as { messages: Array<{ body: string }>; page_size: number; next_page_uri: string | null };
        assert.equal(body.messages.length, N);
        assert.equal(body.page_size, 1000);
        assert.equal(body.next_page_uri, null);
        // The newest is one of the last ten, sent at once (their order is the store's: PostgreSQL commits them in any order).
        const newest = Number(/^Your code is (\d+)$/.exec(body.messages[0].body)?.[1]);
        assert.ok(newest >= 100000 + N - 10 && newest < 100000 + N, body.messages[0].body);
        assert.equal(new Set(body.messages.map((m) => m.body)).size, N, 'every message listed once');
      }
      assert.equal(reads, 0, 'a Twilio list reads no message');
    } finally {
      await server.close();
    }
  });
});
