// The rule that turns a recipient address into the (domain, inbox) it is delivered to, shared by
// the SMTP server and the provider APIs: core/ids.ts readAddress, in SMTP's words. A floor below
// both doors, so neither imports the other for it.
import { readAddress } from '../core/ids';

/** Splits a recipient address into (domain, inbox), or says why it cannot be delivered. */
export function recipientTarget(address: string): { domain: string; inbox: string } | { problem: string } {
  const read = readAddress(address);
  if (!('problem' in read)) return read;
  return { problem: read.part === 'form' ? `<${address}> is not an address of the form name@domain` : `<${address}>: ${read.problem}` };
}
