// The settings Copy Provider Settings… and Copy SMS Settings hand out (src/shared/providerSettings.ts):
// each provider's `.env` lines and its one line of SDK configuration, run as an app would run
// them against a real server on port 0, each then sending a message that arrives.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { PROVIDERS, providerEnv, providerSettingsText, type ProviderId, SDK_LINES } from '../../src/shared/providerSettings';
import { LOCAL_TWILIO_ACCOUNT_SID } from '../../src/shared/contract';
import { DOMAIN, onlyMessage, PROVIDER_KEY, type ProviderHarness, startProviders } from './providers-harness';

const TWILIO_TOKEN = 'twilio-token-7e6d5c4b3a';

/** Runs a settings line as an app's code would: with `require` and the `.env` values in process.env. */
function runLine(id: ProviderId, env: Record<string, string>): unknown {
  const req = createRequire(__filename);
  return new Function('require', 'process', `return ${SDK_LINES[id]};`)(req, { env }) as unknown;
}

describe('provider settings (Copy Provider Settings…, Copy SMS Settings) against a real server', () => {
  let h: ProviderHarness;
  beforeEach(async () => {
    h = await startProviders({ twilioAuthToken: TWILIO_TOKEN });
  });
  afterEach(() => h.close());

  const envOf = (id: ProviderId): Record<string, string> =>
    Object.fromEntries(providerEnv(id, { baseUrl: h.base, providerKey: PROVIDER_KEY, domain: DOMAIN, twilioAccountSid: LOCAL_TWILIO_ACCOUNT_SID, twilioAuthToken: TWILIO_TOKEN }));

  it('every provider is offered, with .env lines and a commented SDK line, never the API token', () => {
    assert.deepEqual(PROVIDERS.map((p) => p.id), ['resend', 'sendgrid', 'postmark', 'mailgun', 'ses', 'twilio']);
    for (const p of PROVIDERS) {
      const text = providerSettingsText(p.id, { baseUrl: h.base, providerKey: PROVIDER_KEY, domain: DOMAIN, twilioAccountSid: LOCAL_TWILIO_ACCOUNT_SID, twilioAuthToken: TWILIO_TOKEN });
      assert.match(text, new RegExp(`^# Test Inbox: ${p.label.replace(/[()]/g, '\\$&')} API`));
      assert.ok(text.includes(`# Node (${p.sdk}): ${SDK_LINES[p.id]}`));
      for (const [k, v] of providerEnv(p.id, { baseUrl: h.base, providerKey: PROVIDER_KEY, domain: DOMAIN })) if (k !== 'TWILIO_ACCOUNT_SID' && k !== 'TWILIO_AUTH_TOKEN') assert.ok(text.includes(`${k}=${v}\n`), `${p.id} ${k}`);
    }
  });

  it('each SDK line, fed the .env lines, sends a message that arrives', async () => {
    const resend = runLine('resend', envOf('resend')) as { emails: { send(e: unknown): Promise<{ error: unknown }> } };
    assert.equal((await resend.emails.send({ from: 'a@acme.test', to: 'st-resend@inbox.test', subject: 'via resend', text: 'x' })).error, null);

    runLine('sendgrid', envOf('sendgrid'));
    // The line configures the SDK's default instance, as an app's `require('@sendgrid/mail')` then uses it.
    const sg = createRequire(__filename)('@sendgrid/mail') as { send(m: unknown): Promise<unknown> };
    await sg.send({ to: 'st-sendgrid@inbox.test', from: 'a@acme.test', subject: 'via sendgrid', text: 'x' });

    const pm = runLine('postmark', envOf('postmark')) as { sendEmail(m: unknown): Promise<unknown> };
    await pm.sendEmail({ From: 'a@acme.test', To: 'st-postmark@inbox.test', Subject: 'via postmark', TextBody: 'x' });

    const mg = runLine('mailgun', envOf('mailgun')) as { messages: { create(d: string, m: unknown): Promise<unknown> } };
    await mg.messages.create(envOf('mailgun').MAILGUN_DOMAIN, { from: 'a@acme.test', to: 'st-mailgun@inbox.test', subject: 'via mailgun', text: 'x' });

    // The AWS SDK takes its credentials and region from the environment: set for this call only.
    const sesEnv = envOf('ses');
    const saved = Object.fromEntries(Object.keys(sesEnv).map((k) => [k, process.env[k]]));
    Object.assign(process.env, sesEnv);
    try {
      const ses = runLine('ses', sesEnv) as { send(c: unknown): Promise<unknown> };
      await ses.send(new SendEmailCommand({ FromEmailAddress: 'a@acme.test', Destination: { ToAddresses: ['st-ses@inbox.test'] }, Content: { Simple: { Subject: { Data: 'via ses' }, Body: { Text: { Data: 'x' } } } } }));
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }

    for (const p of ['resend', 'sendgrid', 'postmark', 'mailgun', 'ses']) assert.equal((await onlyMessage(h, `st-${p}`)).json.subject, `via ${p}`);
  });

  it('the twilio line sends every *.twilio.com host here: Messages and Verify both arrive', async () => {
    const client = runLine('twilio', envOf('twilio')) as {
      messages: { create(m: unknown): Promise<{ sid: string }> };
      verify: { v2: { services: ((sid: string) => { verifications: { create(v: unknown): Promise<{ status: string }> } }) & { create(s: unknown): Promise<{ sid: string }> } } };
    };
    await client.messages.create({ to: '+15550100901', from: '+15550100000', body: 'via messages 918273' });
    const service = await client.verify.v2.services.create({ friendlyName: 'Settings' });
    assert.equal((await client.verify.v2.services(service.sid).verifications.create({ to: '+15550100902', channel: 'sms' })).status, 'pending');
    assert.match((await onlyMessage(h, '15550100901')).json.parts[0].body, /via messages/);
    assert.match((await onlyMessage(h, '15550100902')).json.parts[0].body, /Your Settings verification code is/);
  });
});
