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

// ---- Names the store gives to files ---------------------------------------------------------
//
// The one mapping from a name a sender chooses (a domain, an inbox, a message id) to a file or
// directory name, and back. Its output is the same file on every system VS Code runs on:
//   - only `[a-z0-9._+=-]` stays as it is; every other UTF-8 byte becomes `%HH` (upper-case hex),
//     so no character Windows forbids (`<>:"/\|?*`, controls), no space and no non-ASCII
//     character (which macOS and Windows fold or normalise) reaches the file system;
//   - upper-case letters are escaped too, so two names never map to names that differ only in
//     case (case-insensitive file systems: macOS and Windows defaults);
//   - a Windows device name (`con`, `nul`, `aux`, `prn`, `com0`–`com9`, `lpt0`–`lpt9`), alone or
//     with any extension, gets its first letter escaped (`con.txt` → `%63on.txt`);
//   - a leading dot (hidden files, `.` and `..`) and a trailing dot (Windows drops it) are escaped.
// decodeFileName accepts exactly what encodeFileName produces, so the mapping round-trips and a
// file name has one meaning.

const KEPT_BYTE = /^[a-z0-9._+=-]$/;
/** Windows device names: the part before the first dot, in any case. */
const DEVICE_STEM = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

const hexByte = (b: number): string => '%' + b.toString(16).toUpperCase().padStart(2, '0');

/** A name every byte of which stays, with no dot at either end: most inbox names and every message id. */
const PLAIN_NAME = /^[a-z0-9_+=-](?:[a-z0-9._+=-]*[a-z0-9_+=-])?$/;

/** The file-system name of `name` (any string); see above. The empty string stays empty. */
export function encodeFileName(name: string): string {
  // The common case without a byte-by-byte copy: the store maps every message's path on its
  // acknowledgement path, and that copy was a tenth of the server's main-thread time under load.
  if (PLAIN_NAME.test(name)) {
    const dot = name.indexOf('.');
    if (!DEVICE_STEM.test(dot < 0 ? name : name.slice(0, dot))) return name;
  }
  const parts: string[] = [];
  for (const b of encoder.encode(name)) {
    const c = String.fromCharCode(b);
    parts.push(KEPT_BYTE.test(c) ? c : hexByte(b));
  }
  const last = parts.length - 1;
  if (parts[0] === '.') parts[0] = hexByte(0x2e);
  if (last > 0 && parts[last] === '.') parts[last] = hexByte(0x2e);
  const dot = parts.indexOf('.');
  if (DEVICE_STEM.test(parts.slice(0, dot < 0 ? parts.length : dot).join(''))) parts[0] = hexByte(parts[0].charCodeAt(0));
  return parts.join('');
}

const ESCAPED_FILE_NAME = /^(?:[a-z0-9._+=-]|%[0-9A-F]{2})*$/;

/** The name whose file-system name is `fileName`, or undefined when encodeFileName never produces `fileName`. */
export function decodeFileName(fileName: string): string | undefined {
  if (!ESCAPED_FILE_NAME.test(fileName)) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < fileName.length; ) {
    if (fileName[i] === '%') {
      bytes.push(parseInt(fileName.slice(i + 1, i + 3), 16));
      i += 3;
    } else bytes.push(fileName.charCodeAt(i++));
  }
  let name: string;
  try {
    // ignoreBOM: a name may begin with U+FEFF, which a default decoder would drop as a byte-order mark.
    name = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
  return encodeFileName(name) === fileName ? name : undefined;
}
