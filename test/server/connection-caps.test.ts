// Connection caps on the real server in a child process whose soft
// open-file limit is 256: more idle sockets than the caps are held open, and a new SMTP
// delivery and an HTTP inject still get a clear answer (421 4.3.2, 503 JSON) instead of a
// failure deep in the store, then succeed once the sockets are gone.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultConnectionCaps, FALLBACK_FD_LIMIT, readSoftFdLimit, RESERVED_FDS } from '../../src/server/limits';
import { sendOne, SmtpConnection } from '../../bench/lib/smtp-load';
import { type Running, startServer } from './cliProcess';
import { cliArgv } from '../support/cli';

const REPO = path.resolve(__dirname, '..', '..');
const API = 'caps-api-token-5b1f';
const WEBHOOK = 'caps-webhook-token-9e2a';
/** The soft limit the child runs under: low enough that the held sockets would exhaust it without caps. */
const FD_LIMIT = 256;
/** Idle sockets held on each port: more than either cap and, together, more than the whole limit. */
const HELD = 150;

describe('connection caps sized from the open-file limit', () => {
  it('reads the soft limit from /proc/self/limits text and sizes caps that leave room for the store', () => {
    const text = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n';
    assert.equal(readSoftFdLimit(text), 1024);
    assert.equal(readSoftFdLimit('Max processes 10 10 processes\n'), undefined);
    const caps = defaultConnectionCaps(1024);
    assert.equal(caps.fdLimitSource, 'proc');
    assert.ok(caps.smtp + caps.http + RESERVED_FDS < 1024, JSON.stringify(caps));
    assert.ok(caps.smtp >= 100 && caps.http >= 100, JSON.stringify(caps));
    const fallback = defaultConnectionCaps(undefined);
    assert.equal(fallback.fdLimit, FALLBACK_FD_LIMIT);
    assert.equal(fallback.fdLimitSource, 'fallback');
    assert.ok(fallback.smtp + fallback.http + RESERVED_FDS < FALLBACK_FD_LIMIT);
  });

  describe(`the real server under ulimit -n ${FD_LIMIT}`, function () {
    this.timeout(120_000);
    let dataDir: string;
    let server: Running;
    const held: net.Socket[] = [];

    before(async function () {
      if (process.platform === 'win32') this.skip();
      dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-caps-'));
      const cmd = `ulimit -n ${FD_LIMIT} && exec "${process.execPath}" ${cliArgv().map((a) => `"${a}"`).join(' ')} serve --http-port 0 --smtp-port 0 --data-dir "${dataDir}" --api-token ${API} --webhook-token ${WEBHOOK}`;
      server = startServer('sh', ['-c', cmd], { cwd: REPO, env: { ...process.env } });
      await server.ready;
    });
    after(async () => {
      for (const s of held) s.destroy();
      await server?.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    });

    it('answers 421 4.3.2 and 503 JSON past the caps, and delivers again once sockets close', async () => {
      const ready = await server.ready;
      const smtpPort = Number(ready.smtp.split(':').pop());
      const httpPort = Number(new URL(ready.http).port);
      const caps = /connection caps: SMTP (\d+), HTTP (\d+) \(file-descriptor limit (\d+)\)/.exec(server.stderr());
      assert.ok(caps, server.stderr());
      assert.equal(Number(caps[3]), FD_LIMIT);
      assert.ok(Number(caps[1]) < HELD && Number(caps[2]) < HELD, caps[0]);

      // Idle SMTP sessions (greeted, then silent) and idle HTTP connections (nothing sent).
      const opened = await Promise.all(
        Array.from({ length: HELD }, (_, i) =>
          new Promise<{ socket: net.Socket; greeting: string }>((resolve) => {
            const socket = net.connect(i % 2 === 0 ? smtpPort : httpPort, '127.0.0.1');
            let greeting = '';
            socket.on('error', () => undefined);
            if (i % 2 === 1) socket.once('connect', () => resolve({ socket, greeting }));
            else socket.on('data', (d) => (greeting ||= d.toString('latin1'))).once('data', () => resolve({ socket, greeting }));
            socket.once('close', () => resolve({ socket, greeting }));
          }),
        ),
      );
      held.push(...opened.map((o) => o.socket));
      for (let i = 0; i < HELD; i++) {
        const s = net.connect(i % 2 === 0 ? smtpPort : httpPort, '127.0.0.1');
        s.on('error', () => undefined);
        held.push(s);
      }
      // Sockets past a cap are answered and closed by the server within a second.
      await new Promise((r) => setTimeout(r, 1_500));
      const greetings = opened.filter((_, i) => i % 2 === 0).map((o) => o.greeting);
      assert.ok(greetings.some((g) => g.startsWith('220 ')), 'sessions under the cap are greeted');

      // A new delivery gets a clear, retryable answer at the greeting.
      const refused = await SmtpConnection.open('127.0.0.1', smtpPort).then(
        () => 'greeted',
        (e: Error) => e.message,
      );
      assert.match(refused, /421 4\.3\.2 too many connections/);
      const inject = () =>
        fetch(`${ready.http}/api/v2/domains/private/inboxes/capped`, {
          method: 'POST',
          headers: { authorization: API, 'content-type': 'application/json' },
          body: JSON.stringify({ subject: 'while full', text: 'hello' }),
        });
      const busy = await inject();
      assert.equal(busy.status, 503);
      assert.match(((await busy.json()) as { message: string }).message, /connections open, its limit/);

      for (const s of held.splice(0)) s.destroy();
      await new Promise((r) => setTimeout(r, 500));
      const delivered = await sendOne('127.0.0.1', smtpPort, 'capped@inbox.test');
      assert.equal(delivered.code, 250, delivered.text);
      const ok = await inject();
      assert.equal(ok.status, 200, await ok.clone().text());
      const list = (await (await fetch(`${ready.http}/api/v2/domains/private/inboxes/capped`, { headers: { authorization: API } })).json()) as { msgs: unknown[] };
      assert.equal(list.msgs.length, 2);
      assert.doesNotMatch(server.stderr(), /EMFILE|could not store/);
    });
  });
});
