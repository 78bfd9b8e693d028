import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { bestCode } from '../../core/otp';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { resolveInbox } from '../ui/pick';
import { reportProgress, showInfo } from '../ui/shown';
import { waitForNextCode } from '../waitForCode';

export const id = 'testInbox.waitForCode';
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Waits for the next message of an inbox and copies its one-time code (two-factor login flow). */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveInbox(s, arg, 'Wait for Next Code', { allowNew: true });
  if (!ref) return undefined;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: inert`Waiting for the next code in ${ref.inbox}`, cancellable: true },
    async (progress, token) => {
      const { signal, dispose } = toAbortSignal(token);
      try {
        const api = await s.connection.ensure();
        const found = await waitForNextCode({
          api,
          domain: ref.domain,
          inbox: ref.inbox,
          signal,
          extract: bestCode,
          longPoll: s.connection.testInbox !== undefined,
          onWaiting: () => reportProgress(progress, inert`… send it now.`),
          onSkipped: (m) => reportProgress(progress, inert`"${m.subject}" had no code; still waiting…`),
        });
        await vscode.env.clipboard.writeText(found.code);
        s.log.info(`Copied the one-time code of ${found.summary.id}.`);
        s.model.applyNew(ref.domain, [found.summary]);
        void showInfo(inert`Copied code ${found.code} from "${found.summary.subject}".`);
        return found.code;
      } finally {
        dispose();
      }
    },
  );
}
