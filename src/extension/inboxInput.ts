// Inbox names typed by the user or passed to commands. Pure.
import { ALL_INBOXES, inboxNameProblem, normalizeInbox, readAddress, splitAddress } from '../core/ids';
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
  const read = readAddress(raw, { defaultDomain: fallbackDomain });
  if (!('problem' in read)) return read;
  const { local, domain } = splitAddress(raw.trim());
  if (read.part === 'domain') throw new ExtensionError('invalid_input', `"${domain}" is not a usable domain: ${read.problem}.`);
  throw new ExtensionError('invalid_input', `"${local}" is not a usable inbox name: ${read.problem}.`);
}
