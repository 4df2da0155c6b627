import { sql } from 'kysely';
import { slotHoldingSql } from '../task-states';

/** Slots held in a concurrency group (R50), summed over its keys: never per key. */
export interface ConcurrencySlots {
  readonly group: string;
  readonly held: number;
}

/** The slot holders by group, through their partial index (bounded by the running work). */
export const concurrencySlotsSql = sql`
  select t.concurrency_group as "group", count(*)::int as held
    from causeway_tasks as t
   where t.concurrency_key is not null and ${slotHoldingSql(sql`t`)}
   group by t.concurrency_group`;
