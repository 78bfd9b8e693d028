// The paths of the drop-in APIs (docs/compat.md), matched from a request's path segments.
// Pure: the router's table (http/table.ts) names each, and compat/index.ts answers them when
// `--compat` is on (404 otherwise, as before).

/** Body bytes of `PUT`/`DELETE /api/v1/messages` (`{"IDs": […]}`): a small cap of their own, read from the pool of unproven bodies, never the shared budget. */
export const COMPAT_BODY_MAX_BYTES = 64 * 1024;

export type CompatRoute =
  /** Mailpit GET list, PUT read marks, DELETE some or all (MailHog's delete-all too). */
  | { kind: 'mpMessages' }
  /** Mailpit GET search, DELETE its matches. */
  | { kind: 'mpSearch' }
  | { kind: 'mpMessage'; id: string; view: 'message' | 'headers' | 'raw' | 'part'; part?: string }
  | { kind: 'mpView'; id: string; format: 'html' | 'txt' }
  | { kind: 'mpInfo' }
  | { kind: 'mhMessages' }
  | { kind: 'mhSearch' }
  /** MailHog's DELETE of one message (its client's deleteMessage). */
  | { kind: 'mhMessage'; id: string }
  | { kind: 'ibMailbox'; name: string }
  | { kind: 'ibMessage'; name: string; id: string; source: boolean };

/** The drop-in route a path names, or undefined. `/api/v2/search` is MailHog's only with `kind` (else Test Inbox's own). */
export function matchCompatRoute(s: readonly string[], query: URLSearchParams): CompatRoute | undefined {
  if (s[0] === 'view' && s.length === 2) {
    const m = /^(.+)\.(html|txt)$/.exec(s[1]);
    return m ? { kind: 'mpView', id: m[1], format: m[2] as 'html' | 'txt' } : undefined;
  }
  if (s[0] !== 'api') return undefined;
  if (s[1] === 'v2') {
    if (s[2] === 'messages' && s.length === 3) return { kind: 'mhMessages' };
    if (s[2] === 'search' && s.length === 3 && query.has('kind')) return { kind: 'mhSearch' };
    return undefined;
  }
  if (s[1] !== 'v1') return undefined;
  switch (s[2]) {
    case 'messages':
      if (s.length === 3) return { kind: 'mpMessages' };
      return s.length === 4 ? { kind: 'mhMessage', id: s[3] } : undefined;
    case 'search':
      return s.length === 3 ? { kind: 'mpSearch' } : undefined;
    case 'info':
      return s.length === 3 ? { kind: 'mpInfo' } : undefined;
    case 'message': {
      const [, , , id, view, part, ...extra] = s;
      if (id === undefined || extra.length > 0) return undefined;
      if (view === undefined) return { kind: 'mpMessage', id, view: 'message' };
      if ((view === 'headers' || view === 'raw') && part === undefined) return { kind: 'mpMessage', id, view };
      if (view === 'part' && part !== undefined) return { kind: 'mpMessage', id, view: 'part', part };
      return undefined;
    }
    case 'mailbox': {
      const [, , , name, id, source, ...extra] = s;
      if (name === undefined || extra.length > 0) return undefined;
      if (id === undefined) return { kind: 'ibMailbox', name };
      if (source === undefined) return { kind: 'ibMessage', name, id, source: false };
      return source === 'source' ? { kind: 'ibMessage', name, id, source: true } : undefined;
    }
    default:
      return undefined;
  }
}
