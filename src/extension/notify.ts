// Which new mail deserves a notification: only mail in an inbox the user added ("watched"),
// one notification per batch naming the newest message. Pure.
import type { MessageSummary } from '../core/wire';
import type { NewMail } from './live';
import type { InboxRef } from './tree/state';

export interface MailNotice {
  domain: string;
  inbox: string;
  summary: MessageSummary;
  /** Other new messages in watched inboxes in the same batch. */
  more: number;
  text: string;
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
    text: `New message in ${inbox}: ${summary.subject.trim() || '(no subject)'}${more > 0 ? ` (and ${more} more)` : ''}`,
  };
}
