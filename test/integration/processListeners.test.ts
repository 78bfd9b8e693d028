// The extension host's process listeners: starting and stopping the local server, however
// often, adds none (the warning "11 exit listeners added to [process]" of the integration run
// came from the suites' own cleanup, one per suite bundle; test/support/atExit.ts).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { useLocalServer, waitForState } from './support/state';

const RESTARTS = 4;
const EVENTS = ['exit', 'SIGINT', 'SIGTERM', 'uncaughtException', 'unhandledRejection', 'beforeExit'] as const;

function counts(): Record<string, number> {
  return Object.fromEntries(EVENTS.map((e) => [e, process.listenerCount(e)]));
}

describe('the extension host process listeners', function () {
  this.timeout(120_000);

  it(`Stop and Start Local Server ${RESTARTS} times, and two useLocalServer calls, add no process listener`, async () => {
    await useLocalServer();
    const before = counts();
    for (let i = 0; i < RESTARTS; i++) {
      assert.equal(await vscode.commands.executeCommand('testInbox.stopLocalServer'), 'stopped');
      await waitForState((s) => s.connection.kind === 'stopped', `the stopped state (round ${i + 1})`);
      await vscode.commands.executeCommand('testInbox.startLocalServer');
      await waitForState((s) => s.connection.kind === 'ready' && s.localPid !== undefined, `the restarted server (round ${i + 1})`);
    }
    await useLocalServer();
    await useLocalServer();
    assert.deepEqual(counts(), before);
  });
});
