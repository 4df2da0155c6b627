import type { QueueLoad, QueuePause } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { readyHalves } from '../claim/claim-order';
import type { Db } from '../database';
import { leaseHoldingStatesSql, readyStateSql } from '../task-states';

/**
 * Each queue's load, one statement for many queues: the leases held in it by holder (through
 * the partial index on lease-holding rows, which holds only work in flight) and when its oldest
 * due task became due (the first entry of the partial ready index: the claim's own), and its
 * pause (R53).
 */
export async function queueLoadList(
  db: Db,
  queues: readonly string[],
): Promise<Map<string, QueueLoad>> {
  const loads = new Map<
    string,
    { leasedByHolder: Record<string, number>; oldest: Date | null; paused: QueuePause | null }
  >();
  if (queues.length === 0) return new Map();
  const { rows } = await sql<{
    queue: string;
    oldest_ready_at: Date | null;
    holder: string | null;
    leased: number | null;
    paused_by: string | null;
    paused_reason: string | null;
    paused_at: Date | null;
  }>`
    select q.queue, r.oldest_ready_at, l.holder, l.leased, p.operator as paused_by,
      p.reason as paused_reason, p.paused_at
    from unnest(${[...new Set(queues)]}::text[]) as q(queue)
    left join causeway_queue_pauses as p on p.queue = q.queue
    cross join lateral (
      select least(${sql.join(
        readyHalves.map(
          (half) => sql`(select min(run_at) from causeway_tasks
        where state = ${readyStateSql} and ${half} and queue = q.queue
          and run_at <= causeway_now())`,
        ),
      )}) as oldest_ready_at
    ) as r
    left join lateral (
      select lease_holder as holder, count(*)::int as leased from causeway_tasks
      where state in (${leaseHoldingStatesSql}) and queue = q.queue
      group by lease_holder
    ) as l on true`.execute(db);
  for (const row of rows) {
    const paused =
      row.paused_by === null || row.paused_reason === null || row.paused_at === null
        ? null
        : { operator: row.paused_by, reason: row.paused_reason, pausedAt: row.paused_at };
    const load = loads.get(row.queue) ?? {
      leasedByHolder: {},
      oldest: row.oldest_ready_at,
      paused,
    };
    if (row.holder !== null && row.leased !== null) load.leasedByHolder[row.holder] = row.leased;
    loads.set(row.queue, load);
  }
  return new Map(
    [...loads].map(([queue, load]) => [
      queue,
      { leasedByHolder: load.leasedByHolder, oldestReadyAt: load.oldest, paused: load.paused },
    ]),
  );
}
