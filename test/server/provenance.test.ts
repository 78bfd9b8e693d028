// "Sent through" (the message view's provenance) and every X-Test-Inbox-* header field are the
// server's own (src/server/ownFields.ts): no sender writes one. A real server on port 0; mail
// over real SMTP (nodemailer) and through the provider routes with their official SDKs (SendGrid,
// Postmark, SES v2 Raw) and Mailgun's form fields (as its own tests send them), each giving its
// own forged X-Test-Inbox-* fields. Read back through the mail API and the message view's state.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { Client as SendGridClient } from '@sendgrid/client';
import { MailService } from '@sendgrid/mail';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { ServerClient } from 'postmark';
import type { Message } from '../../src/core/wire';
import { type InboxServer, startInboxServer } from '../../src/server/server';
import { buildViewContent } from '../../src/webview-ui/viewContent';

const DOMAIN = 'inbox.test';
const KEY = 'SG.provenance-test-key-aaaa.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const FORGED = { 'X-Test-Inbox-Api': 'Resend (POST /emails)', 'x-test-inbox-provider-id': 'zq9-forged-id', 'X-TEST-INBOX-TEST-MODE': 'zq9-forged' };

describe('G15: X-Test-Inbox-* header fields are the server\'s own: "Sent through" cannot be forged (real SMTP, provider SDKs)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: InboxServer;
  const apiToken = 'provenance-api-token-0123456789abcdef';

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-provenance-'));
    server = await startInboxServer({ host: '127.0.0.1', httpPort: 0, smtpPort: 0, dataDir, apiToken, webhookToken: 'provenance-webhook-token-0123456789', providerKey: KEY, defaultDomain: DOMAIN });
  });
  after(async () => {
    await server?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const get = async (p: string): Promise<Response> => {
    const r = await fetch(`${server.httpUrl}/api/v2/domains/${DOMAIN}${p}`, { headers: { authorization: apiToken } });
    assert.equal(r.status, 200, `${p}: ${r.status}`);
    return r;
  };

  /** The one message of an inbox: its JSON, raw source, and the "Sent through" the view shows. */
  async function stored(inbox: string): Promise<{ headers: Record<string, string>; raw: string; via: string | undefined }> {
    const list = (await (await get(`/inboxes/${inbox}`)).json()) as { msgs: Array<{ id: string }> };
    assert.equal(list.msgs.length, 1, inbox);
    const id = list.msgs[0].id;
    const message = (await (await get(`/inboxes/${inbox}/messages/${id}`)).json()) as Message & { headers: Record<string, string> };
    const raw = await (await get(`/inboxes/${inbox}/messages/${id}/raw`)).text();
    return { headers: message.headers, raw, via: buildViewContent({ domain: DOMAIN, message, raw, allowRemoteImages: false }).header.via };
  }

  function assertNoForgery(m: { headers: Record<string, string>; raw: string }, what: string): void {
    assert.doesNotMatch(m.raw, /Resend \(POST \/emails\)|zq9-forged/, `${what}: no forged field is stored`);
    assert.equal(m.raw.split(/\r?\n\r?\n/, 1)[0].match(/^x-test-inbox-api:/gim)?.length ?? 0, what === 'SMTP' ? 0 : 1, `${what}: one X-Test-Inbox-Api field at most, the server's`);
  }

  it('SMTP: a sender\'s X-Test-Inbox-* fields (any case, folded) are dropped; the view names no API', async () => {
    const mailer = nodemailer.createTransport({ host: server.smtpHost, port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      await mailer.sendMail({ from: 'a@acme.test', to: `smtp-forged@${DOMAIN}`, subject: 'Forged provenance', text: 'X-Test-Inbox-Api: in the body stays', headers: { ...FORGED, 'X-Other': 'kept' } });
      // A field folded over lines, written by hand.
      await mailer.sendMail({
        envelope: { from: 'a@acme.test', to: [`smtp-folded@${DOMAIN}`] },
        raw: 'From: a@acme.test\r\nX-Test-Inbox-Api: Resend\r\n (POST /emails)\r\nSubject: Folded\r\nX-Kept: yes\r\n\r\nbody\r\n',
      });
    } finally {
      mailer.close();
    }
    const m = await stored('smtp-forged');
    assertNoForgery(m, 'SMTP');
    assert.equal(m.via, undefined);
    assert.equal(m.headers['x-other'], 'kept', 'other fields stay');
    assert.match(m.raw, /X-Test-Inbox-Api: in the body stays/, 'the body is not touched');
    const folded = await stored('smtp-folded');
    assertNoForgery(folded, 'SMTP');
    assert.equal(folded.via, undefined);
    assert.equal(folded.headers['x-kept'], 'yes');
    assert.equal(folded.headers.subject, 'Folded');
  });

  it('provider routes: the custom headers of SendGrid, Postmark and Mailgun and an SES Raw message cannot set it; the server\'s own is shown', async () => {
    const client = new SendGridClient();
    client.setApiKey(KEY);
    client.setDefaultRequest('baseUrl', server.httpUrl);
    const sg = new MailService();
    sg.setClient(client);
    await sg.send({ to: `sg-forged@${DOMAIN}`, from: 'a@acme.test', subject: 's', text: 't', headers: FORGED });
    const sgm = await stored('sg-forged');
    assertNoForgery(sgm, 'SendGrid');
    assert.equal(sgm.via, 'SendGrid (POST /v3/mail/send)');
    assert.notEqual(sgm.headers['x-test-inbox-provider-id'], 'zq9-forged-id');

    const pm = new ServerClient(KEY, { useHttps: false, requestHost: new URL(server.httpUrl).host });
    await pm.sendEmail({ From: 'a@acme.test', To: `pm-forged@${DOMAIN}`, Subject: 's', TextBody: 't', Headers: Object.entries(FORGED).map(([Name, Value]) => ({ Name, Value })) });
    const pmm = await stored('pm-forged');
    assertNoForgery(pmm, 'Postmark');
    assert.equal(pmm.via, 'Postmark (POST /email)');

    const form = new URLSearchParams([['from', 'a@mg.acme.test'], ['to', `mg-forged@${DOMAIN}`], ['subject', 's'], ['text', 't'], ...Object.entries(FORGED).map(([k, v]): [string, string] => [`h:${k}`, v])]);
    const mg = await fetch(`${server.httpUrl}/v3/mg.acme.test/messages`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`api:${KEY}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    assert.equal(mg.status, 200, await mg.clone().text());
    const mgm = await stored('mg-forged');
    assertNoForgery(mgm, 'Mailgun');
    assert.match(mgm.via ?? '', /^Mailgun /);

    const raw = await new MailComposer({ from: 'a@acme.test', to: `ses-forged@${DOMAIN}`, subject: 'Raw', text: 'raw', headers: FORGED }).compile().build();
    const ses = new SESv2Client({ region: 'eu-west-1', endpoint: server.httpUrl, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: KEY }, maxAttempts: 1 });
    await ses.send(new SendEmailCommand({ Destination: { ToAddresses: [`ses-forged@${DOMAIN}`] }, Content: { Raw: { Data: raw } } }));
    const sesm = await stored('ses-forged');
    assertNoForgery(sesm, 'SES');
    assert.match(sesm.via ?? '', /^Amazon SES v2 .*Raw$/);
  });
});
