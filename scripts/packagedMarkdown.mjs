// The README and CHANGELOG as the extension's details page can show them. VS Code loads
// images there only from https: and data: sources, and the project has no public home that
// could serve the repository's screenshots, so the packaged copy leaves out every other
// image (a line or a table made only of images goes whole) and turns links to files of the
// repository into their plain text. Fenced code blocks are left as they are.

/** A link or image target the details page can open as it is. */
function isAbsolute(target) {
  return /^(https:|http:|mailto:|data:|#)/i.test(target);
}

const IMAGE = /!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const LINK = /(?<!!)\[([^\]]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** Removes images the page cannot load; `undefined` when nothing but such images was on the line. */
function withoutLocalImages(line) {
  let removed = false;
  const out = line.replace(IMAGE, (whole, _alt, target) => {
    if (isAbsolute(target) && !/^http:/i.test(target)) return whole;
    removed = true;
    return '';
  });
  if (removed && out.replace(/[|\s]/g, '') === '') return undefined;
  return out;
}

function withoutLocalLinks(line) {
  return line.replace(LINK, (whole, text, target) => (isAbsolute(target) ? whole : text));
}

const isTableLine = (line) => /^\s*\|/.test(line);
const isSeparator = (line) => /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line);

/** @param {string} markdown */
export function packagedMarkdown(markdown) {
  const lines = markdown.split('\n');
  const out = [];
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced || /^\s*(```|~~~)/.test(line)) {
      out.push(line);
      continue;
    }
    if (isTableLine(line)) {
      // A table is dropped whole when every body row was only images.
      let end = i;
      while (end < lines.length && isTableLine(lines[end])) end++;
      const table = lines.slice(i, end);
      const body = table.filter((l, k) => k > 0 && !isSeparator(l));
      if (body.length > 0 && body.every((l) => withoutLocalImages(l) === undefined)) {
        i = end - 1;
        continue;
      }
      for (const l of table) out.push(withoutLocalLinks(withoutLocalImages(l) ?? ''));
      i = end - 1;
      continue;
    }
    const kept = withoutLocalImages(line);
    if (kept === undefined) continue;
    out.push(withoutLocalLinks(kept));
  }
  // No runs of blank lines where images were.
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}
