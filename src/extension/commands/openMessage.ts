import { showMessage } from '../messagePanel/messagePanel';
import type { Services } from '../services';
import type { MessageRef } from '../inboxRef';
import { resolveMessage } from '../ui/pick';
import { COMMANDS, commandTitle } from '../commandIds';

export const id = COMMANDS.openMessage.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/**
 * Opens a message in the message view and marks it read. It replaces the content of the
 * message panel the user has not kept (a preview, as VS Code's editors have); `keep` opens it
 * in a kept panel of its own (Open in New Panel).
 */
export async function run(s: Services, arg?: unknown, opts: { keep?: boolean } = {}): Promise<MessageRef | undefined> {
  const requestedAt = Date.now();
  const ref = await resolveMessage(s, arg, commandTitle(opts.keep ? 'openMessageInNewPanel' : 'openMessage'));
  if (!ref) return undefined;
  const api = await s.connection.ensure();
  // The panel and the fetch start first; saving the read mark (a round trip to the workbench) runs beside them.
  const shown = showMessage({ context: s.context, api, log: s.log, allowRemoteImages: s.settings().remoteImages, themeSimpleMail: s.settings().themeSimpleMail, onCode: (id, code) => s.model.noteCode(id, code), requestedAt }, ref, { keep: opts.keep === true });
  await s.readState().markRead([ref.id]);
  s.model.refreshView(); // the message shows as read
  await shown;
  return ref;
}
