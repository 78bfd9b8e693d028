import { keepActiveMessagePanel } from '../messagePanel/messagePanel';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.keepMessageOpen.id;

/** The message panel's title action: keeps the panel, so the next opened message gets a new one. */
export function run(): boolean {
  return keepActiveMessagePanel();
}
