// The query-string parameters every HTTP surface reads, read one way: a whole number is one to
// nine digits, nothing else; a boolean is true/1 or false/0 (empty: false). Each surface keeps
// its own error shape (the API's `bad_param`, Twilio's 21xxx codes, the compat APIs' plain
// 400s) and its own shapes of parameters; what a parameter is stays here.
import { badRequest } from './errors';

/** A request's query string, parsed. */
export type Query = URLSearchParams;

/** The value of a whole-number parameter: undefined when absent or empty, null when not one to nine digits. */
export function wholeNumberParam(query: Query, name: string): number | undefined | null {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  return /^[0-9]{1,9}$/.test(v) ? Number(v) : null;
}

/** A whole-number query parameter within [min, max], `fallback` when absent; a 400 naming the range otherwise. */
export function readInt(query: Query, name: string, min: number, max: number, fallback: number): number {
  const n = wholeNumberParam(query, name);
  if (n === undefined) return fallback;
  if (n === null || n < min || n > max) throw badRequest('bad_param', `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

/** A true/false query parameter: `true` or `1`, `false`, `0` or absent (case-insensitive); a 400 otherwise. */
export function readBoolean(query: Query, name: string): boolean {
  const v = (query.get(name) ?? '').toLowerCase();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw badRequest('bad_param', `${name} must be true or false`);
}
