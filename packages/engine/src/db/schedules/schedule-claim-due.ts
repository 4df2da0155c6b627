import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { CausewayDatabase } from '../schema';
import { type ScheduleRecord, type ScheduleRow, scheduleFromRow } from './schedule-rows';

/**
 * Claims one due schedule for the rest of the transaction (R40): not paused, its next tick at
 * or before the database's now, one of `names` (the schedules this engine declares), its
 * workflow one `workflows` defines, and not one of `skip`. FOR UPDATE SKIP LOCKED: a row
 * another scheduler holds is passed over, never waited for, so however many engines run, one
 * claims each tick and the others move on. Answers the row with the database's now.
 */
export async function scheduleClaimDue(
  tx: Transaction<CausewayDatabase>,
  filter: {
    readonly names: readonly string[];
    readonly workflows: readonly string[];
    readonly skip: readonly string[];
  },
): Promise<{ readonly schedule: ScheduleRecord; readonly now: Date } | undefined> {
  const { rows } = await sql<ScheduleRow & { now: Date }>`
    select s.*, causeway_now() as now
    from causeway_schedules as s
    where s.paused_at is null
      and s.next_tick_at <= causeway_now()
      and s.name = any(${arrayLiteral(filter.names)}::text[])
      and s.workflow_name = any(${arrayLiteral(filter.workflows)}::text[])
      and s.name <> all(${arrayLiteral(filter.skip)}::text[])
    order by s.next_tick_at, s.name
    limit 1
    for update skip locked`.execute(tx);
  const row = rows[0];
  return row === undefined ? undefined : { schedule: scheduleFromRow(row), now: row.now };
}
