import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { EXTENSION_ID, activateExtension, getExtension, hostKind } from './helpers';

describe('extension activation in a real extension host', () => {
  it('runs in the kind of host the runner said it started', () => {
    const kind = hostKind();
    console.log(
      `host: runner=${kind ?? 'unknown'} uiKind=${vscode.UIKind[vscode.env.uiKind]} appName="${vscode.env.appName}" ` +
        `version=${vscode.version} remoteName=${vscode.env.remoteName ?? '(none)'} node=${process.version}`,
    );
    assert.ok(kind, 'the runner sets TEST_INBOX_IT_HOST; it is missing, so this host was not started by scripts/integration');
    // code-server serves the workbench to a browser; @vscode/test-electron starts desktop VS Code.
    const expected = kind === 'code-server' ? vscode.UIKind.Web : vscode.UIKind.Desktop;
    assert.equal(vscode.env.uiKind, expected);
  });

  it('loads the extension from the clone under its manifest id', () => {
    const ext = getExtension();
    assert.equal(ext.id, EXTENSION_ID);
    assert.equal(ext.packageJSON.name, 'test-inbox');
    assert.equal(ext.packageJSON.main, './dist/extension.js');
  });

  it('activates without throwing and reports itself active', async () => {
    await activateExtension();
    assert.equal(getExtension().isActive, true);
  });
});
