import type { Services } from '../services';
import { clearToken } from '../ui/tokens';

export const id = 'testInbox.clearWebhookToken';

export function run(s: Services): Promise<boolean> {
  return clearToken(s, 'webhook');
}
