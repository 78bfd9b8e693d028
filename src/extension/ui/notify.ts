// The new-mail notification: only mail in an inbox the user added ("watched"), one
// notification per batch naming the newest message (noticeFor, pure), with Open and, when
// the message has a one-time code, Copy Code. No vscode import: the editor's calls are passed in.
import type { InboxApi } from '../../api/types';
import { inert, type Inert } from '../../core/inert';
import { codeOf, contentOf } from '../../core/message';
import { messageTitle } from '../../core/title';
import type { MessageSummary } from '../../core/wire';
import type { NewMail } from '../tree/live';
import { errorText, type Logger } from '../log';
import type { InboxRef, MessageRef } from '../inboxRef';

interface MailNotice {
  domain: string;
  inbox: string;
  summary: MessageSummary;
  /** Other new messages in watched inboxes in the same batch. */
  more: number;
  text: Inert;
}

export function noticeFor(mail: NewMail, isWatched: (ref: InboxRef) => boolean): MailNotice | undefined {
  const watched = mail.msgs.filter((m) => isWatched({ domain: mail.domain, inbox: m.to.toLowerCase() })).sort((a, b) => b.time - a.time);
  if (watched.length === 0) return undefined;
  const summary = watched[0];
  const inbox = summary.to.toLowerCase();
  const more = watched.length - 1;
  return {
    domain: mail.domain,
    inbox,
    summary,
    more,
    text: more > 0 ? inert`New message in ${inbox}: ${messageTitle(summary)} (and ${more} more)` : inert`New message in ${inbox}: ${messageTitle(summary)}`,
  };
}

/** Buttons of the new-mail notification. */
export const OPEN_BUTTON = 'Open';
export const COPY_CODE_BUTTON = 'Copy Code';

/** What notifyNewMail needs; `show`, `open` and `copy` are the editor's (activate() passes vscode's). */
export interface NotifyDeps {
  /** The `testInbox.notifyNewMail` setting. */
  enabled(): boolean;
  /** Whether the user added (watches) the inbox. */
  isWatched(ref: InboxRef): boolean;
  /** The client when connected: the notification offers the code only then. */
  api(): InboxApi | undefined;
  log: Pick<Logger, 'debug'>;
  /** Shows the notification with its buttons; resolves the one clicked. */
  show(text: Inert, buttons: string[]): PromiseLike<string | undefined>;
  /** Opens the message in the message view. */
  open(ref: MessageRef): PromiseLike<unknown>;
  copy(text: string): PromiseLike<void>;
}

/** One notification for a batch of new mail in watched inboxes: Open, and Copy Code when the newest message has one. */
export async function notifyNewMail(deps: NotifyDeps, mail: NewMail): Promise<void> {
  if (!deps.enabled()) return;
  const notice = noticeFor(mail, (ref) => deps.isWatched(ref));
  if (!notice) return;
  const ref: MessageRef = { domain: notice.domain, inbox: notice.inbox, id: notice.summary.id };
  let code: string | undefined;
  try {
    const api = deps.api();
    if (api) code = codeOf(contentOf(await api.getMessage(ref.domain, ref.inbox, ref.id)));
  } catch (e) {
    deps.log.debug(`Could not read ${ref.id} for the notification: ${errorText(e)}`);
  }
  const choice = await deps.show(notice.text, [OPEN_BUTTON, ...(code ? [COPY_CODE_BUTTON] : [])]);
  if (choice === OPEN_BUTTON) await deps.open(ref);
  else if (choice === COPY_CODE_BUTTON && code) await deps.copy(code);
}
