// No import cycles: every import counts, `import type` included (a type-only cycle
// still ties two modules' designs together). Run by `npm run lint`; exits 1 naming each cycle.
//   node scripts/check-cycles.mjs [dir]    (default src)
import madge from 'madge';

const dir = process.argv[2] ?? 'src';
const result = await madge(dir, {
  fileExtensions: ['ts'],
  detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
});
const cycles = result.circular();
if (cycles.length > 0) {
  process.stderr.write(`${cycles.length} import cycle(s) in ${dir} (type-only imports count):\n`);
  for (const c of cycles) process.stderr.write(`  ${[...c, c[0]].join(' → ')}\n`);
  process.exit(1);
}
process.stdout.write(`no import cycles in ${dir} (${Object.keys(result.obj()).length} modules)\n`);
