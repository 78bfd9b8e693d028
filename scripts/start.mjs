// `npm start`: builds, starts the local inbox server with a few sample messages and
// prints where to look. The server keeps running until Ctrl+C.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';

const root = new URL('..', import.meta.url).pathname;
execFileSync(process.execPath, [join(root, 'esbuild.mjs')], { cwd: root, stdio: 'inherit' });

const dataDir = process.env.TEST_INBOX_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'test-inbox-demo-'));
const apiToken = randomBytes(18).toString('base64url');
const webhookToken = randomBytes(18).toString('base64url');
const server = spawn(process.execPath, [join(root, 'dist/cli.js'), 'serve', '--data-dir', dataDir, ...process.argv.slice(2)], {
  env: { ...process.env, TEST_INBOX_API_TOKEN: apiToken, TEST_INBOX_WEBHOOK_TOKEN: webhookToken },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const stop = () => server.kill('SIGTERM');
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.on('exit', (code) => process.exit(code ?? 0));

const ready = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: server.stdout });
  lines.once('line', (line) => resolve(JSON.parse(line)));
  server.once('exit', (code) => reject(new Error(`the server exited with code ${code} before it was ready`)));
});

const [smtpHost, smtpPort] = ready.smtp.split(':');
await seed(ready.http, smtpHost, Number(smtpPort));

console.log(`
Test Inbox local server is running.
  HTTP API   ${ready.http}   (Authorization: ${apiToken})
  SMTP       ${ready.smtp}   (no auth, no TLS; any address@any domain)
  Data       ${dataDir}

Try:
  curl -H 'Authorization: ${apiToken}' ${ready.http}/api/v2/domains/private/inboxes/demo
  curl -H 'Authorization: ${apiToken}' ${ready.http}/api/v2/domains/private/inboxes/15555550123
  curl -X POST -H 'Content-Type: application/json' -d '{"from":"ci","subject":"Hello","text":"Your code is 424242"}' \\
    ${ready.http}/api/v2/domains/${webhookToken}/webhook/demo/

Press Ctrl+C to stop.`);

async function seed(http, host, port) {
  const transport = nodemailer.createTransport({ host, port, secure: false, ignoreTLS: true });
  await transport.sendMail({
    from: 'Acme Newsletter <news@acme.test>',
    to: 'demo@inbox.test',
    subject: 'Your November report',
    text: 'Your November report is attached.\n\nView online: https://acme.test/reports/11',
    html: '<h1 style="color:#0b7">Your November report</h1><p>It is attached. <a href="https://acme.test/reports/11">View online</a>.</p>',
    attachments: [{ filename: 'report.csv', content: 'month,signups\n2026-11,42\n', contentType: 'text/csv' }],
  });
  await transport.sendMail({
    from: 'Acme <no-reply@acme.test>',
    to: 'demo@inbox.test',
    subject: 'Confirm your email address',
    text: 'Welcome to Acme!\n\nYour verification code is 482 913.\nIt expires in 10 minutes.',
    html: '<p>Welcome to Acme!</p><p>Your verification code is <b>482 913</b>.</p><p>It expires in 10 minutes.</p>',
  });
  transport.close();
  const res = await fetch(`${http}/api/v2/domains/private/inboxes/15555550123`, {
    method: 'POST',
    headers: { authorization: apiToken, 'content-type': 'application/json' },
    body: JSON.stringify({ from: '15555550100', subject: 'SMS', text: 'Your Acme login code is 731904. Do not share it.\n\n@acme.test #731904' }),
  });
  if (!res.ok) throw new Error(`injecting the sample SMS failed: HTTP ${res.status} ${await res.text()}`);
}
