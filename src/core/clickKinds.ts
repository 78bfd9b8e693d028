// The kinds of link a person must click, and the one table of which kinds each `kind` asks
// for (the link route's `kind`, the CLI's `--kind`, the library's and the tools' `kind`). A
// leaf: the message view imports it without the link and code readers.

/** The kinds of link a person must click to go on, in the order one is chosen: verify, else sign in, else reset. */
export const CLICK_KINDS = ['verify-email', 'magic-login', 'reset-password'] as const;
export type ClickKind = (typeof CLICK_KINDS)[number];

/** How each kind is named to the user. */
export const CLICK_KIND_LABELS: Readonly<Record<ClickKind, string>> = {
  'verify-email': 'Verification link',
  'magic-login': 'Sign-in link',
  'reset-password': 'Password reset link',
};

/** The `kind` a caller asks for (the link route's `kind`, the CLI's `--kind`, the library's `kind`). */
export type LinkKindParam = 'verify' | 'reset' | 'login' | 'any';

/** The one kind table: which kinds each `kind` accepts, in the order one is chosen. */
export const LINK_KINDS: Readonly<Record<LinkKindParam, readonly ClickKind[]>> = {
  verify: ['verify-email'],
  reset: ['reset-password'],
  login: ['magic-login'],
  any: CLICK_KINDS,
};

/** Whether `v` is one of LINK_KINDS' names. */
export function isLinkKindParam(v: unknown): v is LinkKindParam {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(LINK_KINDS, v);
}
