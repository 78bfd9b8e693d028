import type { Services } from '../services';
import { setToken } from '../ui/tokens';

export const id = 'testInbox.setApiToken';

export function run(s: Services, value?: unknown): Promise<boolean> {
  return setToken(s, 'api', value);
}
