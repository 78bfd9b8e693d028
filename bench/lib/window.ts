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
}

export interface WindowResult {
  /** The window's real length. */
  windowMs: number;
  /** CPU time used during the window, in ms; NaN without `cpuMs`. */
  cpuMs: number;
  /**
   * CPU time from the workers' start (warm-up included) until the measured process went quiet
   * after they stopped: with the work it does after the window (a code read once deliveries
   * pause, a file still owed). NaN without `cpuMs`.
   */
  settledCpuMs: number;
}

/** After the workers stop, the process counts as quiet once it uses less than this CPU per QUIET_SAMPLE_MS. */
const QUIET_CPU_MS = 3;
const QUIET_SAMPLE_MS = 100;
/** Gives up waiting for quiet after this long (the figure is then a lower bound). */
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
  return { windowMs, cpuMs: cpu1 - cpu0, settledCpuMs: (await settledCpu(cpu)) - cpuStart };
}

/** The CPU time read once the process went quiet (less than QUIET_CPU_MS in QUIET_SAMPLE_MS). */
async function settledCpu(cpu: () => number): Promise<number> {
  const end = performance.now() + SETTLE_MAX_MS;
  let prev = cpu();
  while (Number.isFinite(prev) && performance.now() < end) {
    await sleep(QUIET_SAMPLE_MS);
    const now = cpu();
    if (now - prev < QUIET_CPU_MS) return prev;
    prev = now;
  }
  return prev;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
