// The search language of `GET /api/v2/search` (docs/api.md "Search"), parsed once here and
// matched by the rules every store and the body scan share. Pure: no I/O, no clock (the
// caller passes `now` for durations such as `after:1h`).
//
// Free words and "quoted phrases" match the sender, the recipient (`inbox@domain`), the subject
// or the message's text, as substrings, with case folded for A-Z (foldCase); every term must match; `-term`
// must not. Operators: from: to: subject: (substrings of one field), domain: inbox: code:
// (exact), has:code has:attachment has:link, is:sms is:email, after: before: (a UTC date or
// time, or a duration back from now).
import { parseDuration } from './duration';
import { isPhoneInbox, normalizeInbox } from './ids';
import { codedError, type CodedError } from './errors';

/** Longest query accepted, in characters: a person types far less, and it bounds the work. */
const MAX_QUERY_LENGTH = 1000;
/** Most terms in one query. */
const MAX_QUERY_TERMS = 32;

type TextField = 'text' | 'from' | 'to' | 'subject';
type ExactField = 'domain' | 'inbox' | 'code';
type HasValue = 'code' | 'attachment' | 'link';
type IsValue = 'sms' | 'email';

/** One term of a query; `negated` for `-term`. Text values are lowercase with their spaces collapsed. */
export type SearchTerm = MetaTerm | BodyTerm;

/** A term a store decides from a message's index entry alone (no body read). */
export type MetaTerm =
  | { field: Exclude<TextField, 'text'>; value: string; negated: boolean }
  | { field: ExactField; value: string; negated: boolean }
  | { field: 'has'; value: 'code'; negated: boolean }
  | { field: 'is'; value: IsValue; negated: boolean }
  /** `value`: ms since the epoch; after: keeps time >= value, before: time < value. */
  | { field: 'after' | 'before'; value: number; negated: boolean };

/** A term only the message's body decides (or, for a free word, its index entry when the word is there). */
type BodyTerm = { field: 'text'; value: string; negated: boolean } | { field: 'has'; value: 'attachment' | 'link'; negated: boolean };

/** What the index holds of a message that the search reads (a structural subset of the store's MessageMeta). */
export interface SearchableMeta {
  domain: string;
  inbox: string;
  time: number;
  from: string;
  subject: string;
  code?: string;
}

/** What the body scan reads of a message (server/mime/render.ts searchableOf). */
export interface SearchableBody {
  /** The message's text (its text part, or the visible text of its HTML), as searchText() leaves it. */
  text: string;
  attachment: boolean;
  /** It has a link the link rule picks as verify, sign-in or reset (the link route's `kind=any`); undefined when not read (no has:link asked). */
  link?: boolean;
}

/** A search query that cannot be read: its one code; the message says what is wrong. */
export const SearchQueryError = codedError<'bad_query'>('SearchQueryError');
export type SearchQueryError = CodedError<'bad_query'>;

const OPERATORS = ['from', 'to', 'subject', 'domain', 'inbox', 'code', 'has', 'is', 'after', 'before'] as const;
type Operator = (typeof OPERATORS)[number];
const HAS_VALUES: readonly HasValue[] = ['code', 'attachment', 'link'];
const IS_VALUES: readonly IsValue[] = ['sms', 'email'];
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?Z?$/i;
const DATE_HINT = 'a UTC date (2026-11-26), a UTC time (2026-11-26T14:30 or 2026-11-26T14:30:00Z) or a duration back from now (30m, 1h, 7d)';

const ASCII_RE = /^[\x00-\x7f]*$/;

/**
 * ASCII letters lowercase, every other character as it is. Case is folded for A–Z only, so that
 * the PostgreSQL store's `lower(x COLLATE "C")` folds exactly the same letters whatever the
 * database's locale: both stores answer the same results.
 */
