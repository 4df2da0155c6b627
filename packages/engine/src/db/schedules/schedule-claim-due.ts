import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { CausewayDatabase } from '../schema';
import { type ScheduleRecord, type ScheduleRow, scheduleFromRow } from './schedule-rows';

/**
 * Claims up to `limit` due schedules for the rest of the transaction (R40): not paused, the
 * next tick at or before the database's now, one of `names` (the schedules this engine
 * declares), the workflow one of `workflows`, and not one of `skip`. FOR UPDATE SKIP LOCKED:
 * a row another scheduler holds is passed over, never waited for, so however many engines
 * run, one claims each tick and the others move on. Answers the rows, the most overdue first,
 * with the database's now.
 */
export async function scheduleClaimDue(
  tx: Transaction<CausewayDatabase>,
  filter: {
    readonly names: readonly string[];
    readonly workflows: readonly string[];
    readonly skip: readonly string[];
    readonly limit: number;
  },
): Promise<{ readonly schedules: readonly ScheduleRecord[]; readonly now: Date }> {
  const { rows } = await sql<ScheduleRow & { now: Date }>`
    select s.*, causeway_now() as now
    from causeway_schedules as s
    where s.paused_at is null
      and s.next_tick_at <= causeway_now()
      and s.name = any(${arrayLiteral(filter.names)}::text[])
      and s.workflow_name = any(${arrayLiteral(filter.workflows)}::text[])
      and s.name <> all(${arrayLiteral(filter.skip)}::text[])
    order by s.next_tick_at, s.name
    limit ${filter.limit}
    for update skip locked`.execute(tx);
  return { schedules: rows.map(scheduleFromRow), now: rows[0]?.now ?? new Date(0) };
}
