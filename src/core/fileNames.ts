// The one cleaning of a file name that came from a message (an attachment's filename): what
// the message view shows and what Save Attachment offers. Pure, imports nothing.

/** File systems allow 255 bytes per name; 200 leaves room for a " (1)" suffix a save dialog may add. */
export const MAX_FILE_NAME_BYTES = 200;
/** An extension longer than this is part of the name, not a type (keeps `a.verylongsuffix…` from eating the name). */
const MAX_EXTENSION_LENGTH = 16;

/** C0, DEL and C1 controls; line and paragraph separators. */
const CONTROLS = /[\p{Cc}\u2028\u2029]/gu;
/** Bidi embeddings, overrides, isolates and marks; zero-width characters; the BOM: they change how a name reads without being seen. */
const INVISIBLE = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/gu;
/** Characters Windows forbids in names (path separators are handled first). */
const FORBIDDEN = /[<>:"|?*]/g;
/** Half of a surrogate pair without the other half: not a character, and no file system takes it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Names Windows reserves for devices, with or without an extension (`nul.txt` is the device too). */
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;

const encoder = new TextEncoder();
const bytes = (s: string): number => encoder.encode(s).length;

/** `s` cut to at most `max` UTF-8 bytes, never inside a grapheme (a character with its marks, a surrogate pair). */
function cutToBytes(s: string, max: number): string {
  if (bytes(s) <= max) return s;
  let out = '';
  let used = 0;
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s)) {
    const n = bytes(segment);
    if (used + n > max) break;
    out += segment;
    used += n;
  }
  return out;
}

/** Removes leading dots and spaces (hidden files, `..`) and trailing dots and spaces (Windows drops them). */
function trimEnds(s: string): string {
  return s.replace(/^[.\s]+/u, '').replace(/[.\s]+$/u, '');
}

/**
 * A safe file name from an untrusted one: only the last path segment; controls replaced by
 * `_`; bidi and zero-width characters removed; Windows' forbidden characters replaced by `_`;
 * no leading or trailing dots or spaces; a Windows device name prefixed with `_`; at most
 * MAX_FILE_NAME_BYTES of UTF-8, cut between graphemes and keeping a short extension. An empty
 * result is `fallback`. Idempotent.
 */
export function cleanFileName(name: string, fallback: string): string {
  let s = (name.split(/[\\/]/).pop() ?? '').replace(LONE_SURROGATE, '\uFFFD');
  s = trimEnds(s.replace(CONTROLS, '_').replace(INVISIBLE, '').replace(FORBIDDEN, '_').normalize('NFC'));
  if (RESERVED.test(s)) s = `_${s}`;
  if (bytes(s) > MAX_FILE_NAME_BYTES) {
    const dot = s.lastIndexOf('.');
    const ext = dot > 0 && s.length - dot <= MAX_EXTENSION_LENGTH + 1 ? s.slice(dot) : '';
    const stem = trimEnds(cutToBytes(s.slice(0, s.length - ext.length), MAX_FILE_NAME_BYTES - bytes(ext)));
    s = stem ? stem + ext : trimEnds(cutToBytes(s, MAX_FILE_NAME_BYTES));
  }
  return s || fallback;
}