export function foldCase(s: string): string {
  // Most senders and subjects are ASCII: then the native toLowerCase folds exactly A–Z, and fast.
  return ASCII_RE.test(s) ? s.toLowerCase() : s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** Case folded (foldCase), every run of white space one space, trimmed: how the search compares text. */
export function searchText(s: string): string {
  return foldCase(s).replace(/\s+/g, ' ').trim();
}

function isOperator(name: string): name is Operator {
  return (OPERATORS as readonly string[]).includes(name);
}

/** The raw tokens: `-`? then a word, a "phrase", or name:value / name:"phrase". */
interface Token {
  negated: boolean;
  name?: string;
  value: string;
  quoted: boolean;
}

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = q.length;
  const isSpace = (c: string): boolean => /\s/.test(c);
  while (i < n) {
    while (i < n && isSpace(q[i])) i++;
    if (i >= n) break;
    const start = i;
    let negated = false;
    if (q[i] === '-') {
      negated = true;
      i++;
      if (i >= n || isSpace(q[i])) throw new SearchQueryError('bad_query', `a "-" at character ${start + 1} negates nothing; write -word to exclude a word`);
    }
    let name: string | undefined;
    const op = /^([a-z]+):/i.exec(q.slice(i, i + 16));
    if (op && q[i] !== '"') {
      name = op[1].toLowerCase();
      i += op[0].length;
      if (!isOperator(name)) {
        throw new SearchQueryError('bad_query', `unknown operator ${JSON.stringify(op[1] + ':')}; the operators are ${OPERATORS.map((o) => o + ':').join(' ')} (put text with a colon in "quotes")`);
      }
      if (i >= n || isSpace(q[i])) throw new SearchQueryError('bad_query', `${name}: needs a value, as in ${name}:${exampleOf(name)}`);
    }
    let value: string;
    let quoted = false;
    if (q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      if (close < 0) throw new SearchQueryError('bad_query', `the quote at character ${i + 1} is never closed`);
      value = q.slice(i + 1, close);
      quoted = true;
      i = close + 1;
      if (i < n && !isSpace(q[i])) throw new SearchQueryError('bad_query', `a closing quote must be followed by a space (at character ${i + 1})`);
      if (value.trim() === '') throw new SearchQueryError('bad_query', `the quotes at character ${close} hold no text`);
    } else {
      const begin = i;
      while (i < n && !isSpace(q[i])) i++;
      value = q.slice(begin, i);
      if (value.includes('"')) throw new SearchQueryError('bad_query', `a quote inside a word (${JSON.stringify(value.slice(0, 40))}); put the whole phrase in quotes`);
    }
    out.push({ negated, name, value, quoted });
  }
  return out;
}

function exampleOf(name: Operator): string {
  switch (name) {
    case 'from':
      return 'alice@example.com';
    case 'to':
      return 'joe';
    case 'subject':
      return 'welcome';
    case 'domain':
      return 'example.com';
    case 'inbox':
      return 'joe';
    case 'code':
      return '482913';
    case 'has':
      return HAS_VALUES.join(', has:');
    case 'is':
      return IS_VALUES.join(', is:');
    case 'after':
    case 'before':
      return '1h';
  }
}

