// No stairs up: at every folder of src/, its entries (each file and each sub-folder, taken
// whole) import one another without a loop. A file-level cycle is caught by check-cycles.mjs;
// this catches the folder-level one: tree/ importing commands/ while commands/ imports tree/,
// directly or through others. Run by `npm run lint`; exits 1 naming each loop.
//   node scripts/check-floors.mjs [dir]    (default src)
import path from 'node:path';
import madge from 'madge';

const root = process.argv[2] ?? 'src';
const result = await madge(root, {
  fileExtensions: ['ts'],
  detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
});
/** file → files it imports, paths relative to `root` with '/' separators. */
const graph = result.obj();

/** Every folder that holds files, by relative path ('' is the root). */
const folders = new Set();
for (const file of Object.keys(graph)) {
  const parts = file.split('/');
  for (let i = 0; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
}

/** The entry of `folder` that holds `file`, or undefined when the file lies outside the folder. */
function entryOf(folder, file) {
  const prefix = folder === '' ? '' : folder + '/';
  if (!file.startsWith(prefix)) return undefined;
  return file.slice(prefix.length).split('/')[0];
}

/** Loops among one folder's entries (Tarjan's strongly connected components of size > 1). */
function loops(edges) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

const problems = [];
for (const folder of [...folders].sort()) {
  /** entry → entries it imports, each with one file-level import that shows it. */
  const edges = new Map();
  const witness = new Map();
  for (const [file, deps] of Object.entries(graph)) {
    const from = entryOf(folder, file);
    if (from === undefined) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    for (const dep of deps) {
      const to = entryOf(folder, dep);
      if (to === undefined || to === from) continue;
      edges.get(from).add(to);
      if (!witness.has(`${from}>${to}`)) witness.set(`${from}>${to}`, `${file} → ${dep}`);
    }
  }
  for (const scc of loops(edges)) {
    const inLoop = new Set(scc);
    const shown = [];
    for (const from of scc) for (const to of edges.get(from) ?? []) if (inLoop.has(to)) shown.push(`    ${witness.get(`${from}>${to}`)}`);
    problems.push(`  in ${path.posix.join(root, folder)}/: ${scc.join(', ')} import one another:\n${shown.join('\n')}`);
  }
}
if (problems.length > 0) {
  process.stderr.write(`${problems.length} folder loop(s) in ${root} (an import that runs up a floor):\n${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`no folder loops in ${root} (${folders.size} folders)\n`);
