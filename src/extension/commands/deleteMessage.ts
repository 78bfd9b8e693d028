import type { Services } from '../services';
import { resolveMessage } from '../ui/pick';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.deleteMessage.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Deletes one message (no confirmation: it is one test message, and the command names it). */
export async function run(s: Services, arg?: unknown): Promise<string | undefined> {
  const ref = await resolveMessage(s, arg, 'Delete Message');
  if (!ref) return undefined;
  const api = await s.connection.ensure();
  await api.deleteMessage(ref.domain, ref.inbox, ref.id);
  s.log.info(`Deleted ${ref.id}.`);
  s.model.applyDelete(ref.domain, [ref.id]);
  return ref.id;
}
