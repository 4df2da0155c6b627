import { sql } from 'kysely';
import type { Db } from '../database';
import { receiptAwaitingStateSql, replayableStateSql } from '../task-states';

/** Dead tasks whose dead edge has this reason and happened in [from, to] (R26). */
export async function taskListDeadByReason(
  db: Db,
  reason: string,
  from: Date,
  to: Date,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select t.id from causeway_tasks t
    cross join lateral (
      select reason, at from causeway_transitions tr
      where tr.workflow_id = t.workflow_id and tr.task_id = t.id order by tr.id desc limit 1
    ) as last
    where t.state = ${replayableStateSql} and last.reason = ${reason} and last.at between ${from} and ${to}
    order by t.id`.execute(db);
  return rows.map((row) => row.id);
}

/** The reason code of a task's latest edge (what a repeated request answers, R15). */
export async function taskLastReason(db: Db, taskId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('causeway_transitions')
    .select('reason')
    // Through the (workflow_id, id) index: the log has no index of its own on task_id.
    .where('workflow_id', '=', (eb) =>
      eb.selectFrom('causeway_tasks').select('workflow_id').where('id', '=', taskId),
    )
    .where('task_id', '=', taskId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.reason;
}

/**
 * Records a cancel that came after the submission was accepted (R14): only while the task
 * still awaits its receipt; the first ask is kept. Returns whether the task was waiting.
 */
export async function taskRecordLateCancel(
  db: Db,
  taskId: string,
  actor: string,
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    update causeway_tasks
    set cancel_asked_at = coalesce(cancel_asked_at, causeway_now()),
        cancel_asked_by = coalesce(cancel_asked_by, ${actor})
    where id = ${taskId} and state = ${receiptAwaitingStateSql}
    returning id`.execute(db);
  return rows.length === 1;
}
