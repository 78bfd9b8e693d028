// The server's one clock: every rule of the server that measures time against the wall clock
// (Twilio Verify's expiry and send window, the SES signature window) asks it, so a test can move
// time forward instead of waiting. Production uses the system clock.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stands still until advanced (tests). */
export class ManualClock implements Clock {
  #now: number;
  constructor(start: number = Date.now()) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}
