// Short facades (issue 37): the functions that compose the server and the CLI stay at most
// MAX_LINES lines, counted from the line of `function` to the line of the closing brace. A new
// option goes into its section (src/server/serverOptions.ts, src/cli/serveOptions.ts) and the step
// that uses it, never into the facade. Run by `npm run lint`; exits 1 naming each long facade.
//   node scripts/check-facades.mjs [root]    (default: the repository)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MAX_LINES = 60;

/** Each facade: its file and the name of its function declaration. */
const FACADES = [
  { file: 'src/server/server.ts', name: 'startInboxServer' },
  { file: 'src/server/smtp/smtp.ts', name: 'createSmtpServer' },
  { file: 'src/cli/cli.ts', name: 'main' },
];

const root = process.argv[2] ?? path.resolve(import.meta.dirname, '..');
const problems = [];
for (const { file, name } of FACADES) {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const fn = source.statements.find((s) => ts.isFunctionDeclaration(s) && s.name?.text === name && s.body);
  if (!fn) {
    problems.push(`${file}: no function ${name} (update scripts/check-facades.mjs if it moved)`);
    continue;
  }
  // From the `function` keyword (after `export`, `async`) to the closing brace.
  const keyword = fn.getChildren(source).find((c) => c.kind === ts.SyntaxKind.FunctionKeyword);
  const first = source.getLineAndCharacterOfPosition(keyword.getStart(source)).line;
  const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
  const lines = last - first + 1;
  if (lines > MAX_LINES) problems.push(`${file}:${first + 1}: ${name} is ${lines} lines, more than ${MAX_LINES}: move a step into a named function`);
}
if (problems.length > 0) {
  for (const p of problems) console.error(`check-facades: ${p}`);
  process.exit(1);
}
