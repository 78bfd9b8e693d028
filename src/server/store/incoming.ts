// What every store does with a message before it keeps it: the recipient inboxes checked and
// normalised (each once), and the fields the listings show read from the message's head.
// Shared by the Maildir store (maildir/store.ts) and the PostgreSQL store (postgres/store.ts).
import { addressProblem, isPhoneInbox, normalizeInbox } from '../../core/ids';
import { codeOfParts, detectCode } from './code';
import { StoreError } from './errors';
import { parseIndexedHeaders } from './headers';
import type { MessageBody, MessageParts } from './types';

export interface Target {
  domain: string;
  inbox: string;
}

/** The targets of an add(), normalised; throws StoreError not_open (a closed store) or bad_target before any work. */
export function targetsToAdd(open: boolean, targets: Target[]): Target[] {
  if (!open) throw new StoreError('not_open', 'the store is not open');
  return normalizeTargets(targets);
}

/** The targets lowercased and normalised, each once; StoreError bad_target names the first that cannot receive mail. */
function normalizeTargets(targets: Target[]): Target[] {
  const seen = new Set<string>();
  const norm: Target[] = [];
  for (const t of targets) {
    const domain = t.domain.trim().toLowerCase();
    const inbox = normalizeInbox(t.inbox);
    const wrong = addressProblem(inbox, domain);
    if (wrong) throw new StoreError('bad_target', `${t.inbox}@${t.domain}: ${wrong.problem}`);
    const key = `${domain}\n${inbox}`;
    if (!seen.has(key)) {
      seen.add(key);
      norm.push({ domain, inbox });
    }
  }
  if (norm.length === 0) throw new StoreError('bad_target', 'a message needs at least one recipient inbox');
  return norm;
}

/** What the index keeps of a message besides its place: sender, subject, size, and the code as an email or as an SMS (a phone inbox). */
interface IndexedFields {
  head: Buffer;
  size: number;
  from: string;
  subject: string;
  /** The code for an SMS target (true) and an email target (false), for the kinds among the targets. */
  codes: Map<boolean, string | undefined>;
}

/**
 * The fields the index needs before an acknowledgement: size, sender and subject, read from the
 * header block only (no MIME parse). A body in a file is read from its head.
 */
export function indexedHeaders(body: MessageBody): Omit<IndexedFields, 'codes'> {
  const head = Buffer.isBuffer(body) ? body : body.head;
  const size = Buffer.isBuffer(body) ? body.length : body.size;
  const headers = parseIndexedHeaders(head) ?? { from: '', subject: '' };
  return { head, size, from: headers.from, subject: headers.subject };
}

/**
 * The code of a message as an email and as an SMS, for the kinds among its targets, read from
 * its head (the code's scan window, code.ts). `parts`: the decoded subject and text when the
 * caller composed the message itself, so the code is read from them rather than by parsing the
 * MIME again.
 */
export async function indexedCodes(norm: Target[], head: Buffer, parts: MessageParts | undefined, detect: CodeDetector = detectCode): Promise<Map<boolean, string | undefined>> {
  const codes = new Map<boolean, string | undefined>();
  for (const sms of new Set(norm.map((t) => isPhoneInbox(t.inbox)))) codes.set(sms, parts ? codeOfParts(parts, sms) : await detect(head, sms));
  return codes;
}

/** Reads the code of a raw message (code.ts detectCode), in this thread or another (the server's MIME workers). */
export type CodeDetector = (head: Buffer, sms: boolean) => Promise<string | undefined>;

/** Both of the above at once: a store that reads the code before its acknowledgement (postgres/store.ts). */
export async function indexedFields(norm: Target[], body: MessageBody, parts: MessageParts | undefined): Promise<IndexedFields> {
  const fields = indexedHeaders(body);
  return { ...fields, codes: await indexedCodes(norm, fields.head, parts) };
}
