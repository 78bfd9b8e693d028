// The rules of `npm run lint` (eslint.config.mjs) fail on a planted breach: the two stores
// import each other never, the store interface imports no store, vscode stays in the extension,
// and a promise is never dropped (type-aware).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const REPO = path.resolve(__dirname, '../..');

/**
 * ESLint on the project's config, linting the text it is given. typescript-eslint takes CI=true
 * as a single `eslint` run and then parses the files from disk, not the planted text: that
 * inference is off here, so the test lints what it plants wherever it runs.
 */
function projectEslint(): ESLint {
  return new ESLint({ cwd: REPO, overrideConfig: { languageOptions: { parserOptions: { disallowAutomaticSingleRunInference: true } } } });
}

/** The no-restricted-imports messages for `code` as the text of `file` (an existing file of the project: lint is type-aware). */
async function restrictedImports(file: string, code: string): Promise<string[]> {
  const eslint = projectEslint();
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO, file) });
  return result.messages.filter((m) => /no-restricted-imports$/.test(m.ruleId ?? '')).map((m) => m.message);
}

describe('lint: layer rules', function () {
  this.timeout(120_000);

  it('the PostgreSQL store importing the Maildir store fails', async () => {
    const msgs = await restrictedImports('src/server/store/postgres/columns.ts', "import { MaildirStore } from '../maildir/store';\nexport const s = MaildirStore;\n");
    assert.equal(msgs.length, 1, msgs.join('\n'));
    assert.match(msgs[0], /PostgreSQL store never imports the Maildir store/);
  });

  it('the Maildir store importing the PostgreSQL store fails', async () => {
    const msgs = await restrictedImports('src/server/store/maildir/fileOps.ts', "import { PostgresStore } from '../postgres/store';\nexport const s = PostgresStore;\n");
    assert.equal(msgs.length, 1, msgs.join('\n'));
    assert.match(msgs[0], /Maildir store never imports the PostgreSQL store/);
  });

  it('the store interface importing a store fails, and a store keeps the server rules', async () => {
    const shared = await restrictedImports('src/server/store/errors.ts', "import { MaildirStore } from './maildir/store';\nexport const s = MaildirStore;\n");
    assert.equal(shared.length, 1, shared.join('\n'));
    assert.match(shared[0], /import no store implementation/);
    const up = await restrictedImports('src/server/store/maildir/fileOps.ts', "import { main } from '../../../cli/cli';\nimport * as vscode from 'vscode';\nexport const s = [main, vscode];\n");
    assert.equal(up.length, 2, up.join('\n'));
  });

  it('a store importing the shared store code passes', async () => {
    const msgs = await restrictedImports('src/server/store/postgres/columns.ts', "import { StoreError } from '../errors';\nimport type { Store } from '../types';\nexport const s: Store | StoreError | undefined = undefined;\n");
    assert.deepEqual(msgs, []);
  });

  it('a dropped promise fails (type-aware no-floating-promises); awaited or an explicit void passes', async () => {
    const eslint = projectEslint();
    // An existing file of the project with other text: the type information is the project's.
    const file = path.join(REPO, 'src/core/sleep.ts');
    const lint = async (code: string): Promise<string[]> => (await eslint.lintText(code, { filePath: file }))[0].messages.filter((m) => m.ruleId === '@typescript-eslint/no-floating-promises').map((m) => m.message);
    const dropped = await lint("export function later(): Promise<void> {\n  return Promise.resolve();\n}\nexport function go(): void {\n  later();\n}\n");
    assert.equal(dropped.length, 1, 'the dropped promise is reported');
    assert.deepEqual(await lint("export function later(): Promise<void> {\n  return Promise.resolve();\n}\nexport async function go(): Promise<void> {\n  await later();\n  void later(); // fire and forget: nothing waits for it\n}\n"), []);
  });
});
