import type { Services } from '../services';
import { setToken } from '../ui/tokens';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.setApiToken.id;

export function run(s: Services, value?: unknown): Promise<boolean> {
  return setToken(s, 'api', value);
}
