// Bytes of message content held in memory at once, across every SMTP and HTTP connection.
// A connection asks for what it is about to hold and waits, first come
// first served, while others hold the rest; a request larger than the whole budget waits
// until it is alone. Memory then stays bounded however many senders arrive at once.
//
// Every take names the lifetime of what holds the bytes (an AbortSignal: a request's response,
// an SMTP message's sink). When that lifetime ends, a waiter leaves the queue and a grant
// goes back, whether or not its holder remembered to release it: no grant outlives its holder,
// so a client that goes away can never keep budget. close() ends every
// wait, so a stopping server never waits for budget.
import { codedError } from '../core/errors';

/** 32 MiB: one 25 MB message and room for many small ones at a time; peak memory of big mail stays within ~100 MB. */
export const DEFAULT_BUDGET_BYTES = 32 * 1024 * 1024;

export type Release = () => void;

/** Why a take was refused: its holder went away while it waited, or the budget was closed. */
export class BudgetError extends codedError<'GONE' | 'CLOSED'>('BudgetError') {
  constructor(code: 'GONE' | 'CLOSED') {
    super(code, code === 'GONE' ? 'the request ended before memory was free for it' : 'the server is stopping');
  }
}

interface Waiter {
  bytes: number;
  lifetime: AbortSignal;
  grant: (release: Release) => void;
  refuse: (e: BudgetError) => void;
  /** Removes the abort listener once the waiter is granted or refused. */
  detach: () => void;
}

export class ByteBudget {
  private used = 0;
  private closed = false;
  private readonly waiting: Waiter[] = [];

  constructor(readonly capacity: number = DEFAULT_BUDGET_BYTES) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`budget capacity must be a whole number >= 1, got ${String(capacity)}`);
  }

  /** Bytes held now. */
  get inUse(): number {
    return this.used;
  }

  /** Takes waiting in the queue now. */
  get waiters(): number {
    return this.waiting.length;
  }

  /**
   * Takes `bytes` now if they are free and nobody waits; undefined otherwise. The grant goes
   * back when `lifetime` ends, or earlier when released.
   */
  tryTake(bytes: number, lifetime: AbortSignal): Release | undefined {
    const n = this.clamp(bytes);
    if (this.closed || lifetime.aborted || this.waiting.length > 0 || this.used + n > this.capacity) return undefined;
    return this.grant(n, lifetime);
  }

  /**
   * Resolves once `bytes` (at most the capacity) are held. Rejects with BudgetError GONE when
   * `lifetime` ends first (the waiter has left the queue), CLOSED once the budget is closed.
   * The grant goes back when `lifetime` ends, or earlier when released.
   */
  take(bytes: number, lifetime: AbortSignal): Promise<Release> {
    if (this.closed) return Promise.reject(new BudgetError('CLOSED'));
    if (lifetime.aborted) return Promise.reject(new BudgetError('GONE'));
    const now = this.tryTake(bytes, lifetime);
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { bytes: this.clamp(bytes), lifetime, grant: resolve, refuse: reject, detach: () => undefined };
      waiter.detach = onEnd(lifetime, () => {
        const i = this.waiting.indexOf(waiter);
        if (i < 0) return;
        this.waiting.splice(i, 1);
        reject(new BudgetError('GONE'));
        // The head of the queue may have been the one blocking the others.
        this.wake();
      });
      this.waiting.push(waiter);
    });
  }

  /** Refuses every waiting and every later take (CLOSED); grants held go back as their holders end. */
  close(): void {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      w.detach();
      w.refuse(new BudgetError('CLOSED'));
    }
  }

  private clamp(bytes: number): number {
    return Math.min(Math.max(0, Math.ceil(bytes)), this.capacity);
  }

  private grant(n: number, lifetime: AbortSignal): Release {
    this.used += n;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      detach();
      this.used -= n;
      this.wake();
    };
    const detach = onEnd(lifetime, release);
    return release;
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0].bytes <= this.capacity) {
      const w = this.waiting.shift()!;
      w.detach();
      w.grant(this.grant(w.bytes, w.lifetime));
    }
  }
}

/**
 * Calls `fn` once when `lifetime` ends; returns the undo. One 'abort' listener per signal
 * however many grants and waits hang on it (a body read in many chunks takes many).
 */
const endings = new WeakMap<AbortSignal, Set<() => void>>();
function onEnd(lifetime: AbortSignal, fn: () => void): () => void {
  let fns = endings.get(lifetime);
  if (!fns) {
    const set = (fns = new Set<() => void>());
    endings.set(lifetime, set);
    lifetime.addEventListener('abort', () => {
      endings.delete(lifetime);
      for (const f of [...set]) f();
    }, { once: true });
  }
  const mine = fns;
  mine.add(fn);
  return () => void mine.delete(fn);
}

/**
 * The lifetime of an HTTP exchange: ends when its response closes (sent, or the connection
 * went away) or when its socket ends, whichever comes first. The socket's end counts on its
 * own: after a 408 or 413 the server ends its side and a client that never closes its own
 * keeps the response from ever closing, so a grant tied to the response alone would be held
 * for as long as that client likes. One signal per response, made on first use; an exchange
 * without a socket (the in-process transport, http/inject.ts) ends with its response.
 */
const lifetimes = new WeakMap<import('node:http').ServerResponse, AbortSignal>();
export function responseLifetime(res: import('node:http').ServerResponse): AbortSignal {
  let signal = lifetimes.get(res);
  if (signal) return signal;
  const controller = new AbortController();
  signal = controller.signal;
  lifetimes.set(res, signal);
  const socket = res.socket;
  if (res.closed || res.destroyed || socket?.destroyed || socket?.writableEnded) {
    controller.abort();
    return signal;
  }
  const end = (): void => {
    res.off('close', end);
    socket?.off('close', end);
    socket?.off('finish', end);
    controller.abort();
  };
  res.once('close', end);
  // 'finish': the server's side of the socket is ended (a 408, a connection: close answer);
  // nothing more of this exchange is read or sent, whatever the client does with its side.
  socket?.once('close', end);
  socket?.once('finish', end);
  return signal;
}
