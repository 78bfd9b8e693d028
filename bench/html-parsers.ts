// Which HTML parser the Node side uses (links, text for code extraction, the server's text
// views): parse5 or htmlparser2, measured on one generated 18 MB email body with ~200k links
// and text. Each parser runs in its own child process (a fresh heap), three times, best time
// kept; memory is the growth of the heap (after a full GC, with the result still held) and of
// the resident set while parsing.
//
//   node --import tsx bench/html-parsers.ts
//
// Never part of `npm test`; no figure is asserted.
import { spawnSync } from 'node:child_process';

const TARGET_BYTES = 18 * 1024 * 1024;
const RUNS = 3;

/** An email-like HTML body: table layout, a hidden preheader, paragraphs of text, ~200k links. */
export function bigEmail(): string {
  const parts: string[] = [
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Digest</title><style>td{padding:4px}.x{color:#333}</style></head><body>',
    '<div style="display:none;max-height:0;overflow:hidden">Preheader text</div><table role="presentation"><tbody>',
  ];
  let size = parts.join('').length;
  for (let i = 0; size < TARGET_BYTES; i++) {
    const row =
      `<tr><td class="x">Item ${i} &amp; more: some words of text here, caf&eacute; &#8212; ` +
      `<a href="https://shop.example.com/p/${i}?utm_source=mail&amp;u=${i}">Product ${i}</a></td></tr>\n`;
    parts.push(row);
    size += row.length;
  }
  parts.push('</tbody></table><p>Your code is 482913</p></body></html>');
  return parts.join('');
}

type Parser = 'parse5' | 'htmlparser2' | 'htmlparser2-dom';

async function parseOnce(which: Parser, html: string): Promise<unknown> {
  if (which === 'parse5') {
    // Not a dependency of the project (htmlparser2 was chosen with these figures); present in
    // node_modules through the packaging tools. Loaded by name so the bench still typechecks.
    const name = 'parse5';
    const { parse } = (await import(name)) as { parse(html: string): unknown };
    return parse(html);
  }
  if (which === 'htmlparser2-dom') {
    const { parseDocument } = await import('htmlparser2');
    return parseDocument(html);
  }
  // Streaming, as the extraction code uses it: callbacks collect text and hrefs.
  const { Parser } = await import('htmlparser2');
  const text: string[] = [];
  const hrefs: string[] = [];
  const p = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'a' && attrs.href) hrefs.push(attrs.href);
      },
      ontext(t) {
        text.push(t);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  p.end(html);
  return { text, hrefs };
}

async function child(which: Parser): Promise<void> {
  const html = bigEmail();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the child with --expose-gc');
  let best = Infinity;
  let heapDelta = 0;
  let rssDelta = 0;
  for (let r = 0; r < RUNS; r++) {
    gc();
    const before = process.memoryUsage();
    const t0 = performance.now();
    let result: unknown = await parseOnce(which, html);
    const ms = performance.now() - t0;
    const afterRss = process.memoryUsage().rss;
    gc();
    const afterHeap = process.memoryUsage().heapUsed;
    if (ms < best) best = ms;
    heapDelta = Math.max(heapDelta, afterHeap - before.heapUsed);
    rssDelta = Math.max(rssDelta, afterRss - before.rss);
    if (result === undefined) throw new Error('no result');
    result = undefined;
  }
  process.stdout.write(JSON.stringify({ which, bytes: Buffer.byteLength(html), ms: best, heapMb: heapDelta / 1048576, rssMb: rssDelta / 1048576 }) + '\n');
}

async function main(): Promise<void> {
  const which = process.argv[2] as Parser | undefined;
  if (which) return child(which);
  const self = __filename;
  const rows: Array<Record<string, unknown>> = [];
  for (const p of ['parse5', 'htmlparser2', 'htmlparser2-dom'] as const) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, p], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) {
      console.log(`${p}: could not run (${r.stderr.trim().split('\n')[0]})`);
      continue;
    }
    rows.push(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>);
  }
  console.log(`input: ${(TARGET_BYTES / 1048576).toFixed(1)} MB, best of ${RUNS} runs, each parser in a fresh process (Node ${process.version})`);
  console.log('parser            time ms   heap Δ MB   RSS Δ MB');
  for (const r of rows) {
    console.log(`${String(r.which).padEnd(16)} ${(r.ms as number).toFixed(0).padStart(8)} ${(r.heapMb as number).toFixed(1).padStart(11)} ${(r.rssMb as number).toFixed(1).padStart(10)}`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
