import type { Services } from '../services';
import { clearToken } from '../ui/tokens';

export const id = 'testInbox.clearApiToken';

export function run(s: Services): Promise<boolean> {
  return clearToken(s, 'api');
}
