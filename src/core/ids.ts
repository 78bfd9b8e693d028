// Names and identifiers shared by server and client: inbox names, phone inboxes,
// message ids (`<inbox>-<epochSeconds>-<counter>`) and domains.
import { phoneDigits } from './sms';

/** Longest inbox name accepted: the local part of an address may be at most 64 octets (RFC 5321 4.5.3.1.1). */
const MAX_INBOX_LENGTH = 64;
/** Longest domain accepted (RFC 1035 2.3.4). */
const MAX_DOMAIN_LENGTH = 253;
/** The literal domain segment of the API's paths (docs/api.md §4) meaning "the team's private domains". */
export const PRIVATE_DOMAIN = 'private';
/** The wildcard inbox: every inbox of a domain. */
export const ALL_INBOXES = '*';

const INBOX_RE = /^[a-z0-9!#$%&'*+=?^_`{|}~.-]+$/i;
const DOMAIN_RE = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
/** A phone inbox's name (isPhoneInbox), as a pattern a database's regular expressions read alike. */
export const PHONE_INBOX_PATTERN = '^[0-9]{3,20}$';
const PHONE_RE = new RegExp(PHONE_INBOX_PATTERN);
const ID_RE = /^(.+)-([0-9]{1,12})-([0-9]{1,12})$/;
/**
 * Longest message id a client accepts. The ids this server makes are an inbox name (≤ 64)
 * and two numbers; the hosted service's are longer (`bill-1770915939-0125389591012`) and its
 * API calls them opaque strings, so the limit only keeps a URL sane.
 */
export const MAX_MESSAGE_ID_LENGTH = 256;

/** Why an inbox name is not acceptable, or undefined when it is. Names are compared lowercase. */
export function inboxNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'inbox name is empty';
  if (name.length > MAX_INBOX_LENGTH) return `inbox name is longer than ${MAX_INBOX_LENGTH} characters`;
  if (name === '.' || name === '..' || name.includes('/') || name.includes('\\')) return 'inbox name must not be a path';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'inbox name contains control characters';
  if (name === ALL_INBOXES) return undefined;
  if (!INBOX_RE.test(name)) return 'inbox name may contain only letters, digits and . _ + - and the other characters of an address local part';
  if (name.startsWith('.')) return 'inbox name must not start with a dot';
  return undefined;
}

function isValidInboxName(name: string): boolean {
  return inboxNameProblem(name) === undefined;
}

/**
 * The stored form of an inbox name: case-insensitive, so lowercase, and a phone number written
 * with `+` is its phone inbox (inboxOfName). Every surface (HTTP paths, SMTP recipients, the
 * client's surfaces, search) reads names through it.
 */
export function normalizeInbox(name: string): string {
  return inboxOfName(name).trim().toLowerCase();
}

/** An inbox whose name is digits only is a phone inbox: its messages are SMS. */
export function isPhoneInbox(name: string): boolean {
  return PHONE_RE.test(name);
}

/**
 * An inbox as a message to people names it: `name@domain`; a phone inbox bare; a name under
 * PRIVATE_DOMAIN (every domain of the server, when reading or clearing) as `name (every domain)`.
 */
export function inboxLabel(inbox: string, domain: string): string {
  if (isPhoneInbox(inbox)) return inbox;
  return domain === PRIVATE_DOMAIN ? `${inbox} (every domain)` : `${inbox}@${domain}`;
}

/** A phone number as people write it: `+`, then digits and separators (`+15555550100`, `+1 (555) 555-0100`). */
const WRITTEN_PHONE_RE = /^\+[0-9][0-9 ().-]*$/;

/**
 * The inbox a name names: a phone number written with `+` (E.164, separators allowed) is the
 * phone inbox of its digits (phoneDigits, the Twilio routes' rule), so `+15555550100` is inbox
 * `15555550100` on every surface; any other name is returned unchanged (the client sends names
 * as given; normalizeInbox also lowercases).
 */
