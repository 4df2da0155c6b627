/**
 * A group of live rows as the gauges show it: its labels (queue, channel, …), how many rows it
 * has, and how long the longest-standing of them has stood (seconds, never below zero).
 */
export type CountedGroup<Labels> = Labels & {
  readonly count: number;
  readonly oldestSeconds: number;
};

/** A row of a grouped count (`count`, `oldest_seconds` and the group's label columns). */
export function countedGroupFromRow<Labels extends object>(
  row: Labels & { readonly count: number; readonly oldest_seconds: number },
): CountedGroup<Labels> {
  const { count, oldest_seconds, ...labels } = row;
  return { ...(labels as Labels), count, oldestSeconds: Math.max(0, oldest_seconds) };
}
