import { inert, plain } from '../../core/inert';
import type { Services } from '../services';
import { resolveInbox } from '../ui/pick';
import { showModalWarning } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.clearInbox.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Deletes every message of an inbox after a modal confirmation (`{ confirm: false }` skips it for scripts). */
export async function run(s: Services, arg?: unknown): Promise<number | undefined> {
  const ref = await resolveInbox(s, arg, 'Clear Inbox', { allowNew: false });
  if (!ref) return undefined;
  const skip = typeof arg === 'object' && arg !== null && (arg as { confirm?: unknown }).confirm === false;
  if (!skip) {
    const ok = 'Delete All';
    const choice = await showModalWarning(inert`Delete every message of ${ref.inbox} (${ref.domain})?`, plain`This cannot be undone.`, ok);
    if (choice !== ok) return undefined;
  }
  const api = await s.connection.ensure();
  const result = await api.clearInbox(ref.domain, ref.inbox);
  s.log.info(`Cleared ${ref.inbox} (${ref.domain}): ${result.count} deleted.`);
  s.model.applyClear(ref);
  return result.count;
}
