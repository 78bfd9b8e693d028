// Mailpit's search syntax (docs/compat.md) mapped onto the one search language
// (core/search.ts): `to:`, `from:`, `subject:` (substrings), quoted values, `has:attachment`,
// free words and `-`/`!` negation pass through as the same terms; `is:read`/`is:unread` are
// the read marks (reads.ts), which the search core does not hold. Any other of Mailpit's
// operators is refused by name.
import { parseSearchQuery, SearchQueryError, type SearchTerm } from '../../../core/search';

export interface MailpitQuery {
  /** Terms for the search core; empty: every message. */
  terms: SearchTerm[];
  /** `is:read` (true), `is:unread` (false), or neither. */
  read?: boolean;
  /** `is:read` and `is:unread` together: nothing matches. */
  nothing?: true;
}

const PASSED = new Set(['to', 'from', 'subject', 'has', 'before', 'after']);
const TOKEN = /([-!]?)(?:([a-z-]+):)?(?:"([^"]*)"?|([^\s"]+))/gi;

/** A bad query: the message is the 400's plain text. */
export class CompatQueryError extends Error {}

export function parseMailpitQuery(q: string, now: number): MailpitQuery {
  const out: string[] = [];
  let read: boolean | undefined;
  let nothing = false;
  for (const [, neg, name, quoted, bare] of q.matchAll(TOKEN)) {
    const value = quoted ?? bare ?? '';
    const op = name?.toLowerCase();
    if (op === 'is' && /^(read|unread)$/i.test(value)) {
      const wanted = (value.toLowerCase() === 'read') === (neg === '');
      if (read !== undefined && read !== wanted) nothing = true;
      read = wanted;
      continue;
    }
    if (op !== undefined && !PASSED.has(op)) throw new CompatQueryError(`search filter ${op}: is not supported by this server (docs/compat.md)`);
    if (op === 'has' && value.toLowerCase() !== 'attachment') throw new CompatQueryError(`search filter has:${value} is not supported by this server (docs/compat.md)`);
    const clean = value.replace(/\s+/g, ' ').trim();
    if (clean === '') continue;
    out.push(`${neg !== '' ? '-' : ''}${op !== undefined ? `${op}:` : ''}${op === 'before' || op === 'after' || op === 'has' ? clean : `"${clean}"`}`);
  }
  const base: MailpitQuery = { terms: [], ...(read !== undefined ? { read } : {}), ...(nothing ? { nothing: true as const } : {}) };
  if (out.length === 0) return base;
  try {
    return { ...base, terms: parseSearchQuery(out.join(' '), now) };
  } catch (e) {
    if (e instanceof SearchQueryError) throw new CompatQueryError(`bad search query: ${e.message}`);
    throw e;
  }
}
