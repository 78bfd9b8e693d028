// How an SMS text is sent over the air: its encoding and its number of segments, by the
// standard rules (GSM 03.38). Pure, shared by the server (Twilio's num_segments) and the
// message view.
//
// - GSM-7 when every character is in the basic set or the extension table; an extension
//   character costs two septets (escape + character). One segment holds 160 septets; a
//   longer text is split into segments of 153 (7 septets go to the concatenation header),
//   and an escape pair is never split across two segments.
// - UCS-2 otherwise, counted in UTF-16 code units: 70 in one segment, 67 per segment of a
//   longer text, and a surrogate pair is never split across two segments.

export type SmsEncoding = 'GSM-7' | 'UCS-2';

interface SmsSegmentInfo {
  encoding: SmsEncoding;
  /** Number of SMS the text is sent as (1 for an empty text: it is still one message). */
  segments: number;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) of the whole text. */
  units: number;
}

/** Septets in a single-segment GSM-7 SMS (140 octets × 8 / 7). */
const GSM7_SINGLE_SEGMENT = 160;
/** Septets per segment of a concatenated GSM-7 SMS: the 6-octet header takes 7 septets. */
const GSM7_MULTI_SEGMENT = 153;
/** UTF-16 code units in a single-segment UCS-2 SMS (140 octets / 2). */
const UCS2_SINGLE_SEGMENT = 70;
/** UTF-16 code units per segment of a concatenated UCS-2 SMS: the 6-octet header takes 3 units. */
const UCS2_MULTI_SEGMENT = 67;

/** The GSM 03.38 basic character set (the escape code 0x1B excluded: it is not a character of the text). */
const GSM7_BASIC = new Set(
  [
    '@£$¥èéùìòÇ\nØø\rÅå',
    'Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ',
    ' !"#¤%&\'()*+,-./',
    '0123456789:;<=>?',
    '¡ABCDEFGHIJKLMNO',
    'PQRSTUVWXYZÄÖÑÜ§',
    '¿abcdefghijklmno',
    'pqrstuvwxyzäöñüà',
  ].join(''),
);
/** The GSM 03.38 extension table: each is sent as escape + character, two septets. */
const GSM7_EXTENSION = new Set(['\f', '^', '{', '}', '\\', '[', '~', ']', '|', '€']);

/** Septets of one character in GSM-7, or undefined when GSM-7 cannot carry it. */
function gsmSeptets(ch: string): number | undefined {
  if (GSM7_BASIC.has(ch)) return 1;
  if (GSM7_EXTENSION.has(ch)) return 2;
  return undefined;
}

/** Segments needed for items of the given sizes, never splitting one item across two segments. */
function countSegments(sizes: number[], total: number, single: number, multi: number): number {
  if (total <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > multi) {
      segments++;
      used = 0;
    }
    used += size;
  }
  return segments;
}

/** Encoding and segment count of an SMS text. */
export function smsSegments(text: string): SmsSegmentInfo {
  const chars = Array.from(text);
  const septets: number[] = [];
  for (const ch of chars) {
    const n = gsmSeptets(ch);
    if (n === undefined) {
      const units = chars.map((c) => c.length);
      const total = text.length;
      return { encoding: 'UCS-2', units: total, segments: countSegments(units, total, UCS2_SINGLE_SEGMENT, UCS2_MULTI_SEGMENT) };
    }
    septets.push(n);
  }
  const total = septets.reduce((a, b) => a + b, 0);
  return { encoding: 'GSM-7', units: total, segments: countSegments(septets, total, GSM7_SINGLE_SEGMENT, GSM7_MULTI_SEGMENT) };
}

/** The number→inbox rule used everywhere: a phone number's digits only (`+` and separators dropped). */
export function phoneDigits(number: string): string {
  return number.replace(/[^0-9]/g, '');
}

/** Characters of an SMS text kept in a title (a tree row, an editor tab, a subject line). */
const SMS_TITLE_CHARS = 48;
/**
 * The first words of a text on one line, at most `max` characters: whitespace runs become
 * one space, and a longer text is cut at the last word boundary that fits (mid-word only when
 * one word is longer) and ends with "…".
 */
export function firstWords(text: string, max = SMS_TITLE_CHARS): string {
  const one = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(one);
  if (chars.length <= max) return one;
  const head = chars.slice(0, max - 1).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= Math.floor(max / 2) ? head.slice(0, space) : head;
  return `${cut.replace(/[\s.,;:!?·-]+$/u, '')}…`;
}

/** The subject the local server stores for an SMS: the first words of its text ("SMS" when it has none). */
export function smsSubject(text: string): string {
  return firstWords(text) || 'SMS';
}
