// The facade-length check of `npm run lint` (scripts/check-facades.mjs) passes on the repository,
// fails on a copy whose facade is one line too long (61, naming it), and passes at exactly 60.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const CHECKER = path.join(ROOT, 'scripts/check-facades.mjs');
const FILES = ['src/server/server.ts', 'src/server/smtp/smtp.ts', 'src/cli/cli.ts'];

function check(root: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CHECKER, root], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

/** Pads `name` in `file` under `root` with comment lines until it is `lines` long, from `function` to its closing brace. */
async function padTo(root: string, file: string, name: string, lines: number): Promise<void> {
  const text = (await fs.readFile(path.join(root, file), 'utf8')).split('\n');
  const start = text.findIndex((l) => new RegExp(`^export (async )?function ${name}\\(`).test(l));
  const end = text.findIndex((l, i) => i > start && l === '}');
  text.splice(start + 1, 0, ...Array<string>(lines - (end - start + 1)).fill('  // padding'));
  await fs.writeFile(path.join(root, file), text.join('\n'));
}

describe('lint: startInboxServer, createSmtpServer and the CLI main stay at most 60 lines', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-facades-'));
    for (const f of FILES) {
      await fs.mkdir(path.dirname(path.join(dir, f)), { recursive: true });
      await fs.copyFile(path.join(ROOT, f), path.join(dir, f));
    }
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('passes on the repository', () => {
    const r = check(ROOT);
    assert.equal(r.status, 0, r.out);
  });

  for (const [file, name] of [['src/server/server.ts', 'startInboxServer'], ['src/server/smtp/smtp.ts', 'createSmtpServer'], ['src/cli/cli.ts', 'main']] as const) {
    it(`fails when ${name} is 61 lines, naming it, and passes at 60`, async () => {
      await padTo(dir, file, name, 61);
      const r = check(dir);
      assert.equal(r.status, 1, r.out);
      assert.match(r.out, new RegExp(`${name} is 61 lines, more than 60`));
      await fs.copyFile(path.join(ROOT, file), path.join(dir, file));
      await padTo(dir, file, name, 60);
      assert.equal(check(dir).status, 0);
    });
  }
});
