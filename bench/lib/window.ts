// The measuring window every load generator shares: the workers run from the start, a
// warm-up passes, then samples count for `durationMs`; CPU time is read at both ends of the
// window, and the workers are awaited once they are told to stop.

/** Read by the workers: a sample counts only while `measuring && !stopping`; they loop until `stopping`. */
export interface WindowState {
  measuring: boolean;
  stopping: boolean;
}

export interface WindowOptions {
  warmupMs: number;
  durationMs: number;
  /** CPU time used so far in ms (the server's, or this process's); NaN when unknown. */
  cpuMs?: () => number;
  /** Also measure `settledCpuMs` (waits for the process to go quiet after the window). */
  settle?: boolean;
}

export interface WindowResult {
  /** The window's real length. */
  windowMs: number;
  /** CPU time used during the window, in ms; NaN without `cpuMs`. */
  cpuMs: number;
  /**
   * CPU time from the workers' start (warm-up included) until the measured process went quiet
   * after they stopped: with the work it does after the window (a code read once deliveries
   * pause, a file still owed). NaN without `cpuMs` or `settle`.
   */
  settledCpuMs: number;
  /** The process was still busy when SETTLE_MAX_MS ran out: settledCpuMs is a lower bound. */
  settleTimedOut: boolean;
}

/**
 * With `settle`: after the workers stop, the process counts as quiet once QUIET_SAMPLES samples
 * in a row of QUIET_SAMPLE_MS each saw no CPU tick (/proc counts in ticks of 10 ms): long enough
 * for our timers' work (the journal's 200 ms, the background flush's 500 ms) to show.
 */
const QUIET_SAMPLE_MS = 200;
const QUIET_SAMPLES = 3;
/** Gives up waiting for quiet after this long: the figure is then a lower bound, and says so. */
const SETTLE_MAX_MS = 60_000;

export function newWindow(): WindowState {
  return { measuring: false, stopping: false };
}

/** Whether a sample finishing now falls inside the window. */
export function counts(w: WindowState): boolean {
  return w.measuring && !w.stopping;
}

/** Waits out the warm-up, measures the window, stops the workers and waits for them. */
export async function runWindow(w: WindowState, opts: WindowOptions, workers: Array<Promise<unknown>>): Promise<WindowResult> {
  const cpu = opts.cpuMs ?? (() => NaN);
  const cpuStart = cpu();
  await sleep(opts.warmupMs);
  w.measuring = true;
  const start = performance.now();
  const cpu0 = cpu();
  await sleep(opts.durationMs);
  const windowMs = performance.now() - start;
  w.stopping = true;
  const cpu1 = cpu();
  await Promise.all(workers);
  if (!opts.settle) return { windowMs, cpuMs: cpu1 - cpu0, settledCpuMs: NaN, settleTimedOut: false };
  const settled = await settledCpu(cpu);
  return { windowMs, cpuMs: cpu1 - cpu0, settledCpuMs: settled.cpuMs - cpuStart, settleTimedOut: settled.timedOut };
}

/** The CPU time read once the process went quiet (QUIET_SAMPLES samples in a row without a tick). */
async function settledCpu(cpu: () => number): Promise<{ cpuMs: number; timedOut: boolean }> {
  const end = performance.now() + SETTLE_MAX_MS;
  let prev = cpu();
  let quiet = 0;
  let quietFrom = prev;
  while (Number.isFinite(prev) && performance.now() < end) {
    await sleep(QUIET_SAMPLE_MS);
    const now = cpu();
    if (now === prev) {
      if (quiet++ === 0) quietFrom = prev;
      if (quiet >= QUIET_SAMPLES) return { cpuMs: quietFrom, timedOut: false };
    } else quiet = 0;
    prev = now;
  }
  return { cpuMs: prev, timedOut: Number.isFinite(prev) };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
