// Mail is never written through a symlink planted in the data dir: an
// inbox folder, a domain folder or an inbox's new/ replaced by a link to a folder outside is
// refused at the delivery (SMTP 451 with the reason, HTTP 500 with it), before or after the
// server started, and nothing lands where the link points. Real server, real SMTP, real links.
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { inboxDirOf, mailRoot } from '../../src/server/store/maildir/layout';
import { loadOrCreateTokens } from '../../src/server/tokens';

const DOMAIN = 'inbox.test';

/** Every file under `dir`, relative. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const dent of await fs.readdir(dir, { withFileTypes: true, recursive: true })) if (!dent.isDirectory()) out.push(path.relative(dir, path.join(dent.parentPath, dent.name)));
  return out;
}

describe('a symlink planted in the data dir (inbox, domain, new/)', function () {
  this.timeout(60_000);
  let parent: string;
  let dataDir: string;
  let outside: string;
  let server: InboxServer | undefined;
  let tokens: Awaited<ReturnType<typeof loadOrCreateTokens>>;

  beforeEach(async () => {
    parent = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-symlink-'));
    dataDir = path.join(parent, 'data');
    outside = path.join(parent, 'outside');
    await fs.mkdir(outside);
    await fs.mkdir(dataDir, { mode: 0o700 });
    tokens = await loadOrCreateTokens(dataDir);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await fs.rm(parent, { recursive: true, force: true });
  });

  const start = async (): Promise<InboxServer> => (server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN, log: () => undefined }));

  async function smtp(to: string): Promise<{ ok: true } | { ok: false; response: string }> {
    const t = nodemailer.createTransport({ host: server!.smtpHost, port: server!.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'shop@example.test', to, subject: 'Code', text: 'Your code is 123456' });
      return { ok: true };
    } catch (e) {
      return { ok: false, response: String((e as { response?: string }).response) };
    } finally {
      t.close();
    }
  }

  it('refuses SMTP and HTTP deliveries to an inbox folder that was a symlink when the server started, and writes nothing where it points', async () => {
    await fs.mkdir(path.join(mailRoot(dataDir), DOMAIN), { recursive: true, mode: 0o700 });
    await fs.symlink(outside, inboxDirOf(dataDir, DOMAIN, 'joe'));
    await start();
    const r = await smtp(`joe@${DOMAIN}`);
    assert.equal(r.ok, false);
    assert.match((r as { response: string }).response, /^451 4\.3\.0 the folder mail\/inbox\.test\/joe of joe@inbox\.test in the data dir is a symbolic link; Test Inbox never writes mail through one/);
    const res = await fetch(`${server!.httpUrl}/api/v2/domains/${DOMAIN}/inboxes/joe/messages`, {
      method: 'POST',
      headers: { authorization: tokens.apiToken, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'a@example.test', subject: 'Hi', text: 'Your code is 654321' }),
    });
    assert.equal(res.status, 500);
    assert.match(((await res.json()) as { message: string }).message, /is a symbolic link; Test Inbox never writes mail through one/);
    assert.deepEqual(await filesUnder(outside), [], 'nothing written through the link');
    // Other inboxes are served as ever.
    assert.deepEqual(await smtp(`ann@${DOMAIN}`), { ok: true });
  });

  it('refuses a delivery once a folder is swapped for a symlink while the server runs (inbox, new/, domain)', async () => {
    await start();
    assert.deepEqual(await smtp(`ann@${DOMAIN}`), { ok: true });
    const annDir = inboxDirOf(dataDir, DOMAIN, 'ann');
    // The first message's file is written after its acknowledgement (from the log): swap only once it is there.
    for (let i = 0; (await fs.readdir(path.join(annDir, 'new'))).length === 0; i++) {
      assert.ok(i < 200, 'the first message was written');
      await new Promise((r) => setTimeout(r, 50));
    }
    const cases: Array<{ what: string; real: string }> = [
      { what: 'new', real: path.join(annDir, 'new') },
      { what: 'inbox', real: annDir },
      { what: 'domain', real: path.dirname(annDir) },
    ];
    for (const c of cases) {
      await fs.rename(c.real, `${c.real}.moved`);
      await fs.symlink(outside, c.real);
      const r = await smtp(`ann@${DOMAIN}`);
      assert.equal(r.ok, false, c.what);
      assert.match((r as { response: string }).response, /^451 4\.3\.0 .* is a symbolic link; Test Inbox never writes mail through one/, c.what);
      assert.deepEqual(await filesUnder(outside), [], `${c.what}: nothing written through the link`);
      await fs.unlink(c.real);
      await fs.rename(`${c.real}.moved`, c.real);
    }
    assert.deepEqual(await smtp(`ann@${DOMAIN}`), { ok: true }, 'the real folder takes mail again');
    assert.ok(existsSync(path.join(annDir, 'new')));
  });
});
