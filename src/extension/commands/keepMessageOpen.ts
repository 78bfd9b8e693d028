import { keepActiveMessagePanel } from '../messagePanel/messagePanel';

export const id = 'testInbox.keepMessageOpen';

/** The message panel's title action: keeps the panel, so the next opened message gets a new one. */
export function run(): boolean {
  return keepActiveMessagePanel();
}
