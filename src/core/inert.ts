// Text that came from a message (a subject, a sender, an inbox name, an attachment name) or
// from a server (an error message) shown in the editor's chrome. Two kinds of place:
//   - places where VS Code renders syntax: notifications and progress messages turn
//     `[text](target)` into a link (`command:` URIs included), quick picks and the status bar
//     turn `$(name)` into an icon, Markdown turns `<https://…>` and bare URLs into links;
//   - plain-text places: tree labels, descriptions, tooltips, accessible labels, panel titles.
// In both, a bidi control (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) would make the text read
// as something else ("invoice‮gnp.exe" shows as "invoiceexe.png"; a sender written backwards
// shows as a bank), a control character would break the line, and a 10,000-character subject
// would fill the screen. The same holds in the message view (both its hosts: the editor's panel
// and the web UI, through webview-ui/viewContent.ts and viewProtocol's viewTitle) and in the web
// UI's lists, which take their text from here too. This module is the one place such text is made safe: `inertText` /
// `inert` for the first kind, `plainText` / `plain` for the second. What they return is branded
// (`Inert`, `Plain`): the tree, the notifications and the status bar accept only branded text,
// so mail text cannot reach them without passing here. Pure, imports nothing.

declare const plainBrand: unique symbol;
declare const inertBrand: unique symbol;

/** Text safe for a plain-text place: no bidi controls, no control characters, each value cut to its length. */
export type Plain = string & { readonly [plainBrand]: true };
/** Text safe where VS Code renders syntax: Plain, and no link, icon or autolink syntax in any value. */
export type Inert = Plain & { readonly [inertBrand]: true };

/**
 * Zero-width space: inserted where a syntax needs two characters side by side, so the text
 * reads the same but no renderer sees the syntax.
 */
export const INERT_BREAK = '\u200B';

/** Graphemes a value keeps before it is cut with an ellipsis: a subject or a sender fits; a 10,000-character one does not fill a notification. */
export const MAX_VALUE_LENGTH = 120;
/** Graphemes an error message keeps (the server's or ours, which name a path and a fix). */
export const MAX_MESSAGE_LENGTH = 1000;
/** What a cut value ends with. */
export const ELLIPSIS = '…';
/** A `max` that cuts nothing: for a place that shows the whole value (the message view's header, its headers table). */
export const UNCUT = Number.POSITIVE_INFINITY;

/**
 * Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the implicit
 * marks (U+200E, U+200F, U+061C): they reorder what is shown without being seen. Removed, as
 * attachment names have them removed (core/fileNames.ts): the text then reads in the order it
 * was written.
 */
export const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
/** C0, DEL and C1 controls (line breaks and tabs included); line and paragraph separators: each becomes a space. */
const CONTROLS = /[\p{Cc}\u2028\u2029]/gu;
/** Half of a surrogate pair without the other half: not a character. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

let segmenter: Intl.Segmenter | undefined;

/** `text` cut to at most `max` graphemes (a character with its marks, an emoji sequence), the last being ELLIPSIS when cut. */
function cut(text: string, max: number): string {
  // Fast path: a string no longer than `max` code units has at most `max` graphemes.
  if (text.length <= max) return text;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let out = '';
  let n = 0;
  for (const { segment } of segmenter.segment(text)) {
    if (n === max - 1) {
      // One more grapheme after this one: cut; exactly this one left: keep it.
      return out + (text.length > out.length + segment.length ? ELLIPSIS : segment);
    }
    out += segment;
    n++;
  }
  return out;
}

/** The value with bidi controls removed, controls as spaces, lone surrogates replaced, and cut to `max` graphemes. */
function tame(text: string, max: number): string {
  return cut(text.replace(BIDI_CONTROLS, '').replace(CONTROLS, ' ').replace(LONE_SURROGATE, '\uFFFD'), Math.max(1, max));
}

/**
 * Text for a plain-text place (tree label, description, tooltip, accessible label, panel
 * title): bidi controls removed, control characters as spaces, cut to `max` graphemes with an
 * ellipsis. Idempotent.
 */
export function plainText(text: string, max = MAX_VALUE_LENGTH): Plain {
  return tame(text, max) as Plain;
}

/**
 * plainText, and every link and icon syntax broken: a ZERO WIDTH SPACE after each `]` (no
 * `](…)` inline link, no `][…]` or `]: …` reference), after each `$` that precedes `(` or ends
 * the value (no `$(icon)`, also with the text that follows it), and after each `:` that
 * precedes `//` or ends the value (no autolinked URL). Nothing else changes, so a reader sees
 * the text as sent. Used for untrusted text in every place VS Code renders syntax.
 */
export function inertText(text: string, max = MAX_VALUE_LENGTH): Inert {
  return tame(text, max)
    .replace(/\]/g, `]${INERT_BREAK}`)
    .replace(/\$(?=\(|$)/g, `$${INERT_BREAK}`)
    .replace(/:(?=\/\/|\/?$)/g, `:${INERT_BREAK}`) as Inert;
}

function template<T extends Plain>(each: (value: string) => string) {
  return (strings: TemplateStringsArray, ...values: unknown[]): T => {
    let out = strings[0];
    for (let i = 0; i < values.length; i++) out += each(String(values[i])) + strings[i + 1];
    return out as T;
  };
}

/**
 * Tagged template for text VS Code renders: the literal parts are ours and keep their syntax
 * (`$(check)`), every interpolated value is passed through inertText. Write
 * inert`Copied code ${code} from "${subject}"` and no value can add a link, an icon or a bidi
 * override, or run on for pages.
 */
export const inert = template<Inert>((v) => inertText(v));

/** inert, with values up to MAX_MESSAGE_LENGTH: for an error message, whose value names what went wrong and the fix. */
export const inertMessage = template<Inert>((v) => inertText(v, MAX_MESSAGE_LENGTH));

/** Tagged template for a plain-text place: literal parts are ours, every value is passed through plainText. */
export const plain = template<Plain>((v) => plainText(v));

/** plain, with values up to MAX_MESSAGE_LENGTH (an error row's message). */
export const plainMessage = template<Plain>((v) => plainText(v, MAX_MESSAGE_LENGTH));

