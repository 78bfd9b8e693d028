// `GET /api/v2/totp/{secret}`: the TOTP code an authenticator app shows now for a base32
// secret (core/totp.ts), so a test can pass a two-factor step without a phone.
import { DEFAULT_TOTP, MAX_TOTP_DIGITS, MAX_TOTP_PERIOD, MIN_TOTP_DIGITS, TOTP_ALGORITHMS, type TotpAlgorithm, base32SecretProblem, totpAt } from '../../../core/totp';
import { badRequest } from '../errors';
import { sendJson } from '../respond';
import type { Query, Res } from './context';

export function totpResource(res: Res, secret: string, query: Query): void {
  const problem = base32SecretProblem(secret);
  if (problem) throw badRequest('bad_param', `bad base32 secret: ${problem}`);
  const digits = readWhole(query, 'digits', MIN_TOTP_DIGITS, MAX_TOTP_DIGITS, DEFAULT_TOTP.digits);
  const period = readWhole(query, 'period', 1, MAX_TOTP_PERIOD, DEFAULT_TOTP.period);
  const rawAlgorithm = (query.get('algorithm') ?? '').toUpperCase().replace('-', '');
  const algorithm = rawAlgorithm === '' ? DEFAULT_TOTP.algorithm : TOTP_ALGORITHMS.find((a) => a === rawAlgorithm);
  if (!algorithm) throw badRequest('bad_param', `algorithm must be one of ${TOTP_ALGORITHMS.join(', ')}`);
  sendJson(res, 200, totpAt(secret, { digits, algorithm: algorithm as TotpAlgorithm, period }, Date.now()));
}

function readWhole(query: Query, name: string, min: number, max: number, fallback: number): number {
  const v = query.get(name);
  if (v === null || v === '') return fallback;
  const n = /^[0-9]{1,9}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw badRequest('bad_param', `${name} must be a whole number from ${min} to ${max}`);
  return n;
}
