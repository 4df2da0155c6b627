/**
 * A Retry-After in seconds as the wait a StepError takes (1 ms to 24 h), or undefined when the
 * platform gave none (or a date, which would compare clocks of two machines).
 */
export function retryAfterOf(header: string | null): number | undefined {
  const seconds = header === null || header.trim() === '' ? Number.NaN : Number(header);
  if (!Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.min(Math.max(Math.round(seconds * 1_000), 1), 86_400_000);
}
