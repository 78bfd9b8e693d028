// "Wait for Next Code": waits for the next message of an inbox and returns the one-time code
// in it (the two-factor login flow). No vscode import; cancellation is an AbortSignal.
import { ApiError } from '../api/errors';
import type { InboxApi, Message } from '../api/types';
import type { MessageSummary } from '../core/wire';
import { messageTexts, type MessageTexts } from './messageText';

/** The local server holds a list request up to this long waiting for mail (its max is 60 s). */
export const LONG_POLL_SECONDS = 25;
/** How many of the newest messages are compared to tell which ones are new. */
export const WAIT_WINDOW = 20;
/** Pause between list requests when the server answered at once (no long-poll support). */
export const WAIT_POLL_MS = 2000;

export interface WaitForCodeOptions {
  api: InboxApi;
  domain: string;
  inbox: string;
  signal: AbortSignal;
  extract(texts: MessageTexts): string | undefined;
  /** Long-poll the list (`wait`): only servers that support it (ours). */
  longPoll: boolean;
  pollMs?: number;
  /** Called for each new message without a code. */
  onSkipped?(summary: MessageSummary): void;
  /** Called once the baseline listing is known: from here on a message counts as new. */
  onWaiting?(): void;
}

export interface CodeFound {
  code: string;
  summary: MessageSummary;
  message: Message;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ApiError('cancelled', 'Cancelled.'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new ApiError('cancelled', 'Cancelled.'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export async function waitForNextCode(o: WaitForCodeOptions): Promise<CodeFound> {
  const { api, domain, inbox, signal } = o;
  const first = await api.listInbox(domain, inbox, { limit: WAIT_WINDOW }, { signal });
  const known = new Set(first.msgs.map((m) => m.id));
  let newest: string | undefined = first.msgs.length > 0 ? [...first.msgs].sort((a, b) => b.time - a.time)[0].id : undefined;
  let longPoll = o.longPoll;
  o.onWaiting?.();
  for (;;) {
    if (signal.aborted) throw new ApiError('cancelled', 'Cancelled.');
    const started = Date.now();
    let listing;
    if (longPoll) {
      // A long-poll only waits while nothing matches: ascending after the newest known id
      // matches only newer mail (an empty inbox matches nothing at all).
      const params = newest ? { sort: 'ascending' as const, cursor: newest, limit: WAIT_WINDOW, wait: LONG_POLL_SECONDS } : { limit: WAIT_WINDOW, wait: LONG_POLL_SECONDS };
      try {
        listing = await api.listInbox(domain, inbox, params, { signal, timeoutMs: (LONG_POLL_SECONDS + 15) * 1000 });
      } catch (e) {
        // The cursor message may have been deleted meanwhile: fall back to plain polling.
        if (!ApiError.is(e, 'badRequest') && !ApiError.is(e, 'notFound')) throw e;
        longPoll = false;
        continue;
      }
    } else {
      listing = await api.listInbox(domain, inbox, { limit: WAIT_WINDOW }, { signal });
    }
    const fresh = listing.msgs.filter((m) => !known.has(m.id)).sort((a, b) => a.time - b.time);
    for (const summary of fresh) {
      known.add(summary.id);
      newest = summary.id;
      const message = await api.getMessage(domain, inbox, summary.id, { signal });
      const code = o.extract(messageTexts(message));
      if (code) return { code, summary, message };
      o.onSkipped?.(summary);
    }
    if (fresh.length === 0 && Date.now() - started < (o.pollMs ?? WAIT_POLL_MS)) await sleep(o.pollMs ?? WAIT_POLL_MS, signal);
  }
}
