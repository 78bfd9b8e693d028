// Work over many items on the event loop, in slices that take turns: a list of thousands of
// records (the Twilio Messages list, issue 35) never holds the loop that answers /healthz, SMTP
// and every other request for longer than a slice. A slice ends after SLICE_ITEMS items or
// SLICE_MS of work, whichever comes first; then the work queues for a later turn of the loop.
// The queue is one for the whole process and lets SLICES_PER_TURN slices run per turn (oldest
// first), so twenty lists at once cost other requests four slices per turn, not twenty: their own
// answers take longer (the CPU they need is the same), nobody else's does.

/** Items per slice at most: a bound that holds however fast the machine. */
export const SLICE_ITEMS = 256;
/** Milliseconds of work per slice at most (checked every SLICE_CHECK items). */
const SLICE_MS = 1;
const SLICE_CHECK = 32;
/** Slices let run per turn of the event loop, across every caller. */
const SLICES_PER_TURN = 4;

/** Counters for tests: how many times work of this module gave the loop back. */
export const sliceCounters = { yields: 0 };

const waiting: Array<() => void> = [];
let scheduled = false;

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(runTurn);
}

function runTurn(): void {
  scheduled = false;
  // The continuations run in this turn's microtasks; the rest wait for the next turn, after its I/O.
  for (let i = 0; i < SLICES_PER_TURN && waiting.length > 0; i++) waiting.shift()!();
  if (waiting.length > 0) schedule();
}

/** Resolves when the caller's next slice may run: a later turn of the event loop, after the I/O waiting now and the slices queued before it. */
export function nextTurn(): Promise<void> {
  sliceCounters.yields++;
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

/**
 * `fn` of each item in order, in slices that take turns; the first runs at once (a caller that
 * did work of its own first awaits nextTurn() before it). With `signal`: stops (resolves early)
 * once it is aborted, e.g. when the client left.
 */
export async function eachInSlices<T>(items: Iterable<T>, fn: (item: T) => void, signal?: AbortSignal): Promise<void> {
  let n = 0;
  let start = performance.now();
  for (const item of items) {
    if (signal?.aborted) return;
    fn(item);
    n++;
    if (n % SLICE_CHECK !== 0) continue;
    if (n % SLICE_ITEMS === 0 || performance.now() - start >= SLICE_MS) {
      await nextTurn();
      start = performance.now();
    }
  }
}
