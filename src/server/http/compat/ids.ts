// The compat ID (docs/compat.md): one message across every domain and inbox, safe in a URL
// path. A store id (`<inbox>-<seconds>-<counter>`, unique in the whole store) whose characters
// are all unreserved in a URL is its own compat ID; any other (an inbox name may hold `#`, `?`,
// `%`…) is `~` and its base64url. No store id is both: one with `~` is always encoded.
import { parseMessageId } from '../../../core/ids';

const PATH_SAFE = /^[a-z0-9][a-z0-9._-]*$/;

export function compatId(id: string): string {
  return PATH_SAFE.test(id) ? id : `~${Buffer.from(id, 'utf8').toString('base64url')}`;
}

/** The store id a compat ID names, or undefined when it names none (then the answer is the peer's 404). */
export function storeIdOf(compat: string): string | undefined {
  const id = compat.startsWith('~') ? Buffer.from(compat.slice(1), 'base64url').toString('utf8') : compat.toLowerCase();
  return parseMessageId(id) && compatId(id) === (compat.startsWith('~') ? compat : id) ? id : undefined;
}
