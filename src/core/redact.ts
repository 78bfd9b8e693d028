// The one redaction of secrets in anything written to a log: the extension's output channel and
// the server's stderr both go through it. Pure, imports only core.
import { hideUrlCredentials } from './urls';

/** What a redacted secret is replaced with. */
export const REDACTED = '***';
/** Secrets shorter than this are not searched for: redacting "a" would mangle every line. */
const MIN_SECRET_LENGTH = 4;

const PATTERNS: RegExp[] = [
  /(authorization\s*[:=]\s*"?)[^\s",}]+/gi,
  /(\b(?:token|whtoken)=)[^&\s"']+/gi,
  /("(?:apiToken|webhookToken|twilioAuthToken|providerKey|token|whtoken)"\s*:\s*")[^"]*/gi,
  // `NAME=value` of environment variables that carry secrets (TEST_INBOX_API_TOKEN=…, RESEND_API_KEY=… and the like).
  /(\b[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|_KEY)=)\S+/g,
  // A SendGrid-shaped key (the provider key's shape, contract.ts generateProviderKey).
  /(\b)SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
];

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `text` with every known secret replaced by REDACTED, in any letter case (an inbox named like a
 * token is stored lower-case, and the lower-case form gives most of the token away), plus
 * authorization values, token query parameters, token JSON fields, secret environment variables
 * and the user info of URLs.
 */
export function redact(text: string, secrets: Iterable<string | undefined> = []): string {
  let out = hideUrlCredentials(text);
  for (const s of secrets) {
    if (s && s.length >= MIN_SECRET_LENGTH) out = out.replace(new RegExp(escapeRegExp(s), 'gi'), REDACTED);
  }
  for (const re of PATTERNS) out = out.replace(re, `$1${REDACTED}`);
  return out;
}
