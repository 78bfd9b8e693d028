import type { Services } from '../services';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.loadMore.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** Clicked "Load more…" node: appends the next page of the inbox. */
export async function run(s: Services, arg?: unknown): Promise<number | undefined> {
  const n = arg as { domain?: unknown; inbox?: unknown } | undefined;
  if (!n || typeof n.domain !== 'string' || typeof n.inbox !== 'string') return undefined;
  return s.model.loadMore({ domain: n.domain, inbox: n.inbox });
}
