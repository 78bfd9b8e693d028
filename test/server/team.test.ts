// The team server: three real `test-inbox serve` processes on one throwaway PostgreSQL
// cluster (test/support/postgres.ts). A message injected through one is listed and fetched
// through the others at once; ids are unique and ordered across processes; the push stream
// and `wait=` deliver arrivals from any process; SIGKILL of one during ingest loses and
// duplicates nothing; a lost database gives 503 JSON and SMTP 451 and both recover.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import pg from 'pg';
import twilio from 'twilio';
import RequestClient from 'twilio/lib/base/RequestClient';
import { EXIT_DATABASE_UNAVAILABLE, TWILIO_AUTH_TOKEN_ENV } from '../../src/shared/contract';
import { composeMessage } from '../../src/server/http/compose';
import { HEADER } from '../../src/server/http/twilio/sidIndex';
import { MIGRATIONS } from '../../src/server/store/postgres/migrations';
import { STORED_REPLY_PREFIX } from '../../src/server/smtp/smtp';
import { type Cluster, PG_PASSWORD, startCluster } from '../support/postgres';
import { type Running, startCli } from './cliProcess';
import { buildMessage, sendOne } from '../../bench/lib/smtp-load';

const API = 'team-api-token-5d1e';
const WEBHOOK = 'team-webhook-token-9c2a';
const TWILIO_TOKEN = 'team-twilio-token-3b7f';
const ACCOUNT = `AC${'7e57'.repeat(8)}`;
/** Acknowledgements to wait for before the kill, so it lands while traffic is flowing. */
const ACKS_BEFORE_KILL = 90;

interface Ready {
  http: string;
  smtp: string;
  smtpPort: number;
}

