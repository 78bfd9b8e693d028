// What a message is called, on every surface: the tree, the pickers, search, notifications,
// the web list and the message view's heading and tab. One rule, so an SMS is titled the same
// wherever it shows.
import { isPhoneInbox } from './ids';
import { senderLine, senderName } from './sender';
import { firstWords } from './sms';

/** The title of an email without a subject; also the subject the server composes for one (docs/api.md §4.5 rule 4). */
export const NO_SUBJECT = '(no subject)';

/** Subjects that say nothing of an SMS's text: none, the placeholder "SMS", and NO_SUBJECT (stored before SMS had titles). */
const SMS_PLACEHOLDER_SUBJECTS: readonly string[] = ['', 'sms', NO_SUBJECT];

/** Whether an SMS's subject says nothing of its text (the placeholder "SMS" and the like). */
export function isPlaceholderSmsSubject(subject: string): boolean {
  return SMS_PLACEHOLDER_SUBJECTS.includes(subject.trim().toLowerCase());
}

/** What messageTitle reads of a message: a summary's fields (core/wire.ts), or a view's header. */
export interface TitleFields {
  subject: string;
  from: string;
  /** The inbox: a phone inbox's messages are SMS. */
  to: string;
  fromfull?: string;
  origfrom?: string;
  /** Whether it is an SMS, where the caller knows (a view's kind); else a phone inbox's messages are. */
  sms?: boolean;
  /** An SMS's text, where it is at hand (a view); else the subject the server stored, which is its first words. */
  smsText?: string;
}

/**
 * A message's title. An email: its subject, or NO_SUBJECT. An SMS (a message to a phone inbox)
 * has no subject of its own: the first words of its text, or "SMS from <sender>" when it says
 * nothing.
 */
export function messageTitle(m: TitleFields): string {
  if (!(m.sms ?? isPhoneInbox(m.to))) return m.subject.trim() || NO_SUBJECT;
  const words = firstWords(m.smsText ?? (isPlaceholderSmsSubject(m.subject) ? '' : m.subject));
  return words || `SMS from ${messageSender(m)}`;
}

/** The sender as a title names it: the display name, else the address, else "unknown sender". */
export function messageSender(m: Pick<TitleFields, 'from' | 'fromfull' | 'origfrom'>): string {
  return senderName(senderLine(m)) || 'unknown sender';
}
