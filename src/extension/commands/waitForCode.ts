import * as vscode from 'vscode';
import { ApiError } from '../../api/errors';
import { findCode } from '../../api/queries';
import { inert } from '../../core/inert';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { resolveInbox } from '../ui/pick';
import { reportProgress, showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.waitForCode.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Waits for the next message of an inbox (after now, on the server's clock) and copies its one-time code (two-factor login flow). */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveInbox(s, arg, 'Wait for Next Code', { allowNew: true });
  if (!ref) return undefined;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: inert`Waiting for the next code in ${ref.inbox}`, cancellable: true },
    async (progress, token) => {
      const { signal, dispose } = toAbortSignal(token);
      try {
        const api = await s.connection.ensure();
        const found = await findCode({
          api,
          domain: ref.domain,
          inbox: ref.inbox,
          testInbox: s.connection.testInbox !== undefined,
          signal,
          since: 'now',
          waitMs: Infinity,
          onWaiting: () => reportProgress(progress, inert`… send it now.`),
          onSkipped: (m) => reportProgress(progress, inert`"${m.subject}" had no code; still waiting…`),
        });
        // An unbounded wait ends with a code or a cancellation.
        if (!found) throw new ApiError('cancelled', 'Cancelled.');
        await vscode.env.clipboard.writeText(found.value);
        s.log.info(`Copied the one-time code of ${found.id}.`);
        const summary = { id: found.id, time: found.time, subject: found.subject, from: found.from, to: ref.inbox, domain: ref.domain, seconds_ago: 0, code: found.value };
        s.model.applyNew(ref.domain, [summary]);
        void showInfo(inert`Copied code ${found.value} from "${found.subject}".`);
        return found.value;
      } finally {
        dispose();
      }
    },
  );
}
