// Command ids and titles are written once (src/extension/commandIds.ts); the manifest says the same.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { COMMANDS, commandTitle, TEST_HOOK_COMMANDS, TEST_HOOKS_ENV, testHooksOn } from '../../src/extension/commandIds';

const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { contributes: { commands: Array<{ command: string; title: string }> } };

describe('command ids and titles (one leaf module)', () => {
  it('package.json contributes exactly the commands of commandIds.ts, with the same titles', () => {
    const ours = Object.values(COMMANDS).map((c) => ({ command: c.id, title: c.title }));
    const theirs = manifest.contributes.commands.map((c) => ({ command: c.command, title: c.title }));
    const byId = (a: { command: string }, b: { command: string }): number => a.command.localeCompare(b.command);
    assert.deepEqual([...theirs].sort(byId), [...ours].sort(byId));
  });

  it('ids are unique, and a title in a message drops the ellipsis', () => {
    const ids = Object.values(COMMANDS).map((c) => c.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(commandTitle('setApiToken'), 'Set API Token');
    assert.equal(commandTitle('copyCode'), 'Copy One-Time Code');
  });

  it('contributes no test hook, and registers the hooks only in a test or development host, or with the harness variable', () => {
    const contributed = new Set(manifest.contributes.commands.map((c) => c.command));
    for (const hook of Object.values(TEST_HOOK_COMMANDS)) assert.ok(!contributed.has(hook.id), `${hook.id} is not in package.json`);
    assert.equal(testHooksOn(false, {}), true, 'a test or development host');
    assert.equal(testHooksOn(true, {}), false, 'an installed extension');
    assert.equal(testHooksOn(true, { [TEST_HOOKS_ENV]: '1' }), true, 'an installed extension under a harness');
    assert.equal(testHooksOn(true, { [TEST_HOOKS_ENV]: '0' }), false);
  });
});
