// The first `npm start` without desktop VS Code builds code-server for minutes
// (scripts/integration/install.ts): each step says what it does, and keeps saying it is still
// at it while npm itself prints nothing.
import assert from 'node:assert/strict';
import { withProgress } from '../../scripts/integration/install';

describe('code-server install progress', () => {
  it('says what a step does when it starts, that it is still working while it runs, and nothing once it ended', async () => {
    const lines: string[] = [];
    const started = Date.now() - 125_000;
    const result = await withProgress('Step 2 of 2: compiling', (l) => lines.push(l), started, () => new Promise<string>((r) => setTimeout(() => r('built'), 130)), 40);
    assert.equal(result, 'built');
    assert.equal(lines[0], 'Step 2 of 2: compiling…');
    const still = lines.slice(1);
    assert.ok(still.length >= 2, lines.join('\n'));
    for (const l of still) assert.match(l, /^ {2}still working \(2 min 5 s so far\)…$/);
    const count = lines.length;
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(lines.length, count, 'no line after the step ended');
  });

  it('stops saying so when the step fails, and passes the failure on', async () => {
    const lines: string[] = [];
    await assert.rejects(withProgress('Step 1 of 2: downloading', (l) => lines.push(l), Date.now(), () => Promise.reject(new Error('npm failed')), 20), /npm failed/);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(lines, ['Step 1 of 2: downloading…']);
  });
});
