/** Percentiles of an instrument's lateness, ms. */
export interface Lateness {
  p50: number;
  p99: number;
  max: number;
  /** Samples measured. */
  count: number;
}

/** p-th percentile (nearest rank) of sorted values; 0 for none. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Summarises lateness samples (ms); `count` defaults to the number of samples. */
export function latenessOf(samples: ArrayLike<number>, count = samples.length): Lateness {
  const sorted = Float64Array.from(samples).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.length === 0 ? 0 : sorted[sorted.length - 1]!, count };
}
