/** How values read in human output (JSON output keeps the API's values as they are). */

/** An API enum value (`AWAITING_RECEIPT`) as the domain's code (`awaiting_receipt`). */
export function code(value: string | null | undefined): string {
  return value === null || value === undefined ? '-' : value.toLowerCase();
}

/** A domain code (`attempts_exhausted`) as the API's enum value (`ATTEMPTS_EXHAUSTED`). */
export function enumValue(value: string): string {
  return value.trim().toUpperCase();
}

/** An instant in UTC to the second, and how far it is from `now` (`in 4s`, `2m ago`). */
export function instant(value: string | null | undefined, now: Date): string {
  if (value === null || value === undefined) return '-';
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return value;
  const text = `${at.toISOString().slice(0, 19)}Z`;
  const delta = at.getTime() - now.getTime();
  return `${text} (${delta >= 0 ? `in ${duration(delta)}` : `${duration(-delta)} ago`})`;
}

/** A time of day in UTC with milliseconds, for lines that follow each other (watch). */
export function clock(value: string): string {
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? value : `${at.toISOString().slice(11, 23)}Z`;
}

/** A duration, rounded to its largest two units: `850ms`, `4s`, `2m05s`, `3h10m`, `2d04h`. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const seconds = Math.floor(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const pad = (value: number) => String(value).padStart(2, '0');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${pad(seconds % 60)}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h${pad(minutes % 60)}m`;
  return `${Math.floor(hours / 24)}d${pad(hours % 24)}h`;
}

/**
 * A period in the largest whole unit that fits (`1 min`, `24 h`, `1.5 s`): the phrase the
 * engine's sentences use (packages/workflow/src/time-phrases.ts `duration`, which the CLI
 * does not depend on).
 */
export function period(ms: number): string {
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

/** Text shortened to `max` characters on one line (errors can be long and multi-line). */
export function oneLine(value: string | null | undefined, max = 80): string {
  if (value === null || value === undefined || value === '') return '-';
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
