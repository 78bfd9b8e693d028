import type { Services } from '../services';
import type { MessageRef } from '../inboxRef';
import * as openMessage from './openMessage';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.openMessageInNewPanel.id;
/** Needs the server: the command registry checks it before the command asks anything. */
export const needsServer = true;

/** A message row's context action: opens the message in a kept panel, which later opened messages do not replace. */
export function run(s: Services, arg?: unknown): Promise<MessageRef | undefined> {
  return openMessage.run(s, arg, { keep: true });
}
