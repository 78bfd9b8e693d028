import type { Services } from '../services';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.showLog.id;

export function run(s: Services): void {
  s.channel.show(true);
}
