import { sql, type Transaction } from 'kysely';
import type { Db } from '../database';
import type { CausewayDatabase } from '../schema';
import { type ScheduleRecord, type ScheduleRow, scheduleFromRow } from './schedule-rows';

/**
 * Moves claimed schedules on (R40), in the transaction that claimed them and submitted their
 * ticks: each one's next tick, and, when it submitted any, its last tick and workflow.
 */
export async function scheduleAdvance(
  tx: Transaction<CausewayDatabase>,
  advances: readonly {
    readonly name: string;
    readonly nextTickAt: Date | null;
    readonly lastTickAt: Date | null;
    readonly lastWorkflowId: string | null;
  }[],
): Promise<void> {
  if (advances.length === 0) return;
  await sql`
    update causeway_schedules as s set
      next_tick_at = v.next_tick_at,
      last_tick_at = coalesce(v.last_tick_at, s.last_tick_at),
      last_workflow_id = coalesce(v.last_workflow_id, s.last_workflow_id),
      updated_at = causeway_now()
    from unnest(
      ${advances.map((a) => a.name)}::text[],
      ${advances.map((a) => a.nextTickAt?.toISOString() ?? null)}::timestamptz[],
      ${advances.map((a) => a.lastTickAt?.toISOString() ?? null)}::timestamptz[],
      ${advances.map((a) => a.lastWorkflowId)}::uuid[]
    ) as v(name, next_tick_at, last_tick_at, last_workflow_id)
    where s.name = v.name`.execute(tx);
}

/** A schedule locked for an operator's trigger (waits for a scheduler that holds it). */
export async function scheduleLock(
  tx: Transaction<CausewayDatabase>,
  name: string,
): Promise<{ readonly schedule: ScheduleRecord; readonly now: Date } | undefined> {
  const { rows } = await sql<ScheduleRow & { now: Date }>`
    select s.*, causeway_now() as now from causeway_schedules as s
    where s.name = ${name} for update`.execute(tx);
  const row = rows[0];
  return row === undefined ? undefined : { schedule: scheduleFromRow(row), now: row.now };
}

/** Records a workflow an operator's trigger submitted: the history row and the last workflow. */
export async function scheduleRecordTrigger(
  tx: Transaction<CausewayDatabase>,
  trigger: {
    readonly name: string;
    readonly operator: string;
    readonly reason: string;
    readonly workflowId: string;
  },
): Promise<void> {
  await sql`
    with event as (
      insert into causeway_schedule_events (schedule_name, kind, operator, reason, workflow_id, at)
      values (${trigger.name}, 'triggered', ${trigger.operator}, ${trigger.reason},
        ${trigger.workflowId}::uuid, causeway_now())
    )
    update causeway_schedules set last_workflow_id = ${trigger.workflowId}::uuid,
      updated_at = causeway_now()
    where name = ${trigger.name}`.execute(tx);
}

/**
 * An operator's pause or resume (R41), with its history row, in one statement. A pause of a
 * paused schedule, or a resume of a running one, writes nothing. Answers whether the schedule
 * exists and whether this call changed it.
 */
export async function schedulePauseOrResume(
  db: Db,
  request: {
    readonly name: string;
    readonly pause: boolean;
    readonly operator: string;
    readonly reason: string;
  },
): Promise<{ readonly found: boolean; readonly changed: boolean }> {
  const { name, pause, operator, reason } = request;
  const { rows } = await sql<{ found: boolean; changed: boolean }>`
    with changed as (
      update causeway_schedules set
        paused_at = case when ${pause}::boolean then causeway_now() end,
        paused_by = case when ${pause}::boolean then ${operator}::text end,
        paused_reason = case when ${pause}::boolean then ${reason}::text end,
        updated_at = causeway_now()
      where name = ${name} and (paused_at is null) = ${pause}::boolean
      returning name
    ),
    event as (
      insert into causeway_schedule_events (schedule_name, kind, operator, reason, at)
      select name, case when ${pause}::boolean then 'paused' else 'resumed' end, ${operator},
        ${reason}, causeway_now()
      from changed
    )
    select exists (select 1 from causeway_schedules where name = ${name}) as found,
      exists (select 1 from changed) as changed`.execute(db);
  const row = rows[0];
  return { found: row?.found === true, changed: row?.changed === true };
}
