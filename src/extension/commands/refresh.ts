import type { Services } from '../services';

export const id = 'testInbox.refresh';

/** Re-reads everything; after a failure it also reconnects (this is the "Retry" action). */
export async function run(s: Services): Promise<void> {
  const st = s.connection.state.kind;
  if (st === 'failed' || st === 'noToken' || st === 'unreachable') await s.connection.reset();
  s.model.invalidate();
}
