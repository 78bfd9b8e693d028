// Time-based one-time passwords (RFC 6238) for the `/api/v2/totp/<secret>` route: the code an
// authenticator app would show now for a base32 secret, computed with otpauth.
import { Secret, TOTP } from 'otpauth';

export type TotpAlgorithm = 'SHA1' | 'SHA256' | 'SHA512';
export const TOTP_ALGORITHMS: readonly TotpAlgorithm[] = ['SHA1', 'SHA256', 'SHA512'];

/** Authenticator apps' defaults (RFC 6238 §5.2 suggests 30 s; 6 digits is what apps show). */
export const DEFAULT_TOTP = { digits: 6, algorithm: 'SHA1' as TotpAlgorithm, period: 30 };
/** Digits RFC 4226 allows a code to have (fewer is guessable, more exceeds the 31-bit truncation). */
export const MIN_TOTP_DIGITS = 6;
export const MAX_TOTP_DIGITS = 8;
/** Longest period accepted, in seconds: a day; beyond it the code is no longer "time-based" in any useful sense. */
export const MAX_TOTP_PERIOD = 86_400;
/** Longest secret accepted, in base32 characters (1 KiB of key: far above any real secret, bounds the work). */
const MAX_SECRET_LENGTH = 1640;

export interface TotpOptions {
  digits: number;
  algorithm: TotpAlgorithm;
  period: number;
}

interface TotpNow {
  code: string;
  /** Whole seconds until the code changes (1..period). */
  seconds_left: number;
}

/** Lengths modulo 8 that a base32 string without padding can have (RFC 4648 §6). */
const BASE32_REMAINDERS = new Set([0, 2, 4, 5, 7]);

/**
 * Why `raw` is not a usable base32 secret, or undefined. Spaces, dashes and `=` padding are
 * ignored and case does not matter, as authenticator apps accept them.
 */
export function base32SecretProblem(raw: string): string | undefined {
  const s = normalizeSecret(raw);
  if (s.length === 0) return 'the secret is empty';
  if (s.length > MAX_SECRET_LENGTH) return `the secret is longer than ${MAX_SECRET_LENGTH} characters`;
  const bad = /[^A-Z2-7]/.exec(s);
  if (bad) return `${JSON.stringify(bad[0])} is not a base32 character (A–Z, 2–7)`;
  if (!BASE32_REMAINDERS.has(s.length % 8)) return `${s.length} characters is not a whole number of bytes in base32`;
  return undefined;
}

function normalizeSecret(raw: string): string {
  return raw.replace(/[\s=-]/g, '').toUpperCase();
}

/** The code for `secret` at `nowMs` and the seconds it stays valid. Throws when the secret is not base32 (check base32SecretProblem first). */
export function totpAt(secret: string, options: TotpOptions, nowMs: number): TotpNow {
  const problem = base32SecretProblem(secret);
  if (problem) throw new Error(`bad base32 secret: ${problem}`);
  const totp = new TOTP({ secret: Secret.fromBase32(normalizeSecret(secret)), algorithm: options.algorithm, digits: options.digits, period: options.period });
  const code = totp.generate({ timestamp: nowMs });
  const periodMs = options.period * 1000;
  const seconds_left = Math.ceil((periodMs - (nowMs % periodMs)) / 1000);
  return { code, seconds_left };
}
