// Small statistics helpers for the benchmark report.

/** Nearest-rank percentile (p in 0..100) of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  if (p <= 0) return sorted[0];
  if (p >= 100) return sorted[sorted.length - 1];
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

/** Median of any array (not modified). */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** `--samples N` from the command line (a positive whole number), else `fallback`. */
export function samplesArg(fallback: number): number {
  const at = process.argv.indexOf('--samples');
  const samples = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(samples) || samples < 1) throw new Error('--samples needs a positive whole number');
  return samples;
}
