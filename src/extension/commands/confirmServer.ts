import { inert } from '../../core/inert';
import type { Services } from '../services';
import { askToUseServer } from '../ui/confirmServer';
import { showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.confirmServer.id;

/** Asks whether to use the configured hosted URL that waits for confirmation (workspace-set, or plain http to another machine). */
export async function run(s: Services): Promise<boolean> {
  const pending = s.connection.unconfirmed();
  if (!pending) {
    void showInfo(inert`${s.connection.describe()} needs no confirmation.`);
    return false;
  }
  if (!(await askToUseServer(pending.baseUrl, pending.reasons))) return false;
  await s.connection.confirmServer(pending.baseUrl, pending.reasons);
  s.log.info(`The user confirmed the server ${pending.baseUrl} (${pending.reasons.join(', ')}).`);
  s.model.invalidate();
  return true;
}
