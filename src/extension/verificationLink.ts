// The link a sign-up or sign-in flow asks the reader to click, found the same way by the message
// view, Copy Verification Link and the agent tool: every link of the message classified by
// core/linkKinds.ts (anchor text, URL words, List-Unsubscribe), then the first verify-email
// link, else the first magic-login link, else the first reset-password link. Pure, no vscode.
import type { Message } from '../api/types';
import { type LinkKind, linkKind, listUnsubscribeUrls } from '../core/linkKinds';
import { extractLinks } from '../core/links';
import { safeLinkTarget } from '../core/urls';
import { VERIFICATION_KINDS, type ViewVerificationKind } from '../webview-ui/protocol';
import { messageBodies } from './messageText';

/** The kinds a flow continues with, in the order one is chosen when a message has several (one list, the view's protocol's). */
export { VERIFICATION_KINDS };
export type VerificationKind = ViewVerificationKind;

/** How each kind is named to the user. */
export const VERIFICATION_KIND_LABELS: Record<VerificationKind, string> = {
  'verify-email': 'Verification link',
  'magic-login': 'Sign-in link',
  'reset-password': 'Password reset link',
};

export interface KindedLink {
  url: string;
  text?: string;
  kind: LinkKind;
}

export interface VerificationLink {
  url: string;
  /** The link's visible text, when it has any. */
  text?: string;
  kind: VerificationKind;
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/** Every link of the message in extractLinks order, each with its kind. */
export function kindedLinks(m: Message): KindedLink[] {
  const unsubscribe = listUnsubscribeUrls(m.kind === 'email' ? header(m.headers, 'list-unsubscribe') : undefined);
  return extractLinks(messageBodies(m)).map((l) => ({ ...l, kind: linkKind(l, unsubscribe) }));
}

/** The verification link among classified links (only links safe to open count), or undefined. */
export function pickVerificationLink(links: readonly KindedLink[]): VerificationLink | undefined {
  for (const kind of VERIFICATION_KINDS) {
    for (const l of links) {
      if (l.kind !== kind) continue;
      const url = safeLinkTarget(l.url);
      if (url === undefined) continue;
      return l.text ? { url, text: l.text, kind } : { url, kind };
    }
  }
  return undefined;
}

/** The verification link of a fetched message, or undefined. */
export function verificationLinkOf(m: Message): VerificationLink | undefined {
  return pickVerificationLink(kindedLinks(m));
}
