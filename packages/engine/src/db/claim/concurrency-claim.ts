import { priorityLimits } from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';
import { queueNotPausedSql } from '../queues/queue-pauses';
import { readyStateSql, slotHoldingSql } from '../task-states';
import { claimAtSql, dueSql } from './claim-order';
import { definedWorkflowStep } from './defined-workflow-step';
import { rateCandidateColumns, rateOpenSql } from './rate-claim';

// Claims of tasks with a concurrency key (R50). Who holds a slot is never stored: a claim
// counts the key's tasks in the holding states in its snapshot. Two racing claims could both
// count the same free slot, so each claim that grants a key slots also bumps the
// `grant_version` of the key's row for its queue, and grants only if the versions of the key's
// rows on every queue, which it locks, are those its snapshot read: any grant its snapshot
// missed, on any queue, changed one of them, and a claim whose snapshot is newer
// than a grant counts that grant's tasks as holders. So no key ever holds more than its limit,
// however many claimers race; a claim that loses a key this way takes none of its tasks and
// the key waits for the next claim round.

/** The columns a plain candidate has for the keyed candidates' (`keyedCandidatesSql`). */
export const plainCandidateKeyColumns = sql`null::text as concurrency_group,
  null::text as concurrency_key, null::text as grant_version, null::bigint as head_version`;

/**
 * The grant versions of every queue's row of key row `g`'s key, as one text (`queue:version`
 * in queue order): what a grant compares with the same read of the rows it locks.
 */
function grantVersionsSql(g: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`(select string_agg(o.queue || ':' || o.grant_version, ',' order by o.queue)
          from causeway_concurrency_keys as o
          where o.concurrency_group = ${g}.concurrency_group
            and o.concurrency_key = ${g}.concurrency_key)`;
}

/**
 * Due keyed tasks of `queue`, at most `limit`, locked SKIP LOCKED: keys in the order of their
 * head (their earliest queued task), at most `limit − held` tasks of each, in claim order. A
 * full key is one key row passed, whatever its backlog, so it never delays another key, and a
 * key with 10,000 due tasks delays another key's due task by at most one claim round.
 */
export function keyedCandidatesSql(options: {
  readonly queue: string;
  readonly limit: number;
  readonly now: RawBuilder<unknown>;
  readonly stepKeys: readonly string[];
  /** Some step of the queue spends a rate limit (R51): pass tasks whose key has no room. */
  readonly rated: boolean;
}): RawBuilder<unknown> {
  const { queue, limit, now, stepKeys, rated } = options;
  return sql`select k.id, k.workflow_id, k.step, k.claim_at, k.deadline_at, k.rate_name,
        k.rate_key, k.rate_cost, g.concurrency_group, g.concurrency_key, g.grant_version, g.head_version
      from (
        select g.concurrency_group, g.concurrency_key, ${grantVersionsSql(sql`g`)} as grant_version,
          g.head_version, g.concurrency_limit
        from causeway_concurrency_keys as g
        where g.queue = ${queue} and ${queueNotPausedSql(queue)}
          and g.head_at <= ${now} + ${sql.lit(priorityLimits.max)} * interval '1 second'
        order by g.head_at
      ) as g
      -- Counted per key as the walk reaches it (a lateral, not a column of the ordered
      -- rows, which would count every key before the first is taken).
      cross join lateral (
        select g.concurrency_limit - count(*) as free from causeway_tasks as h
        where h.concurrency_group = g.concurrency_group
          and h.concurrency_key = g.concurrency_key and ${slotHoldingSql(sql`h`)}
      ) as f
      cross join lateral (
        select t.id, t.workflow_id, t.step, ${claimAtSql(sql`t`)} as claim_at, t.deadline_at,
          ${rateCandidateColumns(sql`t`)}
        from causeway_tasks as t
        where t.state = ${readyStateSql} and t.concurrency_key is not null
          and t.queue = ${queue} and t.concurrency_group = g.concurrency_group
          and t.concurrency_key = g.concurrency_key
          and ${dueSql(sql`t`, now)}
          and ${definedWorkflowStep(sql`t`, stepKeys)}${
            rated
              ? sql`
          and ${rateOpenSql(sql`t`, now)}`
              : sql``
          }
        order by ${claimAtSql(sql`t`)}
        limit greatest(f.free, 0)
        for update of t skip locked
      ) as k
      limit ${limit}`;
}

/**
 * The CTEs that grant keys their slots, from `wanted`: a CTE of the keyed tasks the claim
 * would lease (with `id`, `concurrency_group`, `concurrency_key`, and the `grant_version` and
 * `head_version` its snapshot read). `key_grant` returns each key granted. Key rows are locked
 * in key order, so racing claims never deadlock on them. A granted key's head moves to its
 * next queued task as the snapshot has it; if a task became queued since (`head_version`
 * moved), to the earlier of that and the row's head, so a head is never later than its key's
 * earliest queued task.
 */
export function keyGrantCtes(queue: string, wanted: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    key_wanted as materialized (
      select w.concurrency_group, w.concurrency_key, w.grant_version, w.head_version,
        (
          select ${claimAtSql(sql`t`)} from causeway_tasks as t
          where t.state = ${readyStateSql} and t.concurrency_key is not null
            and t.queue = ${queue} and t.concurrency_group = w.concurrency_group
            and t.concurrency_key = w.concurrency_key and t.id <> all(w.ids)
          order by ${claimAtSql(sql`t`)}
          limit 1
        ) as next_head
      from (
        select concurrency_group, concurrency_key, grant_version, head_version,
          array_agg(id) as ids
        from ${wanted}
        where concurrency_key is not null
        group by concurrency_group, concurrency_key, grant_version, head_version
      ) as w
    ),
    -- Every queue's row of each key, locked in order; then each key's versions as locked.
    key_lock_rows as materialized (
      select g.concurrency_group, g.concurrency_key, g.queue, g.grant_version
      from causeway_concurrency_keys as g
      where (g.concurrency_group, g.concurrency_key) in (
        select concurrency_group, concurrency_key from key_wanted)
      order by g.concurrency_group, g.concurrency_key, g.queue
      for update
    ),
    key_lock as materialized (
      select concurrency_group, concurrency_key,
        string_agg(queue || ':' || grant_version, ',' order by queue) as grant_version
      from key_lock_rows
      group by concurrency_group, concurrency_key
    ),
    key_grant as (
      update causeway_concurrency_keys as g set
        grant_version = g.grant_version + 1,
        head_at = case when g.head_version = w.head_version then w.next_head
          else least(g.head_at, w.next_head) end
      from key_lock as l
      join key_wanted as w
        on w.concurrency_group = l.concurrency_group and w.concurrency_key = l.concurrency_key
      -- The lock returns the latest rows: versions other than the snapshot's are a grant
      -- this claim did not count, on this queue or another.
      where g.concurrency_group = l.concurrency_group and g.concurrency_key = l.concurrency_key
        and g.queue = ${queue} and l.grant_version = w.grant_version
      returning g.concurrency_group, g.concurrency_key
    )`;
}
