// Work over many items on the event loop, in slices that yield: a list of thousands of records
// (the Twilio Messages list, issue 35) never holds the loop that answers /healthz, SMTP and every
// other request for longer than one slice. A slice ends after SLICE_ITEMS items or SLICE_MS of
// work, whichever comes first; then the work waits for the next turn of the loop (setImmediate),
// so I/O that arrived meanwhile is served first. Twenty such lists at once cost other requests
// about twenty slices per turn, not twenty lists.

/** Items per slice at most: a bound that holds however fast the machine. */
export const SLICE_ITEMS = 256;
/** Milliseconds of work per slice at most (checked every SLICE_CHECK items). */
const SLICE_MS = 1;
const SLICE_CHECK = 32;

/** Counters for tests: how many times work of this module gave the loop back. */
export const sliceCounters = { yields: 0 };

/** The next turn of the event loop, after the I/O waiting now. */
export function nextTurn(): Promise<void> {
  sliceCounters.yields++;
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * `fn` of each item in order, in slices that yield between them. With `signal`: stops (resolves
 * early) once it is aborted, e.g. when the client left.
 */
export async function eachInSlices<T>(items: Iterable<T>, fn: (item: T) => void, signal?: AbortSignal): Promise<void> {
  let n = 0;
  let start = performance.now();
  for (const item of items) {
    fn(item);
    n++;
    if (n % SLICE_CHECK !== 0) continue;
    if (n % SLICE_ITEMS === 0 || performance.now() - start >= SLICE_MS) {
      await nextTurn();
      if (signal?.aborted) return;
      start = performance.now();
    }
  }
}
