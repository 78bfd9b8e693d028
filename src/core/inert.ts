// Text that came from a message (a subject, a sender, an attachment name) or from a server
// (an error message) shown where VS Code renders syntax: notifications and progress messages
// turn `[text](target)` into a link (`command:` URIs included), quick picks and the status bar
// turn `$(name)` into an icon, Markdown turns `<https://…>` and bare URLs into links.
// `inertText` is the one place such text is neutralised. Pure, imports nothing.

/**
 * Zero-width space: inserted where a syntax needs two characters side by side, so the text
 * reads the same but no renderer sees the syntax.
 */
export const INERT_BREAK = '\u200B';

/**
 * The text with every link and icon syntax broken: a ZERO WIDTH SPACE after each `]` (no
 * `](…)` inline link, no `][…]` or `]: …` reference), after each `$` that precedes `(` (no
 * `$(icon)`), and between `:` and `//` (no autolinked URL). Nothing is removed, so a reader
 * sees the text as sent. Used for untrusted text in every place VS Code renders syntax; never
 * for plain-text places (tree labels, descriptions, plain tooltips).
 */
export function inertText(text: string): string {
  return text
    .replace(/\]/g, `]${INERT_BREAK}`)
    .replace(/\$(?=\()/g, `$${INERT_BREAK}`)
    .replace(/:(?=\/\/)/g, `:${INERT_BREAK}`);
}

/**
 * Tagged template for a message VS Code renders: the literal parts are ours and keep their
 * syntax (`$(check)`), every interpolated value is passed through inertText. Write
 * inert`Copied code ${code} from "${subject}"` and no value can add a link or an icon.
 */
export function inert(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += inertText(String(values[i])) + strings[i + 1];
  return out;
}
