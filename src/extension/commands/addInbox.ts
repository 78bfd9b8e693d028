import type { Services } from '../services';
import type { InboxRef } from '../inboxRef';
import { resolveInbox } from '../ui/pick';
import { inert } from '../../core/inert';
import { showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.addInbox.id;

/** Adds an inbox to the tree (persisted per server), even before it has mail. */
export async function run(s: Services, arg?: unknown): Promise<InboxRef | undefined> {
  const ref = await resolveInbox(s, arg, 'Add Inbox', { allowNew: true });
  if (!ref) return undefined;
  const added = await s.added().add(ref);
  s.log.info(added ? `Added inbox ${ref.inbox} (${ref.domain}).` : `Inbox ${ref.inbox} (${ref.domain}) was already added.`);
  // A domain the tree does not show yet: read the domain list again.
  if (s.model.shownDomains.includes(ref.domain)) s.model.refreshView();
  else s.model.invalidate();
  if (!added) void showInfo(inert`Inbox ${ref.inbox} is already in the list.`);
  return ref;
}
