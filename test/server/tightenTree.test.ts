// layout.ts tightenTree: every folder 0700 and every file 0600 under a root, reading each folder's
// entries a batch at a time (a folder of many messages is never one array), a skipped folder's
// entries left alone, and a walk that is told to stop saying it did not end. Real files.
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tightenTree } from '../../src/server/store/maildir/layout';

describe('tightenTree', () => {
  let root: string;
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'test-inbox-tighten-'));
  });
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true });
    await fs.rm(`${root}-outside`, { force: true });
  });

  /** `files` 0644 files in `dir` (0755), made under root. */
  async function widened(dir: string, files: number): Promise<string> {
    const d = path.join(root, dir);
    await fs.mkdir(d, { recursive: true, mode: 0o755 });
    await fs.chmod(d, 0o755);
    for (let i = 0; i < files; i++) await fs.writeFile(path.join(d, `${i}.eml`), 'x', { mode: 0o644 });
    return d;
  }

  const modeOf = async (p: string): Promise<number> => (await fs.lstat(p)).mode & 0o777;

  it('makes every file and folder private, through folders of more entries than one read returns', async () => {
    const big = await widened('a/b/new', 700);
    const small = await widened('a/c', 3);
    const outside = path.join(`${root}-outside`);
    await fs.writeFile(outside, 'x', { mode: 0o644 });
    await fs.chmod(outside, 0o644);
    await fs.symlink(outside, path.join(small, 'link'));
    const { changed, complete } = await tightenTree(root);
    assert.equal(complete, true);
    // root, a, a/b, a/b/new, a/c (folders: root was 0700 already from mkdtemp) and 703 files.
    assert.equal(changed, 4 + 703);
    for (const f of await fs.readdir(big)) assert.equal(await modeOf(path.join(big, f)), 0o600, f);
    assert.equal(await modeOf(big), 0o700);
    assert.equal(await modeOf(path.join(small, '0.eml')), 0o600);
    // A link is never followed.
    assert.equal(await modeOf(outside), 0o644);
  });

  it('leaves the entries of a skipped folder alone but tightens the folder itself', async () => {
    const skipped = await widened('x/new', 2);
    const { complete } = await tightenTree(root, { skip: new Set([skipped]) });
    assert.equal(complete, true);
    assert.equal(await modeOf(skipped), 0o700);
    assert.equal(await modeOf(path.join(skipped, '0.eml')), 0o644);
  });

  it('never goes through a root that is a symlink, and makes a root that is a file 0600', async () => {
    const real = await widened('real', 1);
    const link = path.join(root, 'link');
    await fs.symlink(real, link);
    assert.deepEqual(await tightenTree(link), { changed: 0, complete: true });
    assert.equal(await modeOf(real), 0o755);
    assert.equal(await modeOf(path.join(real, '0.eml')), 0o644);
    const file = path.join(real, '0.eml');
    assert.deepEqual(await tightenTree(file), { changed: 1, complete: true });
    assert.equal(await modeOf(file), 0o600);
    assert.deepEqual(await tightenTree(path.join(root, 'missing')), { changed: 0, complete: true });
  });

  it('reports the skipped folders it met as real folders, not those behind a symlink', async () => {
    const a = await widened('a/new', 1);
    const b = await widened('b/new', 1);
    await fs.rm(path.join(root, 'b'), { recursive: true });
    await fs.symlink(path.dirname(a), path.join(root, 'b'));
    const met = new Set<string>();
    await tightenTree(root, { skip: new Set([a, b]), met });
    assert.deepEqual([...met], [a]);
  });

  it('says it did not end when told to stop, having stopped between batches', async () => {
    const big = await widened('new', 700);
    let asked = 0;
    // Stops at the check after the first batch of entries.
    const { complete } = await tightenTree(root, { stopped: () => ++asked > 2 });
    assert.equal(complete, false);
    const modes = await Promise.all((await fs.readdir(big)).map((f) => modeOf(path.join(big, f))));
    const done = modes.filter((m) => m === 0o600).length;
    assert.ok(done > 0 && done < 700, `${done} of 700 tightened`);
  });
});
