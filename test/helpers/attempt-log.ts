import type { TaskAttempt } from '@causeway/workflow';
import { query } from './engine';

/**
 * A task's attempts (R56) as SQL reads them straight off the stored rows, independently of
 * `taskAttempts`: each `lease_acquired` row in log order (its epoch the count of such rows up
 * to it), the first later row of the task into a state that holds no lease, and the refused
 * result stored for the claim's epoch and holder. What the engine and the API answer must
 * equal it.
 */
export async function attemptsFromLog(databaseUrl: string, taskId: string): Promise<TaskAttempt[]> {
  const rows = await query<{
    step: string;
    attempt: number;
    epoch: number;
    actor: string;
    leased_at: Date;
    ended_at: Date | null;
    ended_by: string | null;
    reason: string | null;
    refused_at: Date | null;
  }>(
    databaseUrl,
    `with task_rows as (
       select x.id, x.step, x.to_state, x.reason, x.actor, x.attempt, x.at,
              count(*) filter (where x.reason = 'lease_acquired') over (order by x.id) as epoch
         from causeway_transitions as x
        where x.workflow_id = (select workflow_id from causeway_tasks where id = $1)
          and x.task_id = $1)
     select c.step, c.attempt, c.epoch::int as epoch, c.actor, c.at as leased_at,
            e.at as ended_at, e.actor as ended_by, e.reason, s.refused_at
       from task_rows as c
       left join lateral (
         select r.at, r.actor, r.reason from task_rows as r
          where r.id > c.id and r.to_state not in ('leased', 'cancel_requested')
          order by r.id limit 1) as e on true
       left join causeway_stale_results as s
         on s.task_id = $1 and s.lease_epoch = c.epoch and 'worker:' || s.holder = c.actor
      where c.reason = 'lease_acquired'
      order by c.id`,
    [taskId],
  );
  return rows.map((row) => ({
    taskId,
    step: row.step,
    attempt: row.attempt,
    epoch: row.epoch,
    holder: row.actor.replace(/^worker:/, ''),
    leasedAt: row.leased_at,
    endedAt: row.ended_at,
    outcome:
      row.refused_at !== null
        ? 'stale'
        : row.ended_by === null
          ? 'running'
          : row.ended_by.startsWith('sweeper')
            ? 'lease_lost'
            : 'settled',
    reason: (row.reason ?? null) as TaskAttempt['reason'],
    refusedAt: row.refused_at,
  }));
}

/** The task's `lease_epoch` column: the epoch of its latest claim (R7). */
export async function storedLeaseEpoch(databaseUrl: string, taskId: string): Promise<number> {
  const [row] = await query<{ lease_epoch: string }>(
    databaseUrl,
    'select lease_epoch from causeway_tasks where id = $1',
    [taskId],
  );
  if (row === undefined) throw new Error(`no task ${taskId}`);
  return Number(row.lease_epoch);
}
