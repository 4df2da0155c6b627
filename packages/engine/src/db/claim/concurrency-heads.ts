import { sql } from 'kysely';
import type { Db } from '../database';
import { readyStateSql } from '../task-states';
import { claimAtSql } from './claim-order';

/**
 * Moves on the heads of keys (R50) whose earliest queued tasks left `queued` without a claim
 * (a cancel, a deadline, a debounce): a claim walks every key with a head, so a head left on a
 * key with nothing queued would cost every claim a probe, forever. Each head becomes its key's
 * earliest queued task in this statement's snapshot, or none, and only where no task of the
 * key became queued since (`head_version` unchanged): a head is never set later than its
 * key's earliest queued task. The `limit` oldest heads are looked at, the ones a claim passes
 * first. Returns how many heads moved.
 */
export async function concurrencyHeadsRepair(db: Db, limit: number): Promise<number> {
  const { rows } = await sql<{ moved: string }>`
    with seen as materialized (
      select g.concurrency_group, g.concurrency_key, g.head_at, g.head_version, (
          select ${claimAtSql(sql`t`)} from causeway_tasks as t
          where t.state = ${readyStateSql} and t.concurrency_key is not null
            and t.queue = g.queue and t.concurrency_group = g.concurrency_group
            and t.concurrency_key = g.concurrency_key
          order by ${claimAtSql(sql`t`)}
          limit 1
        ) as next_head
      from causeway_concurrency_keys as g
      where g.head_at is not null
      order by g.head_at
      limit ${limit}
    ),
    moved as (
      update causeway_concurrency_keys as g set head_at = s.next_head
      from seen as s
      where g.concurrency_group = s.concurrency_group and g.concurrency_key = s.concurrency_key
        and g.head_version = s.head_version and s.next_head is distinct from s.head_at
      returning 1
    )
    select count(*) as moved from moved`.execute(db);
  return Number(rows[0]?.moved ?? 0);
}
