export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export interface LatencyStats {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function summarize(values: readonly number[]): Summary {
  const finite = values.filter((value) => Number.isFinite(value));
  return {
    median: median(finite),
    min: Math.min(...finite),
    max: Math.max(...finite),
    n: finite.length,
  };
}

/** Nearest-rank quantile of an ascending array (the peers' harness uses the same definition). */
export function nearestRank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

export function latencyStats(latencies: readonly number[]): LatencyStats {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: nearestRank(sorted, 0.5),
    p95: nearestRank(sorted, 0.95),
    p99: nearestRank(sorted, 0.99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.reduce((sum, value) => sum + value, 0) / (sorted.length || 1),
  };
}
