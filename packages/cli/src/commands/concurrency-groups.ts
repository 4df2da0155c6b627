import { table } from '../table';

/** A concurrency group (R50) as `causeway queues` asks for it. */
export interface ConcurrencyGroupView {
  name: string;
  limit: number;
  defined: boolean;
  keysBusy: number;
  held: number;
  queued: number;
  keys: { key: string; limit: number | null; held: number; queued: number }[];
}

/** How many of each group's busiest keys the listing names. */
export const busiestKeysShown = 3;

export const concurrencyGroupFields = `name limit defined keysBusy held queued
  keys { key limit held queued }`;

/**
 * The concurrency groups' table: each group's limit, how many keys are busy, the slots held
 * and ready tasks over all its keys, and its busiest keys as `key held/limit (+queued)`.
 */
export function concurrencyGroupTable(groups: readonly ConcurrencyGroupView[]): string {
  if (groups.length === 0) return 'no concurrency groups';
  return table(
    ['CONCURRENCY GROUP', 'LIMIT', 'KEYS BUSY', 'HELD', 'QUEUED', 'BUSIEST KEYS'],
    groups.map((group) => [
      group.defined ? group.name : `${group.name} (not defined here)`,
      String(group.limit),
      String(group.keysBusy),
      String(group.held),
      String(group.queued),
      group.keys.length === 0
        ? '-'
        : group.keys
            .map(
              (key) =>
                `${key.key} ${key.held}/${key.limit ?? group.limit}` +
                (key.queued > 0 ? ` (+${key.queued})` : ''),
            )
            .join(', ') + (group.keysBusy > group.keys.length ? ', …' : ''),
    ]),
  );
}
