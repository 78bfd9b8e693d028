// Recovery from a server that cannot be reached: the client reports each call that finds nobody
// at the server's address, and the server is re-checked by itself, sooner at first and then
// more slowly, until it answers again. No vscode import.
import type { InboxApi, StreamHandlers } from '../../api/types';
import { isNetworkFailure } from './remote';

/** First re-check of a server that cannot be reached: soon, since a restart takes seconds. */
export const RECOVERY_FIRST_MS = 2000;
/** Re-checks slow down to at most this: cheap for a server that stays away, still quick to notice its return. */
export const RECOVERY_MAX_MS = 15_000;

/** The client, reporting each call (and push-stream reconnect) that finds nobody at the server's address to `onFailure`. */
export function watchNetworkFailures(api: InboxApi, onFailure: (e: unknown) => void): InboxApi {
  const noteFailure = (e: unknown): void => {
    if (isNetworkFailure(e)) onFailure(e);
  };
  return new Proxy(api, {
    get: (target, prop, receiver) => {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || prop === 'dispose') return value;
      if (prop === 'subscribe') {
        return (domain: string, inbox: string | undefined, handlers: StreamHandlers) =>
          target.subscribe(domain, inbox, {
            ...handlers,
            onState: (state, error) => {
              if (state === 'reconnecting' && error) noteFailure(error);
              handlers.onState?.(state, error);
            },
          });
      }
      return (...args: unknown[]) => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) result.catch(noteFailure);
        return result;
      };
    },
  });
}

/**
 * Re-checks a server by itself: `check` answers whether it is back; when it is not, the next
 * check waits twice as long (RECOVERY_FIRST_MS up to RECOVERY_MAX_MS).
 */
export class RecoveryChecks {
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `check` resolves true when the server is back (checks stop), false to check again later, undefined when the checks no longer apply. */
  constructor(private readonly check: () => Promise<boolean | undefined>) {}

  start(): void {
    this.schedule(RECOVERY_FIRST_MS);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs: number): void {
    this.stop();
    const timer = setTimeout(() => void this.run(delayMs), delayMs);
    timer.unref?.();
    this.timer = timer;
  }

  private async run(lastDelayMs: number): Promise<void> {
    if ((await this.check()) === false) this.schedule(Math.min(lastDelayMs * 2, RECOVERY_MAX_MS));
  }
}
