import * as vscode from 'vscode';
import { inert } from '../../core/inert';
import { codeOf, contentOf } from '../../core/message';
import { ExtensionError } from '../errors';
import type { Services } from '../services';
import { toAbortSignal } from '../ui/cancel';
import { activeMessageRef } from '../messagePanel/messagePanel';
import { resolveMessage } from '../ui/pick';
import { showStatus } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.copyCode.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** How long the status bar shows the copied code. */
const COPIED_MESSAGE_MS = 5000;

/** Copies the one-time code of a message, or of the latest message of a picked inbox. */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Looking for a one-time code…', cancellable: true }, async (_p, token) => {
    // From the palette or the panel's title bar: the open message, if any, as Copy Verification Link does.
    const ref = await resolveMessage(s, arg, 'Copy One-Time Code (latest message)', { latest: true, openMessage: activeMessageRef, token });
    if (!ref) return undefined;
    const { signal, dispose } = toAbortSignal(token);
    try {
      const api = await s.connection.ensure();
      const message = await api.getMessage(ref.domain, ref.inbox, ref.id, { signal });
      const code = codeOf(contentOf(message));
      if (!code) throw new ExtensionError('no_message', `No one-time code found in "${message.subject || ref.id}".`);
      await vscode.env.clipboard.writeText(code);
      s.model.noteCode(ref.id, code);
      showStatus(inert`$(check) Copied code ${code}`, COPIED_MESSAGE_MS);
      s.log.info(`Copied the one-time code of ${ref.id}.`);
      return code;
    } finally {
      dispose();
    }
  });
}