/** Epoch ms of a UTC date or time, or a duration back from `now`; undefined when it is neither. */
export function parseSearchTime(value: string, now: number): number | undefined {
  const d = DATE_RE.exec(value);
  if (d) {
    const [, y, mo, da, h = '0', mi = '0', s = '0', ms = '0'] = d;
    const t = Date.UTC(Number(y), Number(mo) - 1, Number(da), Number(h), Number(mi), Number(s), Number(ms.padEnd(3, '0')));
    const back = new Date(t);
    // Date.UTC rolls 2026-02-30 over to March: only a date that exists is a date.
    if (back.getUTCFullYear() !== Number(y) || back.getUTCMonth() !== Number(mo) - 1 || back.getUTCDate() !== Number(da) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
    return t;
  }
  // A duration needs its unit here: a bare number would be read as seconds, which nobody means.
  if (!/[a-z]$/i.test(value)) return undefined;
  const ms = parseDuration(value);
  return ms === undefined ? undefined : now - ms;
}

/**
 * Parses a query into its terms. Throws SearchQueryError naming what is wrong: an empty query,
 * an unknown operator, an operator without a value or with one it does not take, an unclosed
 * quote, a lone `-`, too long or too many terms.
 */
export function parseSearchQuery(q: string, now: number): SearchTerm[] {
  if (q.length > MAX_QUERY_LENGTH) throw new SearchQueryError('bad_query', `the query is longer than ${MAX_QUERY_LENGTH} characters`);
  const tokens = tokenize(q);
  if (tokens.length === 0) throw new SearchQueryError('bad_query', 'the query is empty; give a word, a "phrase" or an operator such as from:alice');
  if (tokens.length > MAX_QUERY_TERMS) throw new SearchQueryError('bad_query', `the query has ${tokens.length} terms; at most ${MAX_QUERY_TERMS} are allowed`);
  return tokens.map((t) => toTerm(t, now));
}

function toTerm(t: Token, now: number): SearchTerm {
  const { negated } = t;
  const name = t.name as Operator | undefined;
  if (name === undefined) return { field: 'text', value: searchText(t.value), negated };
  switch (name) {
    case 'from':
    case 'to':
    case 'subject':
      return { field: name, value: searchText(t.value), negated };
    case 'domain':
      return { field: 'domain', value: foldCase(t.value.trim()), negated };
    case 'inbox':
      return { field: 'inbox', value: normalizeInbox(t.value), negated };
    case 'code':
      return { field: 'code', value: t.value.trim(), negated };
    case 'has': {
      const v = t.value.toLowerCase();
      if (!(HAS_VALUES as readonly string[]).includes(v)) throw new SearchQueryError('bad_query', `has:${t.value.slice(0, 40)} is not known; use has:${HAS_VALUES.join(', has:')}`);
      return v === 'code' ? { field: 'has', value: 'code', negated } : { field: 'has', value: v as 'attachment' | 'link', negated };
    }
    case 'is': {
      const v = t.value.toLowerCase();
      if (!(IS_VALUES as readonly string[]).includes(v)) throw new SearchQueryError('bad_query', `is:${t.value.slice(0, 40)} is not known; use is:${IS_VALUES.join(', is:')}`);
      return { field: 'is', value: v as IsValue, negated };
    }
    case 'after':
    case 'before': {
      const value = parseSearchTime(t.value.trim(), now);
      if (value === undefined) throw new SearchQueryError('bad_query', `${name}:${t.value.slice(0, 40)} is not a time; give ${DATE_HINT}`);
      return { field: name, value, negated };
    }
  }
}

/**
 * Whether a term matches no message, before its negation, on any store: one whose text holds
 * U+0000. PostgreSQL's text cannot hold the character (the store keeps it escaped), so no store
 * compares it, and every store answers a search for it alike: no match, and for a negated
 * term every message.
 */
export function matchesNothing(term: SearchTerm): boolean {
  return typeof term.value === 'string' && term.value.includes('\u0000');
}

/** True for a term decided from the index alone; false for one that needs the message's body. */
export function isMetaTerm(term: SearchTerm): term is MetaTerm {
  return term.field !== 'text' && !(term.field === 'has' && (term.value === 'attachment' || term.value === 'link'));
}

/** The recipient as the search reads it: `inbox@domain`. */
function recipientOf(meta: Pick<SearchableMeta, 'inbox' | 'domain'>): string {
  return `${meta.inbox}@${meta.domain}`;
}

/** Whether a meta term holds for a message, before its negation. */
function metaHolds(term: MetaTerm, meta: SearchableMeta): boolean {
  if (matchesNothing(term)) return false;
  switch (term.field) {
    case 'from':
      return foldCase(meta.from).includes(term.value);
    case 'to':
      return recipientOf(meta).includes(term.value);
    case 'subject':
      return foldCase(meta.subject).includes(term.value);
    case 'domain':
      return meta.domain === term.value;
    case 'inbox':
      return meta.inbox === term.value;
    case 'code':
      return meta.code === term.value;
    case 'has':
      return meta.code !== undefined;
    case 'is':
      return isPhoneInbox(meta.inbox) === (term.value === 'sms');
    case 'after':
      return meta.time >= term.value;
    case 'before':
      return meta.time < term.value;
  }
}

/** Whether a message's index entry satisfies a meta term (its negation applied). */
export function matchesMetaTerm(term: MetaTerm, meta: SearchableMeta): boolean {
  return metaHolds(term, meta) !== term.negated;
}

/** Whether a free word or phrase is in the sender, recipient or subject. */
function inMeta(value: string, meta: SearchableMeta): boolean {
  return foldCase(meta.from).includes(value) || recipientOf(meta).includes(value) || foldCase(meta.subject).includes(value);
}

/**
 * Whether a body term (a free word, has:attachment, has:link) holds for a message, its
 * negation applied: true or false when the index decides it (a word in the subject), undefined
 * when only the body can.
 */
function matchesBodyTermByMeta(term: SearchTerm, meta: SearchableMeta): boolean | undefined {
  if (matchesNothing(term)) return term.negated;
  if (term.field === 'text' && inMeta(term.value, meta)) return !term.negated;
  return undefined;
}

/** Whether a body term holds for a message whose body was read, its negation applied. */
function matchesBodyTerm(term: SearchTerm, meta: SearchableMeta, body: SearchableBody): boolean {
  let holds: boolean;
  if (term.field === 'text') holds = !matchesNothing(term) && (inMeta(term.value, meta) || body.text.includes(term.value));
  else if (term.field === 'has' && term.value === 'attachment') holds = body.attachment;
  else if (term.field === 'has' && term.value === 'link') holds = body.link === true;
  else return matchesMetaTerm(term as MetaTerm, meta);
  return holds !== term.negated;
}

/** Whether every term holds for a message; `body` undefined when it was not read (then body terms must be decided by the index). */
export function matchesAll(terms: readonly SearchTerm[], meta: SearchableMeta, body?: SearchableBody): boolean | undefined {
  let undecided = false;
  for (const t of terms) {
    if (isMetaTerm(t)) {
      if (!matchesMetaTerm(t, meta)) return false;
      continue;
    }
    const r = body ? matchesBodyTerm(t, meta, body) : matchesBodyTermByMeta(t, meta);
    if (r === false) return false;
    if (r === undefined) undecided = true;
  }
  return undecided ? undefined : true;
}

/** The query as one line for messages and logs (terms as the parser read them). */
export function describeTerm(t: SearchTerm): string {
  const v = t.field === 'after' || t.field === 'before' ? new Date(t.value).toISOString() : String(t.value);
  const shown = /\s/.test(v) ? JSON.stringify(v) : v;
  return `${t.negated ? '-' : ''}${t.field === 'text' ? '' : t.field + ':'}${shown}`;
}
