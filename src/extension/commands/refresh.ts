import type { Services } from '../services';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.refresh.id;

/** Re-reads everything; after a failure it also reconnects (this is the "Retry" action). */
export async function run(s: Services): Promise<void> {
  const st = s.connection.state.kind;
  if (st === 'failed' || st === 'noToken' || st === 'unreachable') await s.connection.reset();
  s.model.invalidate();
}
