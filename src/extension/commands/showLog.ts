import type { Services } from '../services';

export const id = 'testInbox.showLog';

export function run(s: Services): void {
  s.channel.show(true);
}
