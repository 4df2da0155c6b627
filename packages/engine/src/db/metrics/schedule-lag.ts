import { sql } from 'kysely';

export interface ScheduleLag {
  readonly schedule: string;
  /** Seconds since its next tick was due: how late the scheduler is with it (R40). */
  readonly lagSeconds: number;
}

/**
 * Running schedules whose next tick is due, through the scheduler's own partial index. A
 * schedule not due is not late and has no row.
 */
export const scheduleLagSql = sql`
  select name as schedule,
         extract(epoch from causeway_now() - next_tick_at)::float8 as lag_seconds
    from causeway_schedules
   where paused_at is null and next_tick_at <= causeway_now()`;

export function scheduleLagFromRow(row: { schedule: string; lag_seconds: number }): ScheduleLag {
  return { schedule: row.schedule, lagSeconds: Math.max(0, row.lag_seconds) };
}
