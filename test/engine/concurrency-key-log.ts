import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/**
 * The most tasks of each key of `group` that held a slot at once (R50), read from the log
 * alone, on database time: a task holds from the edge into `leased` until its first edge into
 * a state that holds none. The contract's holding states are written here, not taken from the
 * engine: `leased`, `awaiting_receipt`, and `cancel_requested` entered from `leased`. At equal
 * times an end counts before a start: a claim counts a slot free only once the edge that freed
 * it committed, so its own time is never earlier.
 */
export async function maxSlotOverlap(
  databaseUrl: string,
  group: string,
): Promise<Map<string, number>> {
  const rows = await query<{ key: string; most: number }>(
    databaseUrl,
    `with edge as (
       select t.concurrency_key as key, l.task_id, l.id, l.at,
         l.to_state in ('leased', 'awaiting_receipt')
           or (l.to_state = 'cancel_requested' and l.from_state = 'leased') as holding
       from causeway_transitions as l
       join causeway_tasks as t on t.id = l.task_id
       where t.concurrency_group = $1
     ),
     change as (
       select key, at, id,
         case when holding and not was then 1 when was and not holding then -1 else 0 end as delta
       from (
         select *, lag(holding, 1, false) over (partition by task_id order by id) as was
         from edge
       ) as e
     )
     select key, max(held)::int as most
     from (
       select key, sum(delta) over (partition by key order by at, delta, id) as held
       from change where delta <> 0
     ) as running
     group by key`,
    [group],
  );
  return new Map(rows.map((row) => [row.key, row.most]));
}

/** Waits until every workflow of `ids` succeeded (`description` says what for a timeout). */
export async function waitAllSucceeded(
  databaseUrl: string,
  ids: readonly string[],
  timeoutMs: number,
  description: string,
): Promise<void> {
  await waitFor(
    async () =>
      (
        await query<{ n: number }>(
          databaseUrl,
          `select count(*)::int as n from causeway_workflows
           where id = any($1::uuid[]) and state = 'succeeded'`,
          [ids],
        )
      )[0]?.n === ids.length,
    { timeoutMs, description },
  );
}
