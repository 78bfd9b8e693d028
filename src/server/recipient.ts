// The rule that turns a recipient address into the (domain, inbox) it is delivered to, shared by
// the SMTP server and the provider APIs (SMTP's rule: the inbox name in lower case). A floor below
// both doors, so neither imports the other for it.
import { domainProblem, inboxNameProblem, normalizeInbox } from '../core/ids';

/** Splits a recipient address into (domain, inbox), or says why it cannot be delivered. */
export function recipientTarget(address: string): { domain: string; inbox: string } | { problem: string } {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return { problem: `<${address}> is not an address of the form name@domain` };
  const inbox = normalizeInbox(address.slice(0, at));
  const domain = address.slice(at + 1).toLowerCase();
  const problem = domainProblem(domain) ?? (inbox === '*' ? 'inbox * cannot receive messages' : inboxNameProblem(inbox));
  return problem ? { problem: `<${address}>: ${problem}` } : { domain, inbox };
}
