// Bytes of message content held in memory at once, across every SMTP and HTTP connection
// (issue 14 point 4). A connection asks for what it is about to hold and waits, first come
// first served, while others hold the rest; a request larger than the whole budget waits
// until it is alone. Memory then stays bounded however many senders arrive at once.

/** 32 MiB: one 25 MB message and room for many small ones at a time; peak memory of big mail stays within ~100 MB. */
export const DEFAULT_BUDGET_BYTES = 32 * 1024 * 1024;

export type Release = () => void;

export class ByteBudget {
  private used = 0;
  private readonly waiting: Array<{ bytes: number; grant: (release: Release) => void }> = [];

  constructor(readonly capacity: number = DEFAULT_BUDGET_BYTES) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`budget capacity must be a whole number >= 1, got ${String(capacity)}`);
  }

  /** Bytes held now. */
  get inUse(): number {
    return this.used;
  }

  /** Takes `bytes` now if they are free and nobody waits; undefined otherwise. */
  tryTake(bytes: number): Release | undefined {
    const n = this.clamp(bytes);
    if (this.waiting.length > 0 || this.used + n > this.capacity) return undefined;
    return this.grant(n);
  }

  /** Resolves once `bytes` (at most the capacity) are held; call the release exactly once. */
  take(bytes: number): Promise<Release> {
    const now = this.tryTake(bytes);
    if (now) return Promise.resolve(now);
    return new Promise((resolve) => this.waiting.push({ bytes: this.clamp(bytes), grant: resolve }));
  }

  private clamp(bytes: number): number {
    return Math.min(Math.max(0, Math.ceil(bytes)), this.capacity);
  }

  private grant(n: number): Release {
    this.used += n;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= n;
      this.wake();
    };
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0].bytes <= this.capacity) {
      const w = this.waiting.shift()!;
      w.grant(this.grant(w.bytes));
    }
  }
}
