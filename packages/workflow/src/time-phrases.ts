/**
 * How sentences for operators write times and durations (explanations, blockers): database
 * time in UTC, so a line reads the same whatever the reader's time zone.
 */

/** HH:MM:SS in UTC: stable whatever the reader's time zone. */
export function clock(at: Date): string {
  return at.toISOString().slice(11, 19);
}

/** HH:MM:SS when on the same UTC day as `reference`, else with the weekday and date. */
export function moment(at: Date, reference: Date): string {
  if (at.toISOString().slice(0, 10) === reference.toISOString().slice(0, 10)) return clock(at);
  const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][at.getUTCDay()];
  return `${weekday} ${at.toISOString().slice(0, 10)} ${clock(at)}`;
}

/** A duration in the largest whole unit that fits: "24 h", "90 min", "1.5 s". */
export function duration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  }
  return ms >= 1_000 ? `${ms / 1_000} s` : `${ms} ms`;
}

/**
 * How long something has lasted, rounded down to the unit that reads best: "0 s", "42 s",
 * "17 min", "5 h", "3 d" (an age, where milliseconds would only be noise).
 */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1_000));
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3_600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${Math.floor(seconds / 3_600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}
