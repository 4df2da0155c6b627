import type { TaskPriorityPlace } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { claimAtSql, readyHalves } from '../claim/claim-order';
import type { Db } from '../database';
import { readyStateSql } from '../task-states';

/**
 * Where each queued task with a priority of the workflows `ids` stands in its queue (R49): the
 * queued tasks with an earlier run_at that it goes ahead of, and those with a later one that
 * go ahead of it, both by `run_at − priority` as the claim orders them; one statement, by
 * workflow id (workflows without a queued task with a priority map to nothing). Each count reads the queue's part of the ready
 * index after (or before) the task's own place in claim order. The ids must be UUIDs.
 */
export async function priorityPlacesByWorkflows(
  db: Db,
  ids: readonly string[],
): Promise<Map<string, TaskPriorityPlace[]>> {
  const places = new Map<string, TaskPriorityPlace[]>();
  if (ids.length === 0) return places;
  const { rows } = await sql<{
    workflow_id: string;
    step: string;
    queue: string;
    priority: number;
    older_behind: number;
    newer_ahead: number;
  }>`
    select t.workflow_id, t.step, t.queue, t.priority,
      (${sql.join(
        readyHalves.map(
          (half) => sql`(select count(*) from causeway_tasks as o
        where o.state = ${readyStateSql} and o.${half} and o.queue = t.queue
          and ${claimAtSql(sql`o`)} > ${claimAtSql(sql`t`)} and o.run_at < t.run_at)`,
        ),
        sql` + `,
      )})::int as older_behind,
      (${sql.join(
        readyHalves.map(
          (half) => sql`(select count(*) from causeway_tasks as o
        where o.state = ${readyStateSql} and o.${half} and o.queue = t.queue
          and ${claimAtSql(sql`o`)} < ${claimAtSql(sql`t`)} and o.run_at > t.run_at)`,
        ),
        sql` + `,
      )})::int as newer_ahead
    from causeway_tasks as t
    where t.workflow_id = any(${[...ids]}::uuid[]) and t.state = ${readyStateSql}
      and t.priority <> 0
    order by t.workflow_id, t.step`.execute(db);
  for (const row of rows) {
    const place = {
      step: row.step,
      queue: row.queue,
      priority: row.priority,
      olderBehind: row.older_behind,
      newerAhead: row.newer_ahead,
    };
    const list = places.get(row.workflow_id);
    if (list === undefined) places.set(row.workflow_id, [place]);
    else list.push(place);
  }
  return places;
}
