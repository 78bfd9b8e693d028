// The one-time code of a stored message, detected once at ingest by the one rule
// (core/message.ts codeOf) so listings can carry it (docs/api.md §2.2 `code`) without parsing
// MIME on the list hot path.
import PostalMime from 'postal-mime';
import { codeOf, type MessageContent } from '../../core/message';
import { quickText } from './quickText';
import type { MessageParts } from './types';

/** Parts deeper than this are not parsed (the same bound as the message rendering). */
const MAX_MIME_NESTING = 64;
/**
 * Only the first 256 KB of a message is read for its code. A one-time code sits in the first
 * lines of a short text; reading all of a 24 MB body took 48 s and 600 MB,
 * holding the event loop and memory at ingest. Beyond it the message is listed without a code.
 */
export const CODE_SCAN_MAX_BYTES = 256 * 1024;

/**
 * The best code of `raw` read as an email, or as an SMS (a phone inbox: its text, or the
 * visible text of its HTML). Undefined when there is none or the message cannot be parsed:
 * a code is a convenience, never a reason to refuse a message.
 */
export async function detectCode(raw: Buffer, sms: boolean): Promise<string | undefined> {
  try {
    const head = raw.length > CODE_SCAN_MAX_BYTES ? raw.subarray(0, CODE_SCAN_MAX_BYTES) : raw;
    // The shapes most mail has are read without the full parse (quickText.ts), with the same answer.
    const email = quickText(head) ?? (await PostalMime.parse(head, { attachmentEncoding: 'arraybuffer', maxNestingDepth: MAX_MIME_NESTING }));
    const content: MessageContent = { subject: email.subject ?? '', sms };
    if (email.text !== undefined) content.text = email.text;
    if (email.html !== undefined) content.html = email.html;
    return codeOf(content);
  } catch {
    return undefined;
  }
}

/**
 * The same code read from a message's parts when the caller composed it itself (an injected or
 * webhook message: its decoded subject and plain text are known), without parsing the MIME it
 * made again; a tenth of the server's CPU per injected message went to that parse.
 */
export function codeOfParts(parts: MessageParts, sms: boolean): string | undefined {
  return codeOf({ subject: parts.subject, text: parts.text, sms });
}
