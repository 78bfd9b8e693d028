// Inbox names typed by the user or passed to commands. Pure.
import { ALL_INBOXES, domainProblem, inboxNameProblem, normalizeInbox } from '../core/ids';
import { ExtensionError } from './errors';
import type { InboxRef } from './inboxRef';

/** Validates an inbox name; throws a clear error naming the problem. */
export function checkInboxName(raw: string): string {
  const name = normalizeInbox(raw);
  const problem = inboxNameProblem(name);
  if (problem) throw new ExtensionError('invalid_input', `"${raw}" is not a usable inbox name: ${problem}.`);
  if (name === ALL_INBOXES) throw new ExtensionError('invalid_input', 'Name one inbox, not "*".');
  return name;
}

/** `name` or `name@domain` → inbox and domain (the fallback domain when none is typed). */
export function parseInboxInput(raw: string, fallbackDomain: string): InboxRef {
  const t = raw.trim();
  const at = t.lastIndexOf('@');
  if (at > 0) {
    const domain = t.slice(at + 1).toLowerCase();
    const problem = domain === 'private' ? undefined : domainProblem(domain);
    if (problem) throw new ExtensionError('invalid_input', `"${domain}" is not a usable domain: ${problem}.`);
    return { inbox: checkInboxName(t.slice(0, at)), domain };
  }
  return { inbox: checkInboxName(t), domain: fallbackDomain };
}
