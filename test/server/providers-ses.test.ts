// Amazon SES v2 SendEmail on the local server, driven by the official `@aws-sdk/client-sesv2`
// (its documented `endpoint` option; the provider key as the secret access key) against a real
// server on port 0. The signature window is tested with the SDK's own `systemClockOffset` and with
// the server's clock moved forward.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { SESv2Client, SendEmailCommand, type SendEmailCommandInput } from '@aws-sdk/client-sesv2';
import { SignatureV4 } from '@smithy/signature-v4';
import MailComposer from 'nodemailer/lib/mail-composer';
import { mimeJobsDone } from '../../src/server/workers/pool';
import { API_TOKEN } from './api-harness';
import { header, onlyMessage, PIXEL, PROVIDER_KEY, type ProviderHarness, readInbox, startProviders } from './providers-harness';

describe('Amazon SES v2 SendEmail (server, real HTTP, official SDK)', () => {
  let h: ProviderHarness;
  const client = (over: Partial<ConstructorParameters<typeof SESv2Client>[0]> = {}) =>
    new SESv2Client({ region: 'eu-west-1', endpoint: h.base, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: PROVIDER_KEY }, maxAttempts: 1, ...over });
  const simple = (to: string, subject = 'Hello'): SendEmailCommandInput => ({
    FromEmailAddress: 'no-reply@acme.test',
    Destination: { ToAddresses: [to] },
    Content: { Simple: { Subject: { Data: subject }, Body: { Text: { Data: 'hi' } } } },
  });
  beforeEach(async () => {
    h = await startProviders();
  });
  afterEach(() => h.close());

  it('sends Simple content with HTML, text, attachments, tags and a configuration set; answers {MessageId}', async () => {
    const out = await client().send(
      new SendEmailCommand({
        FromEmailAddress: 'Acme <no-reply@acme.test>',
        Destination: { ToAddresses: ['ann@inbox.test'], CcAddresses: ['carl@inbox.test'], BccAddresses: ['audit@inbox.test'] },
        ReplyToAddresses: ['help@acme.test'],
        Content: {
          Simple: {
            Subject: { Data: 'Your code is 161803' },
            Body: { Text: { Data: 'Your code is 161803' }, Html: { Data: '<p>Your code is <b>161803</b><img src="cid:logo"></p>' } },
            Headers: [{ Name: 'X-Campaign', Value: 'spring' }],
            Attachments: [
              { FileName: 'notes.txt', RawContent: Buffer.from('hello'), ContentType: 'text/plain' },
              { FileName: 'logo.png', RawContent: PIXEL, ContentType: 'image/png', ContentDisposition: 'INLINE', ContentId: 'logo' },
            ],
          },
        },
        EmailTags: [{ Name: 'flow', Value: 'signup' }],
        ConfigurationSetName: 'transactional',
      }),
    );
    assert.match(out.MessageId!, /^0100[0-9a-f]{12}-[0-9a-f-]{36}-000000$/);
    const ann = await onlyMessage(h, 'ann');
    assert.equal(ann.json.subject, 'Your code is 161803');
    assert.equal(header(ann, 'X-Test-Inbox-Api'), 'Amazon SES v2 (POST /v2/email/outbound-emails), Simple');
    assert.equal(header(ann, 'X-Test-Inbox-Provider-Id'), out.MessageId);
    assert.equal(header(ann, 'X-SES-CONFIGURATION-SET'), 'transactional');
    assert.equal(header(ann, 'X-SES-MESSAGE-TAGS'), 'flow=signup');
    assert.equal(header(ann, 'X-Campaign'), 'spring');
    assert.doesNotMatch(ann.raw, /audit@inbox\.test/);
    assert.ok(ann.json.parts.some((p) => p.body.includes('<b>161803</b>')));
    assert.ok(ann.json.parts.some((p) => p.body.trim() === 'Your code is 161803'));
    assert.deepEqual(ann.attachments.map((a) => a.filename).sort(), ['logo.png', 'notes.txt']);
    assert.equal((await onlyMessage(h, 'carl')).json.subject, 'Your code is 161803');
    assert.equal((await onlyMessage(h, 'audit')).json.subject, 'Your code is 161803');
  });

  it('sends Raw content to its Destination, or to the headers of the message when there is none', async () => {
    const raw = await new MailComposer({ from: 'a@acme.test', to: 'hdr@inbox.test', subject: 'Raw 141421', text: 'code 141421' }).compile().build();
    await client().send(new SendEmailCommand({ Destination: { ToAddresses: ['dest@inbox.test'] }, Content: { Raw: { Data: raw } } }));
    assert.equal((await onlyMessage(h, 'dest')).json.subject, 'Raw 141421');
    assert.equal((await readInbox(h, 'hdr')).length, 0);
    const parsedBefore = mimeJobsDone.rawRecipients ?? 0;
    await client().send(new SendEmailCommand({ Content: { Raw: { Data: raw } } }));
    // The message's own recipients were read on a MIME worker, not the event loop (issue 35 G5).
    assert.equal((mimeJobsDone.rawRecipients ?? 0) - parsedBefore, 1);
    const m = await onlyMessage(h, 'hdr');
    assert.equal(header(m, 'X-Test-Inbox-Api'), 'Amazon SES v2 (POST /v2/email/outbound-emails), Raw');
  });

  it('a Template send is stored with its name and data as text', async () => {
    await client().send(new SendEmailCommand({ FromEmailAddress: 'a@acme.test', Destination: { ToAddresses: ['tpl@inbox.test'] }, Content: { Template: { TemplateName: 'Welcome', TemplateData: '{"code":"424242"}' } } }));
    const m = await onlyMessage(h, 'tpl');
    assert.match(header(m, 'X-Test-Inbox-Template') ?? '', /Welcome.*not rendered/);
    assert.match(m.json.parts[0].body, /code: 424242/);
  });

  it('a wrong secret gets SignatureDoesNotMatch; no other token opens the route; a missing signature is refused', async () => {
    const wrong = new SESv2Client({ region: 'eu-west-1', endpoint: h.base, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: 'wrong-secret' }, maxAttempts: 1 });
    await assert.rejects(wrong.send(new SendEmailCommand(simple('x@inbox.test'))), (e: { name: string; $metadata: { httpStatusCode: number } }) => {
      assert.equal(e.name, 'SignatureDoesNotMatch');
      assert.equal(e.$metadata.httpStatusCode, 403);
      return true;
    });
    const api = new SESv2Client({ region: 'eu-west-1', endpoint: h.base, credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: API_TOKEN }, maxAttempts: 1 });
    await assert.rejects(api.send(new SendEmailCommand(simple('x@inbox.test'))), { name: 'SignatureDoesNotMatch' });
    const none = await h.call('POST', '/v2/email/outbound-emails', { body: simple('x@inbox.test'), headers: { authorization: undefined } });
    assert.equal(none.status, 403);
    assert.equal(none.headers['x-amzn-errortype'], 'MissingAuthenticationTokenException');
    const unsigned = await h.call('POST', '/v2/email/outbound-emails', { body: simple('x@inbox.test'), headers: { authorization: 'AWS4-HMAC-SHA256 nonsense' } });
    assert.equal(unsigned.status, 400);
    assert.equal(unsigned.headers['x-amzn-errortype'], 'IncompleteSignatureException');
    assert.equal((await readInbox(h, 'x')).length, 0);
  });

  it("refuses a signature outside AWS's 5-minute window (the SDK's systemClockOffset, or the server's clock moved); the SDK corrects its clock from the server's Date and retries", async () => {
    const skewed = client({ systemClockOffset: -10 * 60_000 });
    await assert.rejects(skewed.send(new SendEmailCommand(simple('late@inbox.test'))), (e: { name: string; message: string }) => {
      assert.equal(e.name, 'InvalidSignatureException');
      assert.match(e.message, /^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 5 min\.\)$/);
      return true;
    });
    const early = client({ systemClockOffset: 10 * 60_000 });
    await assert.rejects(early.send(new SendEmailCommand(simple('late@inbox.test'))), (e: { message: string }) => /^Signature not yet current/.test(e.message));
    // Inside the window: taken.
    await client({ systemClockOffset: -4 * 60_000 }).send(new SendEmailCommand(simple('late@inbox.test', 'four minutes slow')));
    assert.equal((await onlyMessage(h, 'late')).json.subject, 'four minutes slow');

    // The server's clock moves 20 minutes on: a client on the real clock is now outside the window…
    h.clock.advance(20 * 60_000);
    await assert.rejects(client().send(new SendEmailCommand(simple('moved@inbox.test'))), { name: 'InvalidSignatureException' });
    // …and the SDK, allowed to retry, takes the server's Date header as its clock and is then taken.
    const retrying = client({ maxAttempts: 3 });
    await retrying.send(new SendEmailCommand(simple('moved@inbox.test', 'after the skew correction')));
    assert.ok(Math.abs((retrying.config.systemClockOffset ?? 0) - 20 * 60_000) < 60_000, `offset ${String(retrying.config.systemClockOffset)}`);
    assert.equal((await onlyMessage(h, 'moved')).json.subject, 'after the skew correction');
  });

  it('G7: a signature that does not cover the body (x-amz-content-sha256: UNSIGNED-PAYLOAD) is refused; the body is always hashed', async () => {
    const bytes = (v: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
      typeof v === 'string' ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    /** SHA-256 and HMAC from node:crypto, in the shape the signer takes. */
    class Sha256 {
      #h;
      constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
        this.#h = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
      }
      update(data: string | ArrayBuffer | ArrayBufferView): void {
        this.#h.update(bytes(data));
      }
      digest(): Promise<Uint8Array> {
        return Promise.resolve(new Uint8Array(this.#h.digest()));
      }
    }
    const signer = new SignatureV4({ credentials: { accessKeyId: 'AKIDLOCALTEST', secretAccessKey: PROVIDER_KEY }, region: 'eu-west-1', service: 'ses', sha256: Sha256 });
    const send = async (stated: string | undefined, body: string) => {
      const host = `127.0.0.1:${h.port}`;
      const headers: Record<string, string> = { host, 'content-type': 'application/json', ...(stated === undefined ? {} : { 'x-amz-content-sha256': stated }) };
      const signed = await signer.sign({ method: 'POST', protocol: 'http:', hostname: '127.0.0.1', port: h.port, path: '/v2/email/outbound-emails', headers, body });
      return h.call('POST', '/v2/email/outbound-emails', { body, headers: signed.headers });
    };
    const body = JSON.stringify(simple('unsigned@inbox.test', 'not covered by the signature'));
    const unsigned = await send('UNSIGNED-PAYLOAD', body);
    assert.equal(unsigned.status, 403, unsigned.text);
    assert.equal(unsigned.headers['x-amzn-errortype'], 'SignatureDoesNotMatch');
    const wrongHash = await send(createHash('sha256').update('another body').digest('hex'), body);
    assert.equal(wrongHash.status, 403);
    assert.equal((await readInbox(h, 'unsigned')).length, 0);
    // The body's own hash, stated or computed by the server, is taken.
    assert.equal((await send(createHash('sha256').update(body).digest('hex'), body)).status, 200);
    assert.equal((await send(undefined, body)).status, 200);
    assert.equal((await readInbox(h, 'unsigned')).length, 2);
  });

  it('bad input gets SES 400s in the REST-JSON shape; nothing is stored', async () => {
    const cases: Array<[SendEmailCommandInput, string, RegExp]> = [
      [{ ...simple('x@inbox.test'), FromEmailAddress: undefined }, 'BadRequestException', /FromEmailAddress is required/],
      [{ ...simple('x@inbox.test'), Destination: { ToAddresses: ['not an address'] } }, 'MessageRejected', /Illegal address/],
      [{ ...simple('x@inbox.test'), Destination: { ToAddresses: Array.from({ length: 51 }, (_, i) => `r${i}@inbox.test`) } }, 'MessageRejected', /Recipient count exceeds 50/],
      [{ ...simple('x@inbox.test'), Content: {} }, 'BadRequestException', /exactly one of Simple, Raw or Template/],
      [{ ...simple('x@inbox.test'), Destination: {} }, 'BadRequestException', /at least one recipient/],
    ];
    for (const [input, name, message] of cases) {
      await assert.rejects(client().send(new SendEmailCommand(input)), (e: { name: string; message: string; $metadata: { httpStatusCode: number } }) => {
        assert.equal(e.name, name);
        assert.equal(e.$metadata.httpStatusCode, 400);
        assert.match(e.message, message);
        return true;
      });
    }
    assert.equal((await readInbox(h, 'x')).length, 0);
  });
});
