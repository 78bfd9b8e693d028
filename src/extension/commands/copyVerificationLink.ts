import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { contentOf, linkToClick } from '../../core/message';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { activeMessageRef } from '../messagePanel/messagePanel';
import { resolveMessage } from '../ui/pick';
import { showInfo, showStatus } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copyVerificationLink.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** How long the status bar confirms the copy. */
const COPIED_MESSAGE_MS = 5000;

/**
 * Copies the link a message asks the reader to click to confirm an address (else to sign in,
 * else to reset a password): of a message row, of the message panel in front, or of the newest
 * message of a picked inbox. A message without one is said as information, not as a failure.
 */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Looking for a verification link…', cancellable: true }, async (_p, token) => {
    // From the palette or the panel's title bar (which passes no message): the open message, if any.
    const ref = await resolveMessage(s, arg, 'Copy Verification Link (latest message)', { latest: true, openMessage: activeMessageRef, token });
    if (!ref) return undefined;
    const { signal, dispose } = toAbortSignal(token);
    try {
      const api = await s.connection.ensure();
      const message = await api.getMessage(ref.domain, ref.inbox, ref.id, { signal });
      const link = linkToClick(contentOf(message));
      if (!link) {
        void showInfo(inert`No verification, sign-in or password reset link in "${message.subject || ref.id}".`);
        return undefined;
      }
      await vscode.env.clipboard.writeText(link.url);
      showStatus(inert`$(check) Copied the ${link.kind === 'verify-email' ? 'verification' : link.kind === 'magic-login' ? 'sign-in' : 'password reset'} link`, COPIED_MESSAGE_MS);
      s.log.info(`Copied the ${link.kind} link of ${ref.id}.`);
      return link.url;
    } finally {
      dispose();
    }
  });
}
