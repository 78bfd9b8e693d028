// Crash durability: the server runs as a child process, receives SMTP and HTTP injections
// concurrently, is killed with SIGKILL mid-stream, and is restarted on the same data dir.
// Every acknowledged message must be there, complete, and no message may appear twice, under
// either durability rule.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { STORED_REPLY_PREFIX } from '../../src/server/smtp/smtp';
import { DURABILITIES } from '../../src/shared/contract';
import { type Running, startCli } from './cliProcess';

const API = 'durability-api-token';
const WEBHOOK = 'durability-webhook-token';
/** Acknowledgements to wait for before the kill, so it lands while traffic is flowing. */
const ACKS_BEFORE_KILL = 120;
/** Concurrent senders per protocol. */
const SENDERS = 4;
/**
 * How long one step may take before the test fails naming it: a start, the acknowledgements
 * before the kill, a send to a server just killed. Every wait is bounded, so a step that never
 * ends is a failure that says which, within the suite's timeout, and leaves no socket behind.
 */
const STEP_MS = 30_000;

/** `p`, or a failure naming `what` after STEP_MS, with the server's log. */
async function within<T>(p: Promise<T>, what: string, r: Running): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${STEP_MS / 1000} s; the server's stderr:\n${r.stderr()}`)), STEP_MS);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface Ack {
  marker: string;
  id: string;
}

/** A body that ends in a marker, so a truncated file is detected. */
function bodyFor(marker: string): string {
  return `${'lorem ipsum '.repeat(300)}\nEND-${marker}`;
}

// Both rules promise this much: the server process's death loses nothing acknowledged.
for (const durability of DURABILITIES) {
  describe(`durability across SIGKILL (--durability ${durability})`, function () {
    this.timeout(120_000);
    let dataDir: string;
    const children: ChildProcess[] = [];

    beforeEach(async () => {
      dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-durability-'));
    });

    afterEach(async () => {
      for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await fs.rm(dataDir, { recursive: true, force: true, maxRetries: 5 });
    });

    function serve(): Running {
      const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir, '--api-token', API, '--webhook-token', WEBHOOK, '--max-messages', '0', '--durability', durability]);
      children.push(r.child);
      return r;
    }

    /** Sends over SMTP and HTTP at once until the server dies; resolves the acknowledged messages. */
    async function loadUntilKilled(r: Running, round: number): Promise<Ack[]> {
      const ready = await within(r.ready, `round ${round}: the ready line`, r);
      const smtpPort = Number(ready.smtp.split(':').pop());
      const acks: Ack[] = [];
      let dead = false;
      let killed: (() => void) | undefined;
      const enough = new Promise<void>((resolve) => (killed = resolve));
      const acked = (a: Ack): void => {
        acks.push(a);
        if (acks.length === ACKS_BEFORE_KILL) killed?.();
      };
      void r.exited.then(() => (dead = true));

      const smtpSender = async (s: number): Promise<void> => {
        const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, connectionTimeout: STEP_MS, greetingTimeout: STEP_MS, socketTimeout: STEP_MS });
        try {
          for (let n = 0; !dead; n++) {
            const marker = `r${round}-smtp${s}-${n}`;
            const info = await transport.sendMail({ from: 'a@acme.test', to: `dur${s % 2}@inbox.test`, subject: marker, text: bodyFor(marker) });
            const response: string = info.response;
            assert.ok(response.startsWith(`250 ${STORED_REPLY_PREFIX} `), response);
            acked({ marker, id: response.slice(`250 ${STORED_REPLY_PREFIX} `.length).trim() });
          }
        } catch {
          // The server was killed: this message was not acknowledged.
        } finally {
          transport.close();
        }
      };
      const httpSender = async (s: number): Promise<void> => {
        try {
          for (let n = 0; !dead; n++) {
            const marker = `r${round}-http${s}-${n}`;
            const res = await fetch(`${ready.http}/api/v2/domains/private/inboxes/dur${s % 2}`, {
              method: 'POST',
              headers: { Authorization: API, 'Content-Type': 'application/json' },
              body: JSON.stringify({ from: 'b@acme.test', subject: marker, text: bodyFor(marker) }),
              signal: AbortSignal.timeout(STEP_MS),
            });
            const body = (await res.json()) as { status: string; id: string };
            assert.equal(body.status, 'ok');
            acked({ marker, id: body.id });
          }
        } catch {
          // Killed mid-request: not acknowledged.
        }
      };
      const senders = [...Array.from({ length: SENDERS }, (_, s) => smtpSender(s)), ...Array.from({ length: SENDERS }, (_, s) => httpSender(s))];
      await within(enough, `round ${round}: ${ACKS_BEFORE_KILL} acknowledgements (${acks.length} came)`, r);
      r.child.kill('SIGKILL');
      await within(r.exited, `round ${round}: the killed server's exit`, r);
      // Each send ends: acknowledged, refused by the dead socket, or at its own timeout.
      await within(Promise.all(senders), `round ${round}: the senders' end after the kill`, r);
      return acks;
    }

    async function listAll(http: string): Promise<Array<{ id: string; subject: string; to: string }>> {
      const out: Array<{ id: string; subject: string; to: string }> = [];
      for (const inbox of ['dur0', 'dur1']) {
        let cursor: string | undefined;
        do {
          const url = `${http}/api/v2/domains/private/inboxes/${inbox}?limit=500&sort=ascending${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const page = (await (await fetch(url, { headers: { Authorization: API } })).json()) as { msgs: Array<{ id: string; subject: string; to: string }>; cursor?: string };
          out.push(...page.msgs);
          cursor = page.cursor;
        } while (cursor);
      }
      return out;
    }

    it('keeps every acknowledged SMTP and HTTP message, complete and exactly once, after SIGKILL and restart (twice)', async () => {
      const acked: Ack[] = [];
      for (let round = 0; round < 2; round++) acked.push(...(await loadUntilKilled(serve(), round)));
      assert.ok(acked.some((a) => a.marker.includes('smtp')) && acked.some((a) => a.marker.includes('http')), 'both protocols were acknowledged');

      const after = serve();
      const ready = await within(after.ready, 'the ready line after the restart', after);
      const stored = await within(listAll(ready.http), 'the listing after the restart', after);
      const bySubject = new Map<string, number>();
      for (const m of stored) bySubject.set(m.subject, (bySubject.get(m.subject) ?? 0) + 1);
      const duplicated = [...bySubject].filter(([, n]) => n > 1);
      assert.deepEqual(duplicated, [], 'no message is stored twice');
      assert.equal(new Set(stored.map((m) => m.id)).size, stored.length, 'ids are unique');

      const storedIds = new Map(stored.map((m) => [m.id, m]));
      for (const a of acked) {
        const m = storedIds.get(a.id);
        assert.ok(m, `acknowledged message ${a.marker} (${a.id}) is listed after the restart`);
        assert.equal(m.subject, a.marker);
        const raw = await (await fetch(`${ready.http}/api/v2/domains/private/inboxes/${m.to}/messages/${encodeURIComponent(a.id)}/raw`, { headers: { Authorization: API } })).text();
        assert.ok(raw.includes(`END-${a.marker}`), `message ${a.marker} is complete`);
      }
      // Messages that were never acknowledged may or may not be there, but nothing else may be.
      for (const m of stored) assert.match(m.subject, /^r[01]-(smtp|http)\d-\d+$/);
    });
  });
}
