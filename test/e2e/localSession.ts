// One workbench whose extension starts its own local server (free ports, a temp data folder),
// shared by the e2e tests that need nothing else: copyCode's first test, Open in Browser and
// Simulate Failures. A workbench session is about 20 s of CPU on a 2-core machine. The first
// test that asks starts it (copyCode's, which checks the empty server's welcome view, runs
// first: mocha loads the files in path order); it ends after the run. Each test uses an inbox
// and a subject of its own, so what one leaves in the server cannot satisfy another's check.
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startWorkbench, type Workbench } from '../../scripts/integration/workbench';
import { allowClipboard, endSession, keepFailure, VSIX } from './ui';

export interface LocalSession {
  wb: Workbench;
  dataDir: string;
}

let session: Promise<LocalSession> | undefined;

/** The shared session, started on first use. */
export function localSession(): Promise<LocalSession> {
  session ??= (async () => {
    const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'test-inbox-e2e-'));
    const wb = await startWorkbench({
      vsix: VSIX,
      settings: { 'testInbox.local.httpPort': 0, 'testInbox.local.smtpPort': 0, 'testInbox.local.dataFolder': dataDir },
    });
    await allowClipboard(wb);
    return { wb, dataDir };
  })();
  return session;
}

/** For a test's afterEach: a failed test keeps a screenshot of the shared session. */
export async function keepLocalSessionFailure(test: Mocha.Test | undefined): Promise<void> {
  if (test?.state !== 'failed' || session === undefined) return;
  const s = await session.catch(() => undefined);
  process.stderr.write(`e2e: screenshot of the failure kept in ${await keepFailure(s?.wb, test.title)}\n`);
}

// A root hook (this module is loaded at a test file's top level): the session ends after the run.
after(async () => {
  const s = await session?.catch(() => undefined);
  session = undefined;
  if (s === undefined) return;
  await endSession(undefined, s.wb);
  await fsp.rm(s.dataDir, { recursive: true, force: true });
});
