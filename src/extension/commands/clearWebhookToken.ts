import type { Services } from '../services';
import { clearToken } from '../ui/tokens';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.clearWebhookToken.id;

export function run(s: Services): Promise<boolean> {
  return clearToken(s, 'webhook');
}