export function inboxOfName(name: string): string {
  const t = name.trim();
  if (!WRITTEN_PHONE_RE.test(t)) return name;
  const digits = phoneDigits(t);
  return PHONE_RE.test(digits) ? digits : name;
}

/** Why a domain is not acceptable, or undefined. `private` is accepted. */
export function domainProblem(domain: string): string | undefined {
  if (domain.length === 0) return 'domain is empty';
  if (domain.length > MAX_DOMAIN_LENGTH) return `domain is longer than ${MAX_DOMAIN_LENGTH} characters`;
  if (!DOMAIN_RE.test(domain)) return 'domain must be a host name such as example.com';
  return undefined;
}

/** An address split at its last `@`: the local part as written, the domain lowercased (none without `@`). */
export function splitAddress(text: string): { local: string; domain: string | undefined } {
  const at = text.lastIndexOf('@');
  return at < 0 ? { local: text, domain: undefined } : { local: text.slice(0, at), domain: text.slice(at + 1).toLowerCase() };
}

/** What readAddress found wrong, and in which part: the whole (`form`), the inbox, or the domain. */
export interface AddressProblem {
  problem: string;
  part: 'form' | 'inbox' | 'domain';
}

/**
 * The one reading of `name@domain`, or of a bare `name` where a default domain is given: the
 * inbox (normalizeInbox: lowercase, `+1 555…` is its phone inbox) and the domain (lowercase),
 * or what is wrong. Every surface that takes an address reads it here (SMTP recipients,
 * provider recipients, the extension's inputs, the test library, MCP), so `*` and `private`
 * mean the same everywhere: `private` is a domain like any other name (domainProblem accepts
 * it), and `*` (every inbox) is accepted only where `allowAll` says a reading may name it.
 */
export function readAddress(text: string, o: { defaultDomain?: string; allowAll?: boolean } = {}): { inbox: string; domain: string } | AddressProblem {
  const { local, domain = o.defaultDomain } = splitAddress(text.trim());
  if (domain === undefined) return { part: 'form', problem: 'it is not an address of the form name@domain' };
  const inbox = normalizeInbox(local);
  return addressProblem(inbox, domain, o.allowAll) ?? { inbox, domain };
}

/** Why inbox@domain (both normalised already) names no inbox, or undefined; readAddress's rule for a parsed pair. */
export function addressProblem(inbox: string, domain: string, allowAll = false): AddressProblem | undefined {
  const inboxProblem = inboxNameProblem(inbox) ?? (inbox === ALL_INBOXES && !allowAll ? 'inbox * (every inbox) cannot receive messages: name one inbox' : undefined);
  if (inboxProblem) return { part: 'inbox', problem: inboxProblem };
  const problem = domainProblem(domain);
  return problem ? { part: 'domain', problem } : undefined;
}

interface ParsedMessageId {
  inbox: string;
  seconds: number;
  counter: number;
}

/**
 * Why a message id named by a server cannot be put into a request path, or undefined when
 * it can. Ids are opaque (the hosted service's do not follow this server's shape), so only
 * what could leave its path segment is refused: `/`, `\`, `.` and `..`, control characters.
 */
export function messageIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'message id is empty';
  if (id.length > MAX_MESSAGE_ID_LENGTH) return `message id is longer than ${MAX_MESSAGE_ID_LENGTH} characters`;
  if (id === '.' || id === '..' || id.includes('/') || id.includes('\\')) return 'message id must not be a path';
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'message id contains control characters';
  return undefined;
}

/** Parses `<inbox>-<epochSeconds>-<counter>`; the inbox may itself contain hyphens. */
export function parseMessageId(id: string): ParsedMessageId | undefined {
  const m = ID_RE.exec(id);
  if (!m) return undefined;
  const inbox = m[1];
  if (!isValidInboxName(inbox) || inbox === ALL_INBOXES) return undefined;
  return { inbox, seconds: Number(m[2]), counter: Number(m[3]) };
}

export function formatMessageId(inbox: string, seconds: number, counter: number): string {
  return `${inbox}-${seconds}-${counter}`;
}
