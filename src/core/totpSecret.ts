// A TOTP secret as people paste it: a base32 secret, or an `otpauth://totp/…` URI (the text
// of a QR code an authenticator app scans), which also carries digits, algorithm and period.
// The URI is read with otpauth's own parser.
import { TOTP, URI } from 'otpauth';
import { DEFAULT_TOTP, MAX_TOTP_DIGITS, MAX_TOTP_PERIOD, MIN_TOTP_DIGITS, TOTP_ALGORITHMS, type TotpAlgorithm, type TotpOptions, base32SecretProblem } from './totp';

export type TotpSecret = { secret: string; options: TotpOptions; label?: string; issuer?: string } | { problem: string };

/** The base32 secret and options of `input`, or the problem that makes it unusable. */
export function parseTotpSecret(input: string): TotpSecret {
  const raw = input.trim();
  if (!/^otpauth:/i.test(raw)) {
    const problem = base32SecretProblem(raw);
    return problem ? { problem: `bad base32 secret: ${problem}` } : { secret: raw, options: { ...DEFAULT_TOTP } };
  }
  let parsed;
  try {
    parsed = URI.parse(raw);
  } catch (e) {
    return { problem: `bad otpauth URI: ${(e as Error).message}` };
  }
  if (!(parsed instanceof TOTP)) return { problem: 'the otpauth URI is for a counter-based code (hotp), not a time-based one (totp)' };
  const algorithm = TOTP_ALGORITHMS.find((a) => a === parsed.algorithm.toUpperCase().replace('-', '')) as TotpAlgorithm | undefined;
  if (!algorithm) return { problem: `the otpauth URI's algorithm ${parsed.algorithm} is not one of ${TOTP_ALGORITHMS.join(', ')}` };
  if (parsed.digits < MIN_TOTP_DIGITS || parsed.digits > MAX_TOTP_DIGITS) return { problem: `the otpauth URI's digits must be ${MIN_TOTP_DIGITS} to ${MAX_TOTP_DIGITS}` };
  if (parsed.period < 1 || parsed.period > MAX_TOTP_PERIOD) return { problem: `the otpauth URI's period must be 1 to ${MAX_TOTP_PERIOD} seconds` };
  const secret = parsed.secret.base32;
  const problem = base32SecretProblem(secret);
  if (problem) return { problem: `bad secret in the otpauth URI: ${problem}` };
  const out: TotpSecret = { secret, options: { digits: parsed.digits, algorithm, period: parsed.period } };
  if (parsed.label) out.label = parsed.label;
  if (parsed.issuer) out.issuer = parsed.issuer;
  return out;
}
