// `npm run test:unit`: the pure tests (no server, no socket, no child process) of test/unit,
// for the inner loop; prints how long it took. A test file that starts a server or a process
// is left to `npm run test:node` (detected from its source, so a new one is sorted by itself).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const DIR = 'test/unit';
const IMPURE = /startInboxServer|startApi|createServer|\.listen\(|spawn|fork\(|execFile|child_process|mkdtemp/;
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => path.join(DIR, f))
  .filter((f) => !IMPURE.test(readFileSync(f, 'utf8')));
const started = process.hrtime.bigint();
const r = spawnSync(process.execPath, [path.join('node_modules', 'mocha', 'bin', 'mocha.js'), '--no-config', '-r', 'tsx/cjs', '--extension', 'ts', '--timeout', '20000', '--reporter', 'dot', ...files, ...process.argv.slice(2)], { stdio: 'inherit' });
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`test:unit: ${files.length} files in ${seconds.toFixed(1)} s\n`);
process.exit(r.status ?? 1);
