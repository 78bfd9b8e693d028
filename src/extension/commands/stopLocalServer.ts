import { inert } from '../../core/inert';
import type { Services } from '../services';
import { showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.stopLocalServer.id;

/**
 * Stops the local server this window started. One that another process runs (another window,
 * a terminal) keeps running: the window lets go of it and says whose it is.
 */
export async function run(s: Services): Promise<string> {
  const result = await s.connection.stopLocal();
  s.live.sync();
  s.model.invalidate();
  const st = s.connection.state;
  if (st.kind === 'detached') {
    void showInfo(inert`Detached; the server at ${st.baseUrl} belongs to process ${String(st.pid ?? '?')} (another window or a terminal) and keeps running. Start Local Server attaches again.`);
  }
  return result;
}
