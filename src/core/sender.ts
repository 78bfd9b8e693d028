// The sender of a message as people read it: `Name <address>`. Servers say it in different
// fields: the local server's summaries (and the hosted service's documentation examples) put
// `Name <address>` in `from`; real hosted listings put only the display name in `from`, the
// bare address in `fromfull` and the received header in `origfrom`. A fetched email has the
// display name in `from` and `Name <address>` (local) or the bare address (hosted) in `fromfull`.

interface SenderFields {
  from?: string;
  fromfull?: string;
  origfrom?: string;
}

/** `Name <address>` when any field has the address in angle brackets. */
const BRACKETED_RE = /<[^<>\s]+>\s*$/;
/** A bare address: something@something, no spaces or brackets. */
const BARE_ADDRESS_RE = /^[^\s<>@]+@[^\s<>@]+$/;

/**
 * The sender for display: the first field already written `Name <address>` (the received
 * header first), else the display name with the bare address joined as `Name <address>`,
 * else whatever is there.
 */
export function senderLine(m: SenderFields): string {
  const fields = [m.origfrom, m.fromfull, m.from].map((f) => f?.trim() ?? '').filter((f) => f !== '');
  const bracketed = fields.find((f) => BRACKETED_RE.test(f));
  if (bracketed !== undefined) return bracketed;
  const address = fields.find((f) => BARE_ADDRESS_RE.test(f));
  const name = m.from?.trim() ?? '';
  if (address !== undefined) return name !== '' && name !== address ? `${name} <${address}>` : address;
  return fields[0] ?? '';
}

/** `Acme <no-reply@acme.test>` → `Acme`; a bare address stays. */
export function senderName(from: string): string {
  const m = /^\s*"?([^"<]*?)"?\s*<([^>]*)>\s*$/.exec(from);
  if (m) return m[1].trim() || m[2].trim();
  return from.trim();
}
