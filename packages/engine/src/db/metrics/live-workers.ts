import { sql } from 'kysely';

export interface QueueSlots {
  readonly queue: string;
  /** Live workers that claim from the queue. */
  readonly workers: number;
  /** Their slots for it, summed: how many of its tasks can run at once. */
  readonly slots: number;
}

/**
 * Live registry rows (within their own age-out), through the `stale_at` index: a row whose
 * engine stopped heartbeating drops out once its age-out passes, and is pruned later.
 */
export const liveWorkersSql = sql`
  select count(*)::int as workers from causeway_workers where stale_at > causeway_now()`;

/** Each queue's live workers and slots, from the queues each live registry row lists. */
export const queueSlotsSql = sql`
  select q.value ->> 'name' as queue, count(*)::int as workers,
         sum((q.value ->> 'slots')::int)::int as slots
    from causeway_workers as w
   cross join lateral jsonb_array_elements(w.queues) as q
   where w.stale_at > causeway_now()
   group by 1`;
