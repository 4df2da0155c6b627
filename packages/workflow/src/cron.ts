/**
 * The one file that uses the cron library. Ticks are the library's, computed in the
 * schedule's time zone: daylight-saving gaps and repeats are its rules, not ours (R40).
 *
 * Why croner (11.0.1) and not cron-parser: croner has no dependencies and no `node:` imports
 * (it runs in browsers, Deno and Bun), so this pure package may depend on it, and a bad cron
 * or time zone is refused when the module loads; cron-parser pulls in luxon. croner documents
 * its DST rules (those of Vixie cron): a fixed-time job in a gap runs at the first valid time
 * after it, one in a repeated hour runs once; interval jobs skip the gap and run in both
 * repeats. It supports Node >= 18, is actively maintained, and its recent DST fixes shipped;
 * cron-parser still has open DST bugs (iteration stops across a spring-forward gap).
 */
import { Cron } from 'croner';

/** Five fields, minute precision: minute hour day-of-month month day-of-week. */
const mode = '5-part';

/** The canonical IANA name of a time zone (`europe/berlin` → `Europe/Berlin`), or null if unknown. */
export function canonicalTimeZone(timezone: string): string | null {
  if (typeof timezone !== 'string' || timezone.length === 0) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** What is wrong with a cron expression in a time zone, if anything. */
export function cronProblems(cron: unknown, timezone: string): string[] {
  if (typeof cron !== 'string' || cron.trim().length === 0) {
    return [`cron must be a non-empty string, got ${JSON.stringify(cron)}`];
  }
  try {
    if (cronOf(cron, timezone).nextRun(new Date(0)) === null) {
      return [`cron ${JSON.stringify(cron)} never fires`];
    }
    return [];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return [
      `cron ${JSON.stringify(cron)} does not parse: ${message.replace(/^CronPattern: /, '')}`,
    ];
  }
}

/** Parsed patterns without a start, by time zone and cron: a scheduler asks for each a minute. */
const parsed = new Map<string, Cron>();
const maxParsed = 10_000;

/** The first tick strictly after `after`, or null if there is none. */
export function nextTick(cron: string, timezone: string, after: Date): Date | null {
  const id = `${timezone}\n${cron}`;
  let found = parsed.get(id);
  if (found === undefined) {
    if (parsed.size >= maxParsed) parsed.clear();
    found = cronOf(cron, timezone);
    parsed.set(id, found);
  }
  return found.nextRun(after);
}

/**
 * The ticks in [from, to], oldest first: the most recent `max` of them when there are more
 * (a long downtime is not walked tick by tick).
 */
export function ticksBetween(
  cron: string,
  timezone: string,
  from: Date,
  to: Date,
  max: number,
): Date[] {
  if (from.getTime() > to.getTime() || max < 1) return [];
  // startAt is inclusive; previousRuns counts back from before its reference (to + 1 ms, so a
  // tick exactly at `to` is included) and stops at startAt.
  const bounded = cronOf(cron, timezone, from);
  return bounded.previousRuns(max, new Date(to.getTime() + 1)).reverse();
}

function cronOf(cron: string, timezone: string, startAt?: Date): Cron {
  // Without a function the Cron object schedules nothing: it only evaluates the pattern.
  return new Cron(cron, {
    timezone,
    mode,
    paused: true,
    ...(startAt === undefined ? {} : { startAt }),
  });
}
