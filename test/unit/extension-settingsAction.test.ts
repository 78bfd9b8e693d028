// Change Port lands on the port setting, on the tab where it can be edited: the User tab in a
// local window, the Remote tab in a remote window (the local server's settings are
// machine-scoped there). The command ids are VS Code's own (preferences.contribution.ts).
import assert from 'node:assert/strict';
import { commandFor, openSettingCommand, useRemoteName } from '../../src/extension/tree/actions';

describe('actions that send the user to a setting', () => {
  afterEach(() => useRemoteName(undefined));

  it('Change Port opens the Settings editor on testInbox.local.httpPort, on the Remote tab in a remote window', () => {
    useRemoteName(undefined);
    assert.deepEqual(commandFor('changePort'), { command: 'workbench.action.openSettings', args: ['testInbox.local.httpPort'] });
    useRemoteName('ssh-remote');
    assert.deepEqual(commandFor('changePort'), { command: 'workbench.action.openRemoteSettings', args: ['testInbox.local.httpPort'] });
    useRemoteName('');
    assert.equal(commandFor('changePort').command, 'workbench.action.openSettings', 'an empty remote name is a local window');
    assert.deepEqual(openSettingCommand('testInbox.local.dataFolder', 'wsl'), { command: 'workbench.action.openRemoteSettings', args: ['testInbox.local.dataFolder'] });
  });
});
