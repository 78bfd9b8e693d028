import * as vscode from 'vscode';
import type { Services } from '../services';
import type { InboxRef } from '../inboxRef';
import { resolveInbox } from '../ui/pick';
import { inert } from '../../core/inert';
import { showInfo } from '../ui/shown';
import { COMMANDS } from '../commandIds';

export const id = COMMANDS.removeInbox.id;

/** Removes an added inbox from the tree (its mail stays on the server). */
export async function run(s: Services, arg?: unknown): Promise<InboxRef | undefined> {
  const ref = arg ? await resolveInbox(s, arg, 'Remove Inbox') : await pickAdded(s);
  if (!ref) return undefined;
  await s.added().remove(ref);
  s.log.info(`Removed inbox ${ref.inbox} (${ref.domain}) from the list.`);
  // The last added inbox of a domain may have been what showed that domain: read the list again.
  if (s.added().list(ref.domain).length === 0) s.model.invalidate();
  else s.model.refreshView();
  return ref;
}

async function pickAdded(s: Services): Promise<InboxRef | undefined> {
  const list = s.added().list();
  if (list.length === 0) {
    void showInfo(inert`No inboxes were added. Inboxes seen in recent mail are listed on their own.`);
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    list.map((r) => ({ label: r.inbox, description: r.domain, ref: r })),
    { title: 'Remove Inbox', placeHolder: 'Pick an inbox to remove from the list' },
  );
  return picked?.ref;
}
