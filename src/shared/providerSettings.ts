// What an app needs to send through a provider's SDK into the local server (Copy Provider
// Settings…, Copy SMS Settings): per provider the `.env` lines (its base URL setting and the key)
// and the one line of SDK configuration that reads them. Pure (no vscode import): the editor's
// commands and the CLI's `provider-settings` print the same lines; the server
// tests run each line against a real server.

export type ProviderId = 'resend' | 'sendgrid' | 'postmark' | 'mailgun' | 'ses' | 'twilio';

interface ProviderSettingsInput {
  /** The server's HTTP base URL, `http://127.0.0.1:2580`. */
  baseUrl: string;
  /** The provider key (Resend, SendGrid, Postmark, Mailgun, SES). */
  providerKey?: string;
  /** Twilio: an Account SID and the Twilio auth token. */
  twilioAccountSid?: string;
  twilioAuthToken?: string;
  /** The server's default domain (Mailgun's sending domain in the example). */
  domain: string;
}

interface ProviderChoice {
  id: ProviderId;
  label: string;
  /** The SDK the line configures. */
  sdk: string;
  /** The page of the docs about it. */
  docs: string;
}

export const PROVIDERS: readonly ProviderChoice[] = [
  { id: 'resend', label: 'Resend', sdk: 'resend', docs: 'docs/providers.md' },
  { id: 'sendgrid', label: 'SendGrid', sdk: '@sendgrid/mail', docs: 'docs/providers.md' },
  { id: 'postmark', label: 'Postmark', sdk: 'postmark', docs: 'docs/providers.md' },
  { id: 'mailgun', label: 'Mailgun', sdk: 'mailgun.js', docs: 'docs/providers.md' },
  { id: 'ses', label: 'Amazon SES v2', sdk: '@aws-sdk/client-sesv2', docs: 'docs/providers.md' },
  { id: 'twilio', label: 'Twilio (SMS and Verify)', sdk: 'twilio', docs: 'docs/twilio.md' },
];

/**
 * The one line of `twilio` configuration that sends every https://*.twilio.com host (Messages at
 * api., Verify at verify.) to the server: the SDK has no base-URL option.
 */
export const TWILIO_NODE_CLIENT =
  "require('twilio')(process.env.TWILIO_ACCOUNT_SID, process.env.TWILIO_AUTH_TOKEN, { httpClient: Object.assign(new (require('twilio/lib/base/RequestClient'))(), { request(o) { return Object.getPrototypeOf(this).request.call(this, { ...o, uri: o.uri.replace(/^https:\\/\\/[a-z0-9.-]*\\.twilio\\.com/, process.env.TWILIO_API_BASE_URL) }); } }) })";

/** The one line of Node SDK configuration per provider; each reads the `.env` names of providerEnv. */
export const SDK_LINES: Record<ProviderId, string> = {
  resend: "new (require('resend').Resend)(process.env.RESEND_API_KEY, { baseUrl: process.env.RESEND_BASE_URL })",
  sendgrid: "require('@sendgrid/mail').setApiKey(process.env.SENDGRID_API_KEY).client.setDefaultRequest('baseUrl', process.env.SENDGRID_BASE_URL)",
  postmark: "new (require('postmark').ServerClient)(process.env.POSTMARK_SERVER_TOKEN, { useHttps: false, requestHost: process.env.POSTMARK_API_HOST })",
  mailgun: "new (require('mailgun.js'))(require('form-data')).client({ username: 'api', key: process.env.MAILGUN_API_KEY, url: process.env.MAILGUN_API_URL })",
  ses: "new (require('@aws-sdk/client-sesv2').SESv2Client)({ endpoint: process.env.AWS_ENDPOINT_URL_SESV2 })",
  twilio: TWILIO_NODE_CLIENT,
};

/** The `.env` lines of a provider: its base URL setting and its key. */
export function providerEnv(id: ProviderId, o: ProviderSettingsInput): Array<[string, string]> {
  const key = o.providerKey ?? '';
  switch (id) {
    case 'resend':
      // The resend SDK reads RESEND_BASE_URL by itself.
      return [['RESEND_API_KEY', key], ['RESEND_BASE_URL', o.baseUrl]];
    case 'sendgrid':
      return [['SENDGRID_API_KEY', key], ['SENDGRID_BASE_URL', o.baseUrl]];
    case 'postmark':
      return [['POSTMARK_SERVER_TOKEN', key], ['POSTMARK_API_HOST', new URL(o.baseUrl).host]];
    case 'mailgun':
      return [['MAILGUN_API_KEY', key], ['MAILGUN_API_URL', o.baseUrl], ['MAILGUN_DOMAIN', o.domain]];
    case 'ses':
      // The AWS SDKs read AWS_ENDPOINT_URL_SESV2 by themselves; any access key id is taken.
      return [['AWS_ACCESS_KEY_ID', 'test-inbox'], ['AWS_SECRET_ACCESS_KEY', key], ['AWS_REGION', 'us-east-1'], ['AWS_ENDPOINT_URL_SESV2', o.baseUrl]];
    case 'twilio':
      return [['TWILIO_API_BASE_URL', o.baseUrl], ['TWILIO_ACCOUNT_SID', o.twilioAccountSid ?? ''], ['TWILIO_AUTH_TOKEN', o.twilioAuthToken ?? '']];
  }
}

/** What Copy Provider Settings… copies: a comment naming the provider, the `.env` lines, and the SDK line as a comment. */
export function providerSettingsText(id: ProviderId, o: ProviderSettingsInput): string {
  const p = PROVIDERS.find((x) => x.id === id)!;
  return [
    `# Test Inbox: ${p.label} API of the local server (${p.docs})`,
    ...providerEnv(id, o).map(([k, v]) => `${k}=${v}`),
    `# Node (${p.sdk}): ${SDK_LINES[id]}`,
    '',
  ].join('\n');
}
