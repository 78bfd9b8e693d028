// A TOTP secret as a person pastes it: a base32 secret (spaces, dashes, `=` and case ignored, as
// authenticator apps accept it) or the `otpauth://totp/…` URI of a QR code, whose parameters
// (algorithm, digits, period, issuer) are kept. Parsed locally with otpauth; never sent anywhere.
import { TOTP, URI } from 'otpauth';
import { base32SecretProblem, DEFAULT_TOTP, MAX_TOTP_DIGITS, MAX_TOTP_PERIOD, MIN_TOTP_DIGITS, TOTP_ALGORITHMS, type TotpAlgorithm, type TotpOptions } from './totp';

interface TotpSecret extends TotpOptions {
  /** The base32 secret, normalised (upper case, no spaces, dashes or padding). */
  secret: string;
  /** From an otpauth URI: who issued it and the account label, to suggest a name. */
  issuer?: string;
  account?: string;
}

/** Longest pasted text read (an otpauth URI with a long label still fits easily). */
export const MAX_TOTP_INPUT_LENGTH = 4096;

type TotpInputResult = { ok: true; value: TotpSecret } | { ok: false; problem: string };

function normalize(raw: string): string {
  return raw.replace(/[\s=-]/g, '').toUpperCase();
}

/** Reads a pasted base32 secret or `otpauth://totp/` URI; says what is wrong otherwise. */
export function parseTotpInput(raw: string): TotpInputResult {
  const text = raw.trim();
  if (text === '') return { ok: false, problem: 'Paste a base32 secret or an otpauth:// URI.' };
  if (text.length > MAX_TOTP_INPUT_LENGTH) return { ok: false, problem: `The text is longer than ${MAX_TOTP_INPUT_LENGTH} characters.` };
  if (/^otpauth:/i.test(text)) return parseUri(text);
  const problem = base32SecretProblem(text);
  if (problem) return { ok: false, problem: `Not a base32 secret: ${problem}.` };
  return { ok: true, value: { secret: normalize(text), ...DEFAULT_TOTP } };
}

function parseUri(text: string): TotpInputResult {
  if (/^otpauth:\/\/hotp\//i.test(text)) return { ok: false, problem: 'This is a counter-based (HOTP) URI; only time-based (TOTP) codes are supported.' };
  let otp: ReturnType<typeof URI.parse>;
  try {
    otp = URI.parse(text);
  } catch (e) {
    return { ok: false, problem: `Not a usable otpauth:// URI: ${e instanceof Error ? e.message : String(e)}.` };
  }
  if (!(otp instanceof TOTP)) return { ok: false, problem: 'Only time-based (TOTP) URIs are supported.' };
  const secret = otp.secret.base32;
  const problem = base32SecretProblem(secret);
  if (problem) return { ok: false, problem: `The URI's secret is not usable: ${problem}.` };
  const algorithm = otp.algorithm.toUpperCase().replace('-', '') as TotpAlgorithm;
  if (!TOTP_ALGORITHMS.includes(algorithm)) return { ok: false, problem: `The URI's algorithm ${otp.algorithm} is not one of ${TOTP_ALGORITHMS.join(', ')}.` };
  if (!Number.isInteger(otp.digits) || otp.digits < MIN_TOTP_DIGITS || otp.digits > MAX_TOTP_DIGITS) return { ok: false, problem: `The URI asks for ${otp.digits} digits; ${MIN_TOTP_DIGITS} to ${MAX_TOTP_DIGITS} are supported.` };
  if (!Number.isInteger(otp.period) || otp.period < 1 || otp.period > MAX_TOTP_PERIOD) return { ok: false, problem: `The URI's period of ${otp.period} s is not from 1 to ${MAX_TOTP_PERIOD}.` };
  const value: TotpSecret = { secret: normalize(secret), algorithm, digits: otp.digits, period: otp.period };
  if (otp.issuer) value.issuer = otp.issuer;
  if (otp.label) value.account = otp.label;
  return { ok: true, value };
}

/** A name to offer for a secret: "Issuer (account)" from a URI, else empty. */
export function suggestedTotpName(s: TotpSecret): string {
  if (s.issuer && s.account) return `${s.issuer} (${s.account})`;
  return s.issuer ?? s.account ?? '';
}
