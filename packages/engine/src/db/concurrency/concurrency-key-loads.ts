import type { ConcurrencyFacts, TaskState } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import type { Db } from '../database';
import { readyStateSql, slotHoldingSql } from '../task-states';

type Holder = ConcurrencyFacts['holders'][number];

/** A concurrency key with a slot held or a ready task waiting (R50), as operators see it. */
export interface ConcurrencyKeyLoad {
  readonly group: string;
  readonly key: string;
  /** The key's limit as its latest queued task stored it; null if no key row was written. */
  readonly limit: number | null;
  /** Tasks holding a slot of the key. */
  readonly held: number;
  /** Its queued tasks that are due: what a claim would take if a slot were free. */
  readonly queued: number;
  /** The oldest holders, at most the number asked for. */
  readonly holders: readonly Holder[];
}

/** A group's busy keys: the busiest few, and the totals over all of them. */
export interface ConcurrencyGroupLoad {
  readonly group: string;
  /** How many keys of the group have a slot held or a ready task. */
  readonly keysBusy: number;
  readonly held: number;
  readonly queued: number;
  /** The busiest keys (most held, then most queued, then by key), at most the number asked. */
  readonly keys: readonly ConcurrencyKeyLoad[];
}

/**
 * The live load of every concurrency group (R50) in one statement: the slot holders through
 * their partial index, the ready keyed tasks through theirs, so finished work is never read.
 * Only busy keys are counted; each group shows at most `keysShown` keys and each key at most
 * `holdersShown` holders, whatever the backlog.
 */
export async function concurrencyGroupLoadList(
  db: Db,
  shown: { readonly keysShown: number; readonly holdersShown: number },
): Promise<ConcurrencyGroupLoad[]> {
  const { rows } = await sql<{
    concurrency_group: string;
    concurrency_key: string;
    concurrency_limit: number | null;
    held: number;
    queued: number;
    keys_busy: number;
    group_held: number;
    group_queued: number;
    holders: {
      id: string;
      workflow_id: string;
      step: string;
      state: TaskState;
      lease_holder: string | null;
      updated_at: string;
    }[];
  }>`
    with held as (
      select t.concurrency_group, t.concurrency_key, count(*)::int as held
      from causeway_tasks as t
      where t.concurrency_key is not null and ${slotHoldingSql(sql`t`)}
      group by t.concurrency_group, t.concurrency_key
    ),
    ready as (
      select t.concurrency_group, t.concurrency_key, count(*)::int as queued
      from causeway_tasks as t
      where t.state = ${readyStateSql} and t.concurrency_key is not null
        and t.run_at <= causeway_now()
      group by t.concurrency_group, t.concurrency_key
    ),
    busy as (
      select concurrency_group, concurrency_key,
        coalesce(held.held, 0) as held, coalesce(ready.queued, 0) as queued
      from held full join ready using (concurrency_group, concurrency_key)
    ),
    ranked as (
      select busy.*,
        row_number() over (partition by concurrency_group
          order by held desc, queued desc, concurrency_key) as rank,
        count(*) over by_group as keys_busy,
        sum(held) over by_group as group_held,
        sum(queued) over by_group as group_queued
      from busy
      window by_group as (partition by concurrency_group)
    )
    select r.concurrency_group, r.concurrency_key, k.concurrency_limit, r.held, r.queued,
      r.keys_busy::int as keys_busy, r.group_held::int as group_held,
      r.group_queued::int as group_queued,
      coalesce(h.holders, '[]'::json) as holders
    from ranked as r
    -- A key has a row per queue its tasks were queued on: one limit for it.
    left join lateral (
      select min(k.concurrency_limit) as concurrency_limit from causeway_concurrency_keys as k
      where k.concurrency_group = r.concurrency_group and k.concurrency_key = r.concurrency_key
    ) as k on true
    left join lateral (
      select json_agg(json_build_object('id', o.id, 'workflow_id', o.workflow_id,
          'step', o.step, 'state', o.state, 'lease_holder', o.lease_holder,
          'updated_at', o.updated_at) order by o.updated_at, o.id) as holders
      from (
        select t.id, t.workflow_id, t.step, t.state, t.lease_holder, t.updated_at
        from causeway_tasks as t
        where t.concurrency_group = r.concurrency_group and t.concurrency_key = r.concurrency_key
          and ${slotHoldingSql(sql`t`)}
        order by t.updated_at, t.id
        limit ${shown.holdersShown}
      ) as o
    ) as h on true
    where r.rank <= ${shown.keysShown}
    order by r.concurrency_group, r.rank`.execute(db);
  const groups = new Map<string, ConcurrencyGroupLoad & { keys: ConcurrencyKeyLoad[] }>();
  for (const row of rows) {
    let group = groups.get(row.concurrency_group);
    if (group === undefined) {
      group = {
        group: row.concurrency_group,
        keysBusy: row.keys_busy,
        held: row.group_held,
        queued: row.group_queued,
        keys: [],
      };
      groups.set(row.concurrency_group, group);
    }
    group.keys.push({
      group: row.concurrency_group,
      key: row.concurrency_key,
      limit: row.concurrency_limit,
      held: row.held,
      queued: row.queued,
      holders: row.holders.map((holder) => ({
        taskId: holder.id,
        workflowId: holder.workflow_id,
        step: holder.step,
        state: holder.state,
        holder: holder.lease_holder,
        since: new Date(holder.updated_at),
      })),
    });
  }
  return [...groups.values()];
}
