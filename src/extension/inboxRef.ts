// What names an inbox and a message across the extension: the tree, the settings, the
// message view, the commands and the pickers. No imports: the lowest floor.

export interface InboxRef {
  domain: string;
  inbox: string;
}

/** One message of an inbox: what message commands and the message view act on. */
export interface MessageRef extends InboxRef {
  id: string;
}

export function inboxKey(ref: InboxRef): string {
  return `${ref.domain}/${ref.inbox}`;
}
