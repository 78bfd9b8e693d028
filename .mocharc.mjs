// The Node suites (`npm run test:node`, `npx mocha`): mocha's parallel mode with 4 workers on any
// machine. Many files wait more than they compute (a child server's start, PostgreSQL, a browser,
// a timer), so on 2 cores 4 workers keep both busy where 2 left a third of them idle.
//
// Order: mocha hands files to the workers in this order, so the files that take longest start
// first and no long file is left running alone at the end. The list is a scheduling hint only
// (every file runs once either way): the files that took longest in a timed run of all (each
// file's wall time, 4 workers on 2 cores), longest first.
import { readdirSync } from 'node:fs';

const LONGEST_FIRST = [
  'test/server/cli.test.ts',
  'test/server/one-answer.test.ts',
  'test/server/team.test.ts',
  'test/server/big-messages.test.ts',
  'test/server/mcp.test.ts',
  'test/unit/webview-sanitize.test.ts',
  'test/server/webui-browser.test.ts',
  'test/unit/extension-localServer.test.ts',
  'test/server/webui-team.test.ts',
  'test/server/deleteDurability.test.ts',
  'test/server/durability.test.ts',
  'test/server/budget-leak.test.ts',
  'test/server/layout.test.ts',
  'test/server/chaos-delivery.test.ts',
];

/** Every `*.test.ts` under test/unit and test/server, in path order. */
const all = ['test/unit', 'test/server'].flatMap((dir) =>
  readdirSync(dir, { recursive: true })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `${dir}/${f.split('\\').join('/')}`)
    .sort(),
);
const missing = LONGEST_FIRST.filter((f) => !all.includes(f));
if (missing.length > 0) throw new Error(`.mocharc.mjs: no such test file: ${missing.join(', ')}`);

export default {
  require: ['tsx/cjs'],
  extension: ['ts'],
  spec: [...LONGEST_FIRST, ...all.filter((f) => !LONGEST_FIRST.includes(f))],
  timeout: 20000,
  reporter: 'spec',
  parallel: true,
  jobs: 4,
};
