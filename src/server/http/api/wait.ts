// The `wait` parameter shared by the list route and the code/link routes, and the long-poll
// that re-checks an inbox whenever the store reports a new message for it.
import { DURATION_HINT, parseDuration } from '../../../core/duration';
import { ALL_INBOXES } from '../../../core/ids';
import type { MessageMeta } from '../../store/types';
import { badRequest } from '../errors';
import type { ApiContext, Query, Res } from './context';

/** Longest long-poll (`wait`) in seconds; longer values are cut to this (proxies and clients time out around a minute). */
const MAX_WAIT_SECONDS = 60;

/** `wait` in seconds (0 when absent), cut to MAX_WAIT_SECONDS; a 400 naming the problem when malformed. */
export function readWait(query: Query): number {
  const v = query.get('wait');
  if (v === null || v === '') return 0;
  return waitSeconds(v, 'wait');
}

/** Seconds of a duration (core/duration.ts: `30`, `10s`, `1m`, `500ms`), cut to MAX_WAIT_SECONDS. */
function waitSeconds(raw: string, name: string): number {
  const ms = parseDuration(raw);
  if (ms === undefined) throw badRequest('bad_param', `${name} must be ${DURATION_HINT}, at most ${MAX_WAIT_SECONDS} s (got ${JSON.stringify(raw.slice(0, 40))})`);
  return Math.min(ms / 1000, MAX_WAIT_SECONDS);
}

/**
 * Runs `check` now and again after every new message of the inbox until it finds something,
 * `seconds` pass, the client leaves, or the server closes. The store is watched before the
 * first check, so a message that arrives while a check is running is never missed.
 */
export async function pollUntil<T>(ctx: ApiContext, res: Res, domain: string | undefined, inbox: string, seconds: number, check: () => T | undefined | Promise<T | undefined>): Promise<T | undefined> {
  let arrived = false;
  let wake: (() => void) | undefined;
  let over = false;
  const end = () => {
    over = true;
    wake?.();
  };
  const onMessage = (meta: MessageMeta) => {
    if (domain !== undefined && meta.domain !== domain) return;
    if (inbox !== ALL_INBOXES && meta.inbox !== inbox) return;
    arrived = true;
    wake?.();
  };
  ctx.store.on('message', onMessage);
  res.on('close', end);
  ctx.polls.add(end);
  const timer = setTimeout(end, seconds * 1000);
  try {
    for (;;) {
      arrived = false;
      const found = await check();
      if (found !== undefined) return found;
      if (over || seconds <= 0 || ctx.closing()) return undefined;
      if (!arrived) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (over && !arrived) return undefined;
    }
  } finally {
    clearTimeout(timer);
    ctx.store.off('message', onMessage);
    res.off('close', end);
    ctx.polls.delete(end);
  }
}
