// A phone inbox, written as people write a number (`+15555550142`, `+1 (555) 555-0142`), is the
// same inbox on every surface: the HTTP routes, the client, the test library, the CLI (a child
// process, as a user runs it), the MCP tools, SMTP and search. (The editor's input and its LM
// tools: test/unit/extension-inboxInput.test.ts; the rule itself: test/unit/ids.test.ts.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import nodemailer from 'nodemailer';
import { createClient } from '../../src/api/client';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { loadOrCreateTokens } from '../../src/server/tokens';
import { sendSms, waitForCode } from '../../src/testing';
import { childEnv, clearProductEnv, cliArgv } from '../support/cli';

const REPO = path.resolve(__dirname, '..', '..');
const DOMAIN = 'inbox.test';
const DIGITS = '15555550142';
const WRITTEN = ['+15555550142', '+1 (555) 555-0142'];
const CODE = '482913';

describe('a phone inbox written with + is the same inbox on every surface', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer;
  let apiToken: string;

  before(async () => {
    clearProductEnv();
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-phone-'));
    const tokens = await loadOrCreateTokens(dataDir);
    apiToken = tokens.apiToken;
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, ...tokens, defaultDomain: DOMAIN });
    const sent = await sendSms({ dataDir, to: '+1 (555) 555-0142', body: `Your Acme code is ${CODE}` });
    assert.equal(sent.inbox, DIGITS);
  });

  after(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const get = (p: string) => fetch(`${server.httpUrl}${p}`, { headers: { authorization: apiToken } });

  it('HTTP: the list, code and message routes of /inboxes/+15555550142 are those of inbox 15555550142', async () => {
    for (const written of WRITTEN) {
      const seg = encodeURIComponent(written);
      const list = await get(`/api/v2/domains/private/inboxes/${seg}`);
      assert.equal(list.status, 200, written);
      const body = (await list.json()) as { to: string; msgs: Array<{ to: string; id: string }> };
      assert.equal(body.to, DIGITS, written);
      assert.deepEqual(body.msgs.map((m) => m.to), [DIGITS], written);
      const code = await get(`/api/v2/domains/private/inboxes/${seg}/code`);
      assert.equal(code.status, 200, written);
      assert.equal(((await code.json()) as { code: string }).code, CODE, written);
      const msg = await get(`/api/v2/domains/private/inboxes/${seg}/messages/${body.msgs[0].id}`);
      assert.equal(msg.status, 200, written);
    }
    const search = await get(`/api/v2/search?q=${encodeURIComponent(`inbox:${WRITTEN[0]}`)}`);
    assert.equal(((await search.json()) as { total: number }).total, 1, 'search inbox:+15555550142');
  });

  it('client: listInbox and getCode with +15555550142 read inbox 15555550142', async () => {
    const api = createClient({ baseUrl: server.httpUrl, apiToken });
    try {
      for (const written of WRITTEN) {
        const listing = await api.listInbox('private', written);
        assert.deepEqual(listing.msgs.map((m) => m.to), [DIGITS], written);
        assert.equal((await api.getCode('private', written)).code, CODE, written);
      }
    } finally {
      await api.dispose();
    }
  });

  it('library: waitForCode("+15555550142") answers the code of the SMS', async () => {
    for (const written of WRITTEN) assert.equal((await waitForCode(written, { dataDir, timeout: '5s' })).code, CODE, written);
  });

  it('CLI: `test-inbox code +15555550142` prints the code and exits 0', async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [...cliArgv(), 'code', WRITTEN[0], '--wait', '5s'], { cwd: REPO, env: childEnv({ TEST_INBOX_DATA_DIR: dataDir }), encoding: 'utf8' }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      ),
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${CODE}\n`);
  });

  it('MCP: wait_for_code with inbox "+15555550142" answers the code', async () => {
    const client = new Client({ name: 'phone-inbox-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.httpUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiToken}` } } }));
    try {
      for (const written of WRITTEN) {
        const r = (await client.callTool({ name: 'wait_for_code', arguments: { inbox: written } })) as { structuredContent?: Record<string, unknown>; isError?: boolean };
        assert.notEqual(r.isError, true, JSON.stringify(r));
        assert.equal(r.structuredContent?.code, CODE, written);
      }
    } finally {
      await client.close();
    }
  });

  it('SMTP: mail to +15555550142@domain lands in the phone inbox that every surface reads', async () => {
    const mailer = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      await mailer.sendMail({ from: 'gateway@acme.test', to: `+15555550142@${DOMAIN}`, subject: 'via email', text: 'Your Acme code is 777111' });
    } finally {
      mailer.close();
    }
    const list = (await (await get(`/api/v2/domains/${DOMAIN}/inboxes/${DIGITS}`)).json()) as { msgs: Array<{ to: string }> };
    assert.equal(list.msgs.length, 2);
    const plus = (await (await get(`/api/v2/domains/${DOMAIN}/inboxes/${encodeURIComponent('+15555550142')}/code`)).json()) as { code: string };
    assert.equal(plus.code, '777111');
  });
});
