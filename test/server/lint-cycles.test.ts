// The import-cycle check of `npm run lint` (scripts/check-cycles.mjs) fails on a planted cycle,
// a type-only one included, and passes on the same files without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const CHECKER = path.resolve(__dirname, '../../scripts/check-cycles.mjs');

function check(dir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CHECKER, dir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('lint: no import cycles, type-only imports counted', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-cycles-'));
    await fs.mkdir(path.join(dir, 'x'));
    await fs.writeFile(path.join(dir, 'x', 'a.ts'), "import { bee } from '../b';\nexport const a = (): number => bee;\n");
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('passes without a cycle', async () => {
    await fs.writeFile(path.join(dir, 'b.ts'), 'export const bee = 1;\n');
    const r = check(dir);
    assert.equal(r.status, 0, r.out);
  });

  it('fails on a planted cycle whose way back is `import type`, naming it', async () => {
    await fs.writeFile(path.join(dir, 'b.ts'), "import type { a } from './x/a';\nexport const bee = 1;\nexport type A = typeof a;\n");
    const r = check(dir);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /1 import cycle/);
    assert.match(r.out, /x\/a\.ts → b\.ts → x\/a\.ts|b\.ts → x\/a\.ts → b\.ts/);
  });

  it('fails on a planted cycle of plain imports', async () => {
    await fs.writeFile(path.join(dir, 'b.ts'), "import { a } from './x/a';\nexport const bee = 1;\nexport const again = a;\n");
    assert.equal(check(dir).status, 1);
  });
});
