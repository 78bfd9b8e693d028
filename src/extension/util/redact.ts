// Redaction of tokens in anything written to the log. Pure.
import { hideUrlCredentials } from '../../core/urls';
import { SERVER_ENV_NAMES } from '../../server/contract';

/** What a redacted secret is replaced with. */
export const REDACTED = '***';
/** Secrets shorter than this are not searched for: redacting "a" would mangle every line. */
const MIN_SECRET_LENGTH = 4;

const PATTERNS: RegExp[] = [
  /(authorization\s*[:=]\s*"?)[^\s",}]+/gi,
  /(\b(?:token|whtoken)=)[^&\s"']+/gi,
  /("(?:apiToken|webhookToken|token|whtoken)"\s*:\s*")[^"]*/gi,
  // `NAME=value` of the variables the server takes its tokens from.
  new RegExp(`((?:${SERVER_ENV_NAMES.join('|')})=)\\S+`, 'g'),
];

export function redact(text: string, secrets: Iterable<string> = []): string {
  // A URL's user name and password are secrets wherever the URL is quoted.
  let out = hideUrlCredentials(text);
  for (const s of secrets) {
    if (s.length >= MIN_SECRET_LENGTH) out = out.split(s).join(REDACTED);
  }
  for (const re of PATTERNS) out = out.replace(re, `$1${REDACTED}`);
  return out;
}