describe('team server: three serve processes on one PostgreSQL', function () {
  this.timeout(180_000);
  let cluster: Cluster;
  let url: string;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];

  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster?.destroy());

  beforeEach(async () => {
    url = await cluster.createDatabase('team');
  });

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
  });

  async function serve(extra: string[] = [], storeUrl = url): Promise<Running> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-team-'));
    dirs.push(dir);
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dir, '--store', storeUrl, ...extra], {
      TEST_INBOX_API_TOKEN: API,
      TEST_INBOX_WEBHOOK_TOKEN: WEBHOOK,
      [TWILIO_AUTH_TOKEN_ENV]: TWILIO_TOKEN,
    });
    children.push(r.child);
    return r;
  }

  async function three(extra: string[] = []): Promise<Array<Ready & { run: Running }>> {
    const runs = await Promise.all([serve(extra), serve(extra), serve(extra)]);
    return Promise.all(
      runs.map(async (run) => {
        const ready = await run.ready;
        return { ...ready, smtpPort: Number(ready.smtp.split(':').pop()), run };
      }),
    );
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers of the API as JSON, checked field by field
  type Json = any;
  const get = async (base: string, p: string): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${base}${p}`, { headers: { Authorization: API } });
    return { status: res.status, json: await res.json() };
  };
  /** Reads a push stream on from `text` (what was read already) until `id` shows in it; returns all read. */
  const readUntil = async (reader: ReadableStreamDefaultReader<Uint8Array>, id: string, text: string): Promise<string> => {
    while (!text.includes(id)) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream ended before the event');
      text += Buffer.from(value).toString('utf8');
    }
    return text;
  };
  const inject = async (base: string, inbox: string, subject: string): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${base}/api/v2/domains/private/inboxes/${inbox}`, {
      method: 'POST',
      headers: { Authorization: API, 'Content-Type': 'application/json' },
      body: JSON.stringify({ from: 'a@acme.test', subject, text: `body of ${subject}` }),
    });
    return { status: res.status, json: await res.json() };
  };

  /** The official Twilio SDK, its transport pointed at one process instead of api.twilio.com. */
  const twilioAt = (base: string): twilio.Twilio => {
    class Local extends RequestClient {
      override request<T>(opts: RequestClient.RequestOptions<T>) {
        return super.request({ ...opts, uri: opts.uri.replace(/^https:\/\/api\.twilio\.com/, base) });
      }
    }
    return twilio(ACCOUNT, TWILIO_TOKEN, { httpClient: new Local() });
  };

  it('finds a Twilio message by SID through every process: sent through one, fetched and listed through another, gone everywhere once deleted', async () => {
    const [a, b] = await Promise.all([serve(), serve()]).then((rs) => Promise.all(rs.map((r) => r.ready)));
    const sent = await twilioAt(a.http).messages.create({ to: '+1 555 010 0199', from: '+15550100000', body: 'Code 731902 from A' });
    assert.match(sent.sid, /^SM[0-9a-f]{32}$/);
    const fetched = await twilioAt(b.http).messages(sent.sid).fetch();
    assert.equal(fetched.body, 'Code 731902 from A');
    assert.equal(fetched.to, '+1 555 010 0199');
    assert.equal(fetched.status, 'delivered');
    // An inbound SMS through B (Twilio's webhook, its own MessageSid) is found by that SID through A.
    const inboundSid = `SM${'c0ffee42'.repeat(4)}`;
    const params = { MessageSid: inboundSid, AccountSid: ACCOUNT, From: '+15550100123', To: '+15550100199', Body: 'Inbound through B' };
    const hook = `${b.http}/api/v2/domains/${WEBHOOK}/webhook`;
    const posted = await fetch(hook, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(TWILIO_TOKEN, hook, params) },
      body: new URLSearchParams(params).toString(),
    });
    assert.equal(posted.status, 200, await posted.text());
    const inbound = await twilioAt(a.http).messages(inboundSid).fetch();
    assert.equal(inbound.body, 'Inbound through B');
    assert.equal(inbound.direction, 'inbound');
    for (const s of [a, b]) assert.deepEqual((await twilioAt(s.http).messages.list({ to: '+15550100199' })).map((m) => m.sid), [inboundSid, sent.sid], `listed through ${s.http}`);
    // The same webhook delivered again, through A this time (a replay, or Twilio's retry): answered 200, stored once.
    const again = await fetch(`${a.http}/api/v2/domains/${WEBHOOK}/webhook`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${a.http}/api/v2/domains/${WEBHOOK}/webhook`, params) },
      body: new URLSearchParams(params).toString(),
    });
    assert.equal(again.status, 200);
    const sids = (await twilioAt(b.http).messages.list({})).map((m) => m.sid);
    assert.deepEqual(sids, [inboundSid, sent.sid]);
    assert.equal((await get(b.http, '/api/v2/domains/private/inboxes/15550100199')).json.msgs.length, 2);
    // Deleted through B's inbox API: A no longer finds its SID.
    const listing = await get(b.http, '/api/v2/domains/private/inboxes/15550100199?sort=ascending');
    const first = listing.json.msgs[0].id as string;
    const del = await fetch(`${b.http}/api/v2/domains/private/messages/${first}`, { method: 'DELETE', headers: { Authorization: API } });
    assert.equal(del.status, 200);
    await assert.rejects(twilioAt(a.http).messages(sent.sid).fetch(), (e: { status?: number; code?: number }) => e.status === 404 && e.code === 20404);
  });

  it('finds by SID an SMS stored before the schema kept SIDs (migration 2 reads them from its header fields; 5 drops those of SMTP mail)', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const sid = `SM${'5eed'.repeat(8)}`;
    const forgedSid = `SM${'f0f0'.repeat(8)}`;
    try {
      // The database as the first release of the PostgreSQL store left it: schema version 1, one SMS.
      await client.query('CREATE TABLE test_inbox_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      await client.query(MIGRATIONS[0].sql);
      await client.query('INSERT INTO test_inbox_schema (version, name) VALUES (1, $1)', [MIGRATIONS[0].name]);
      const raw = await composeMessage({
        from: '+15550100000',
        subject: 'Old code 100200',
        text: 'Old code 100200',
        inbox: '15550100199',
        domain: 'private',
        source: 'inject',
        extraHeaders: { [HEADER.sid]: sid, [HEADER.accountSid]: ACCOUNT, [HEADER.to]: '+15550100199', [HEADER.direction]: 'outbound-api', [HEADER.from]: '+15550100000' },
      });
      await client.query(
        `INSERT INTO test_inbox_messages (seq, id, domain, inbox, time_ms, sender, subject, size, source, code, raw)
         VALUES (nextval('test_inbox_message_seq'), '15550100199-' || ($3::bigint / 1000) || '-1', 'private', '15550100199', $3, '+15550100000', 'Old code 100200', $1, 'inject', '100200', $2)`,
        [raw.length, raw, Date.now()],
      );
      // Mail that came by SMTP with the same header fields: migration 2 keyed it too; 5 drops it.
      const forged = Buffer.from(raw.toString('latin1').replace(sid, forgedSid).replace(/Old code 100200/g, 'Forged 999999'), 'latin1');
      await client.query(
        `INSERT INTO test_inbox_messages (seq, id, domain, inbox, time_ms, sender, subject, size, source, code, raw)
         VALUES (nextval('test_inbox_message_seq'), '15550100199-' || ($3::bigint / 1000) || '-2', 'private', '15550100199', $3, '+15550100000', 'Forged 999999', $1, 'smtp', '999999', $2)`,
        [forged.length, forged, Date.now()],
      );
    } finally {
      await client.end();
    }
    const ready = await (await serve()).ready;
    const old = await twilioAt(ready.http).messages(sid).fetch();
    assert.equal(old.body, 'Old code 100200');
    assert.equal(old.from, '+15550100000');
    await assert.rejects(twilioAt(ready.http).messages(forgedSid).fetch(), (e: { status?: number }) => e.status === 404);
    assert.deepEqual((await twilioAt(ready.http).messages.list()).map((m) => m.sid), [sid]);
    // Migration 7 computed the phone column of the rows already there: is:sms and is:email read it.
    const total = async (q: string): Promise<number> => ((await (await fetch(`${ready.http}/api/v2/search?q=${encodeURIComponent(q)}`, { headers: { Authorization: API } })).json()) as { total: number }).total;
    assert.equal(await total('is:sms'), 2);
    assert.equal(await total('is:email'), 0);
    assert.equal(await total('is:sms code:100200'), 1);
  });

  it('refuses to start on a wrong password or an unreachable database, with a clear message and exit code 4', async () => {
    const wrong = await serve([], cluster.url('postgres', 'not-the-password'));
    assert.deepEqual(await wrong.exited, { code: EXIT_DATABASE_UNAVAILABLE, signal: null });
    assert.match(wrong.stderr(), /refused the login/);
    assert.ok(!wrong.stderr().includes('not-the-password'), 'the password is not shown');
    const gone = await serve([], `postgres://test_inbox:${PG_PASSWORD}@127.0.0.1:1/postgres`);
    assert.deepEqual(await gone.exited, { code: EXIT_DATABASE_UNAVAILABLE, signal: null });
    assert.match(gone.stderr(), /cannot reach the database at postgres:\/\/\S*127\.0\.0\.1:1\/postgres: connect ECONNREFUSED/);
    assert.ok(!gone.stderr().includes(PG_PASSWORD));
  });

  it('lists and fetches through every process what was injected through one, with ids unique and ordered across processes', async () => {
    const servers = await three();
    const first = await inject(servers[0].http, 'joe', 'through A');
    assert.equal(first.status, 200);
    for (const s of servers) {
      const listing = await get(s.http, '/api/v2/domains/private/inboxes/joe');
      assert.deepEqual(listing.json.msgs.map((m: { id: string }) => m.id), [first.json.id], `listed at once through ${s.http}`);
      const msg = await get(s.http, `/api/v2/domains/private/messages/${first.json.id}`);
      assert.equal(msg.json.subject, 'through A');
    }
    // Concurrent injections through all three: every id distinct, and the listing's order is the order of the ids.
    const acks = await Promise.all(Array.from({ length: 30 }, (_, n) => inject(servers[n % 3].http, 'many', `m${n}`)));
    const ids = acks.map((a) => a.json.id as string);
    assert.equal(new Set(ids).size, 30);
    const counter = (id: string): number => Number(id.split('-').pop());
    for (const s of servers) {
      const listing = await get(s.http, '/api/v2/domains/private/inboxes/many?limit=100&sort=ascending');
      const listed: string[] = listing.json.msgs.map((m: { id: string }) => m.id);
      assert.deepEqual([...listed].sort(), [...ids].sort());
      assert.deepEqual(listed.map(counter), [...listed.map(counter)].sort((a, b) => a - b));
    }
  });

  it('delivers an arrival through another process to wait= long-polls and the push stream', async () => {
    const [a, b, c] = await three();
    const waiting = get(b.http, '/api/v2/domains/private/inboxes/ann?wait=20');
    const controller = new AbortController();
    const stream = await fetch(`${c.http}/api/v2/domains/private/stream/ann`, { headers: { Authorization: API }, signal: controller.signal });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    // Give the long-poll and the stream a moment to be registered before the arrival.
    await new Promise((r) => setTimeout(r, 300));
    const sent = await inject(a.http, 'ann', 'cross-process');
    const waited = await waiting;
    assert.deepEqual(waited.json.msgs.map((m: { id: string }) => m.id), [sent.json.id]);
    const text = await readUntil(reader, sent.json.id, '');
    assert.match(text, /event: message/);
    controller.abort();
  });

  it('replays to the push stream and wait= the arrivals committed while its LISTEN connection was cut', async () => {
    const bRun = await serve();
    const b = { ...(await bRun.ready), run: bRun };
    // Already there when A starts: never announced by A as an arrival, gap or not.
    const earlier = await inject(b.http, 'gap-old', 'before A started');
    const aRun = await serve();
    const a = { ...(await aRun.ready), run: aRun };
    const controller = new AbortController();
    // The stream of every inbox of the domain: it would show any message replayed wrongly.
    const stream = await fetch(`${a.http}/api/v2/domains/private/stream`, { headers: { Authorization: API }, signal: controller.signal });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    const waiting = get(a.http, '/api/v2/domains/private/inboxes/gap?wait=20');
    await new Promise((r) => setTimeout(r, 300));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const listenerOf = `test-inbox listen ${a.run.child.pid}`;
      const cut = await admin.query<{ done: boolean }>('SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1', [listenerOf]);
      assert.deepEqual(cut.rows, [{ done: true }], "A's one LISTEN connection is terminated");
      const sent = await inject(b.http, 'gap', 'during the gap');
      assert.equal(sent.status, 200);
      const back = await admin.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [listenerOf]);
      assert.equal(back.rowCount, 0, 'the arrival committed while A had no LISTEN connection: its NOTIFY reached nobody in A');
      const waited = await waiting;
      assert.deepEqual(waited.json.msgs.map((m: { id: string }) => m.id), [sent.json.id], 'the long-poll gets the arrival of the gap');
      let text = await readUntil(reader, sent.json.id, '');
      assert.match(text, /event: message/);
      assert.match(a.run.stderr(), /replayed 1 arrival\(s\) of the gap/);
      // Once back, arrivals flow as before, each announced once.
      const later = await inject(b.http, 'gap', 'after the gap');
      text = await readUntil(reader, later.json.id, text);
      assert.equal(text.split(sent.json.id).length - 1, text.split(later.json.id).length - 1, 'the replayed arrival is announced as often as a live one');
      assert.ok(!text.includes(earlier.json.id), 'a message older than A is not replayed as an arrival');
    } finally {
      controller.abort();
      await admin.end();
    }
  });

  it('loses and duplicates no acknowledged message when one of three is SIGKILLed during ingest; the others keep serving', async () => {
    const servers = await three(['--max-messages', '0']);
    const victim = servers[0];
    const acks: Array<{ marker: string; id: string }> = [];
    let stop = false;
    let enough: (() => void) | undefined;
    const reached = new Promise<void>((r) => (enough = r));
    const acked = (marker: string, id: string): void => {
      acks.push({ marker, id });
      if (acks.length === ACKS_BEFORE_KILL) enough?.();
    };
    const smtpSender = async (s: Ready, k: number): Promise<void> => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1 });
      try {
        for (let n = 0; !stop; n++) {
          const marker = `${s.http}-smtp${k}-${n}`;
          const info = await transport.sendMail({ from: 'a@acme.test', to: 'dur@inbox.test', subject: marker, text: `END-${marker}` });
          const response: string = info.response;
          acked(marker, response.slice(`250 ${STORED_REPLY_PREFIX} `.length).trim());
        }
      } catch {
        // The victim died: this one was not acknowledged.
      } finally {
        transport.close();
      }
    };
    const httpSender = async (s: Ready, k: number): Promise<void> => {
      try {
        for (let n = 0; !stop; n++) {
          const marker = `${s.http}-http${k}-${n}`;
          const res = await fetch(`${s.http}/api/v2/domains/inbox.test/inboxes/dur`, {
            method: 'POST',
            headers: { Authorization: API, 'Content-Type': 'application/json' },
            body: JSON.stringify({ from: 'b@acme.test', subject: marker, text: `END-${marker}` }),
          });
          const body = (await res.json()) as { status: string; id: string };
          assert.equal(body.status, 'ok');
          acked(marker, body.id);
        }
      } catch {
        // Killed mid-request: not acknowledged.
      }
    };
    const senders = servers.flatMap((s) => [smtpSender(s, 0), smtpSender(s, 1), httpSender(s, 0), httpSender(s, 1)]);
    await reached;
    victim.run.child.kill('SIGKILL');
    await victim.run.exited;
    // The survivors keep taking mail for a moment after the kill.
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(senders);
    assert.ok(acks.length >= ACKS_BEFORE_KILL);
    const survivor = servers[1];
    const listed: Array<{ id: string; subject: string }> = [];
    let cursor: string | undefined;
    do {
      const page = await get(survivor.http, `/api/v2/domains/inbox.test/inboxes/dur?limit=500&sort=ascending${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      listed.push(...page.json.msgs);
      cursor = page.json.cursor;
    } while (cursor);
    const bySubject = new Map<string, number>();
    for (const m of listed) bySubject.set(m.subject, (bySubject.get(m.subject) ?? 0) + 1);
    for (const a of acks) assert.equal(bySubject.get(a.marker), 1, `acknowledged ${a.marker} is there exactly once`);
    assert.equal(new Set(listed.map((m) => m.id)).size, listed.length, 'no id twice');
    // Every listed message is complete (its body ends in its marker), read through the third process.
    const sample = listed.slice(-5);
    for (const m of sample) {
      const raw = await fetch(`${servers[2].http}/api/v2/domains/inbox.test/messages/${m.id}/raw`, { headers: { Authorization: API } });
      assert.match(await raw.text(), new RegExp(`END-${m.subject.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
    assert.equal((await inject(servers[2].http, 'after', 'still serving')).status, 200);
  });

  it('answers 503 JSON and SMTP 451 while the database is away, and recovers when it returns', async () => {
    const own = await startCluster();
    try {
      const storeUrl = await own.createDatabase('outage');
      const r = await serve([], storeUrl);
      const ready = await r.ready;
      const smtpPort = Number(ready.smtp.split(':').pop());
      assert.equal((await inject(ready.http, 'joe', 'before')).status, 200);
      own.stop();
      const down = await inject(ready.http, 'joe', 'during');
      assert.equal(down.status, 503);
      assert.equal(down.json.status, 'error');
      assert.match(down.json.message, /database is unreachable/);
      assert.equal((await get(ready.http, '/api/v2/domains/private/inboxes/joe')).status, 503);
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
      await assert.rejects(transport.sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'smtp during', text: 'x' }), (e: { responseCode?: number }) => e.responseCode === 451);
      own.start();
      const back = await inject(ready.http, 'joe', 'after');
      assert.equal(back.status, 200, JSON.stringify(back.json));
      await transport.sendMail({ from: 'a@acme.test', to: 'joe@inbox.test', subject: 'smtp after', text: 'x' });
      transport.close();
      // Nothing of the outage was stored half-way: only the acknowledged messages are there.
      const listing = await get(ready.http, '/api/v2/domains/inbox.test/inboxes/joe?sort=ascending');
      assert.deepEqual(listing.json.msgs.map((m: { subject: string }) => m.subject), ['before', 'after', 'smtp after']);
    } finally {
      own.destroy();
    }
  });

  it('survives its connections being cut in the middle of big deliveries: each is refused or stored whole, and the process keeps serving', async () => {
    const r = await serve();
    const ready = await r.ready;
    const smtpPort = Number(ready.smtp.split(':').pop());
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    // Spooled bodies go to PostgreSQL in pieces, so a transaction stays open between statements:
    // cut every connection of the store's pool (not its LISTEN connection) again and again meanwhile.
    let cutting = true;
    let cuts = 0;
    const cutter = (async () => {
      while (cutting) {
        const { rows } = await admin.query<{ n: string }>("SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'test-inbox'");
        cuts += Number(rows[0].n);
        await new Promise((res) => setTimeout(res, 3));
      }
    })();
    const message = buildMessage(6 * 1024 * 1024, 'big@sender.test', 'cut@inbox.test', 'cut');
    const codes: number[] = [];
    try {
      for (let i = 0; i < 4; i++) codes.push(await sendOne('127.0.0.1', smtpPort, 'cut@inbox.test', message).then((reply) => reply.code, () => 0));
    } finally {
      cutting = false;
      await cutter;
      await admin.end();
    }
    assert.ok(cuts > 0, 'connections were cut');
    assert.equal(r.child.exitCode, null, `the process ended:\n${r.stderr()}`);
    // Still serving: a delivery now goes through, and what was acknowledged is there, whole.
    assert.equal((await sendOne('127.0.0.1', smtpPort, 'cut@inbox.test', message)).code, 250);
    const listing = await get(ready.http, '/api/v2/domains/inbox.test/inboxes/cut');
    assert.equal(listing.status, 200);
    assert.equal(listing.json.msgs.length, codes.filter((c) => c === 250).length + 1, `codes ${codes.join(',')}`);
    for (const m of listing.json.msgs as Array<{ id: string }>) {
      const raw = await fetch(`${ready.http}/api/v2/domains/inbox.test/inboxes/cut/messages/${m.id}/raw`, { headers: { Authorization: API } });
      assert.equal(Buffer.from(await raw.arrayBuffer()).length, message.length);
    }
  });

  it('sweeps retention once per period across three processes, and ingest goes on while a sweep is held up', async () => {
    const PERIOD_MS = 500;
    const servers = await three(['--max-messages', '0', '--max-age', '1h', '--sweep-every', `${PERIOD_MS}ms`]);
    const sweeper = new pg.Client({ connectionString: url });
    const holder = new pg.Client({ connectionString: url });
    await Promise.all([sweeper.connect(), holder.connect()]);
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    const sweepRow = async (): Promise<{ runs: number; removed: number }> => {
      const { rows } = await sweeper.query<{ runs: string; removed: string }>("SELECT runs, removed FROM test_inbox_sweeps WHERE name = 'retention'");
      return { runs: Number(rows[0].runs), removed: Number(rows[0].removed) };
    };
    /** Backends of this database waiting for a row lock inside the age sweep's DELETE. */
    const heldSweeps = async (): Promise<number> =>
      Number(
        (
          await sweeper.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM test_inbox_messages WHERE time_ms <%'",
          )
        ).rows[0].n,
      );
    try {
      // Three processes, each with a timer every PERIOD_MS: the sweep runs once per period, not three times.
      const before = await sweepRow();
      const startedAt = Date.now();
      await sleep(10 * PERIOD_MS);
      const ran = (await sweepRow()).runs - before.runs;
      const periods = (Date.now() - startedAt) / PERIOD_MS;
      assert.ok(ran >= 2, `the sweep runs (${ran} runs in ${periods.toFixed(1)} periods)`);
      assert.ok(ran <= Math.ceil(periods / 0.9) + 1, `at most once per period: ${ran} runs in ${periods.toFixed(1)} periods (three uncoordinated timers would run ${Math.round(periods * 3)})`);

      for (let n = 0; n < 3; n++) assert.equal((await inject(servers[n].http, 'aged', `old-${n}`)).status, 200);
      // Hold the sweeps off (their row), age the three messages, lock one of them, let the sweeps go:
      // the next sweep's DELETE waits for that row lock while the test ingests through all three.
      await sweeper.query('BEGIN');
      await sweeper.query("SELECT 1 FROM test_inbox_sweeps WHERE name = 'retention' FOR UPDATE");
      await holder.query("UPDATE test_inbox_messages SET time_ms = time_ms - 7200000 WHERE inbox = 'aged'");
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM test_inbox_messages WHERE subject = 'old-0' FOR UPDATE");
      await sweeper.query('COMMIT');
      for (let tries = 0; (await heldSweeps()) === 0; tries++) {
        assert.ok(tries < 100, 'a sweep reaches the locked row');
        await sleep(50);
      }
      const held = await sweepRow();
      const acks = await Promise.all(servers.flatMap((s, n) => [inject(s.http, 'aged', `new-${n}-a`), inject(s.http, 'aged', `new-${n}-b`)]));
      assert.deepEqual(acks.map((a) => a.status), [200, 200, 200, 200, 200, 200], 'ingest through every process goes on during the sweep');
      await sleep(3 * PERIOD_MS);
      assert.equal(await heldSweeps(), 1, 'the sweep is still held up after three more periods, and no second one queued behind it');
      assert.equal((await sweepRow()).runs, held.runs, 'no other process swept meanwhile');
      await holder.query('ROLLBACK');
      let subjects: string[] = [];
      for (let tries = 0; tries < 100; tries++) {
        subjects = (await get(servers[2].http, '/api/v2/domains/private/inboxes/aged?sort=ascending')).json.msgs.map((m: { subject: string }) => m.subject);
        if (subjects.length === 6) break;
        await sleep(50);
      }
      assert.deepEqual([...subjects].sort(), ['new-0-a', 'new-0-b', 'new-1-a', 'new-1-b', 'new-2-a', 'new-2-b'], 'the aged three are gone, the six new ones kept');
      const after = await sweepRow();
      assert.ok(after.runs >= held.runs + 1);
      assert.equal(after.removed - held.removed, 3, 'the three aged messages were removed by one sweep, once');
    } finally {
      await Promise.all([sweeper.end(), holder.end()]);
    }
  });

  it('applies retention by count across processes with set-based deletes', async () => {
    const servers = await three(['--max-messages', '3']);
    for (let n = 0; n < 9; n++) assert.equal((await inject(servers[n % 3].http, 'kept', `k${n}`)).status, 200);
    // Count retention runs right after each delivery's commit; give the last one a moment.
    let subjects: string[] = [];
    for (let tries = 0; tries < 50; tries++) {
      subjects = (await get(servers[1].http, '/api/v2/domains/private/inboxes/kept?sort=ascending')).json.msgs.map((m: { subject: string }) => m.subject);
      if (subjects.length === 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(subjects, ['k6', 'k7', 'k8']);
    // The counts the triggers keep (migration 4) agree, through every process: 9 delivered, 6 removed.
    for (const s of servers) assert.deepEqual((await get(s.http, '/api/v2/domains')).json.domains, [{ name: 'inbox.test', inboxes: 1, messages: 3 }]);
  });
});
