// The hosts the CONNECT proxy answers for (`--compat`, docs/compat.md "Mailosaur"): each a full
// host name, never a domain; port 443 only. The tunnel's target selects the emulated API whose
// routes answer inside it. The local CA's Name Constraints permit exactly these names.

/** The SES v2 endpoints, one by one (`email.<region>.amazonaws.com`): never `*.amazonaws.com`. */
const SES_REGIONS = [
  'us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'us-gov-east-1', 'us-gov-west-1',
  'ca-central-1', 'ca-west-1', 'sa-east-1', 'mx-central-1',
  'eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-central-1', 'eu-central-2', 'eu-north-1', 'eu-south-1', 'eu-south-2',
  'ap-south-1', 'ap-south-2', 'ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3',
  'ap-southeast-1', 'ap-southeast-2', 'ap-southeast-3', 'ap-southeast-4', 'ap-southeast-5', 'ap-east-1',
  'il-central-1', 'me-south-1', 'me-central-1', 'af-south-1',
] as const;

/** Which emulated API a tunnel reaches. */
export type ProxiedApi = 'mailosaur' | 'twilio' | 'verify' | 'resend' | 'sendgrid' | 'postmark' | 'mailgun' | 'ses';

/** Every host the proxy answers for, and the API it selects. */
export const PROXIED_HOSTS: ReadonlyMap<string, ProxiedApi> = new Map<string, ProxiedApi>([
  ['mailosaur.com', 'mailosaur'],
  ['api.twilio.com', 'twilio'],
  ['verify.twilio.com', 'verify'],
  ['api.resend.com', 'resend'],
  ['api.sendgrid.com', 'sendgrid'],
  ['api.postmarkapp.com', 'postmark'],
  ['api.mailgun.net', 'mailgun'],
  ['api.eu.mailgun.net', 'mailgun'],
  ...SES_REGIONS.map((r): [string, ProxiedApi] => [`email.${r}.amazonaws.com`, 'ses']),
]);

/** The only port a tunnel may name. */
export const PROXIED_PORT = 443;

/** The host of a CONNECT target `host:443` when the proxy answers for it; undefined otherwise (403). */
export function proxiedTarget(authority: string): string | undefined {
  const m = /^([a-z0-9.-]{1,253}):([0-9]{1,5})$/i.exec(authority);
  if (!m || Number(m[2]) !== PROXIED_PORT) return undefined;
  const host = m[1].toLowerCase();
  return PROXIED_HOSTS.has(host) ? host : undefined;
}
