/** The README or CHANGELOG as the extension's details page can show it (see packagedMarkdown.mjs). */
export function packagedMarkdown(markdown: string): string;
