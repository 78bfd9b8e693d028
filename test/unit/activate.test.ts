// activate() only composes (docs/architecture.md): at most 60 lines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

describe('activate() only composes', () => {
  it('is at most 60 lines long', () => {
    const lines = readFileSync(path.resolve(__dirname, '../../src/extension/extension.ts'), 'utf8').split('\n');
    const start = lines.findIndex((l) => /^export (async )?function activate\(/.test(l));
    assert.ok(start >= 0, 'activate() is found');
    const end = lines.findIndex((l, i) => i > start && l === '}');
    assert.ok(end - start + 1 <= 60, `activate() is ${end - start + 1} lines`);
  });
});
