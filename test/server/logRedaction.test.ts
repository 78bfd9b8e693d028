// Every log path of the server redacts its tokens. The server runs as a child process with its
// tokens in the environment, as the extension starts it; a token is then pushed through each
// path that writes to stderr: the CLI's own lines (the data dir's path holds the Twilio token),
// the store's warnings at open (a file named after the webhook token), an HTTP storage failure
// (an inbox named after the API token) and an SMTP storage failure (a recipient named after the
// webhook token). Neither the token, nor its lower-case form, nor its file-name form may appear.
// (The extension's output channel has its own test: test/unit/extension-redact.test.ts; both use
// core/redact.ts.)

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import nodemailer from 'nodemailer';
import { encodeFileName } from '../../src/core/fileNames';
import { API_TOKEN_ENV, PROVIDER_KEY_ENV, TWILIO_AUTH_TOKEN_ENV, WEBHOOK_TOKEN_ENV } from '../../src/shared/contract';
import { MAIL_DIR } from '../../src/server/store/maildir/layout';
import { type Running, startCli } from './cliProcess';

// Mixed case and an underscore, like real base64url tokens: the store lower-cases and encodes names.
const API = 'ApiTok_en9XyZ-secret0123456789Ab';
const WEBHOOK = 'WebHook_Tok9QrS-secret0123456789';
const TWILIO = 'TwiLio_Tok9LmN-secret0123456789x';
const PROVIDER = 'SG.ProvKey_9AbC-secret012.sEcReT-0123456789-abcdefghij';

describe('log redaction (real server, every log path)', function () {
  this.timeout(60_000);
  let root: string;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-redact-'));
  });

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await fs.rm(root, { recursive: true, force: true });
  });

  function serve(dataDir: string): Running {
    const r = startCli(['serve', '--http-port', '0', '--smtp-port', '0', '--data-dir', dataDir], { [API_TOKEN_ENV]: API, [WEBHOOK_TOKEN_ENV]: WEBHOOK, [TWILIO_AUTH_TOKEN_ENV]: TWILIO, [PROVIDER_KEY_ENV]: PROVIDER });
    children.push(r.child);
    return r;
  }

  it('writes no token to stderr through the CLI, the store, HTTP or SMTP', async () => {
    const dataDir = path.join(root, `data-${TWILIO}`);
    const first = serve(dataDir);
    await first.ready;
    await first.stop();

    const domainDir = path.join(dataDir, MAIL_DIR, 'inbox.test');
    await fs.mkdir(path.join(domainDir, 'joe', 'new'), { recursive: true });
    await fs.writeFile(path.join(domainDir, 'joe', 'new', `${WEBHOOK}.txt`), 'not a message');
    // Files where the inboxes named after tokens would go: storing there fails and is logged with the path.
    await fs.writeFile(path.join(domainDir, encodeFileName(API.toLowerCase())), 'blocks the inbox directory');
    await fs.writeFile(path.join(domainDir, encodeFileName(WEBHOOK.toLowerCase())), 'blocks the inbox directory');

    const r = serve(dataDir);
    const ready = await r.ready;
    const inject = await fetch(`${ready.http}/api/v2/domains/inbox.test/inboxes/${API}`, {
      method: 'POST',
      headers: { authorization: API, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'a@example.com', subject: 'x', text: 'x' }),
    });
    assert.equal(inject.status, 500);
    const [host, port] = ready.smtp.split(':');
    const transport = nodemailer.createTransport({ host, port: Number(port), secure: false, ignoreTLS: true });
    await assert.rejects(transport.sendMail({ from: 'a@example.com', to: `${WEBHOOK}@inbox.test`, subject: 'x', text: 'x' }), (e: { responseCode?: number }) => e.responseCode === 451);
    await r.stop();

    const stderr = first.stderr() + r.stderr();
    // Each path was taken (so the checks below are not vacuous).
    assert.match(stderr, /listening: .* data in .*data-\*\*\*/, 'the CLI line naming the data dir');
    assert.match(stderr, /store: skipping .*\*\*\*\.txt: not a message file/, 'the store warning naming the file');
    assert.match(stderr, /POST \/api\/v2\/domains\/inbox\.test\/inboxes\/\*\*\*: storage failed/, 'the HTTP failure naming the path');
    assert.match(stderr, /smtp: could not store a message: .*\*\*\*/, 'the SMTP failure naming the inbox directory');
    for (const t of [API, WEBHOOK, TWILIO, PROVIDER]) {
      for (const form of [t, t.toLowerCase(), encodeFileName(t.toLowerCase())]) {
        assert.ok(!stderr.toLowerCase().includes(form.toLowerCase()), `stderr holds ${form}:\n${stderr}`);
      }
    }
  });
});
