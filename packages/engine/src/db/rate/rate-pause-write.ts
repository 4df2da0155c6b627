import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { CausewayDatabase } from '../schema';

/** A rate limit's key paused because a step of it heard "too busy" (R51). */
export interface RatePause {
  readonly name: string;
  /** Null: the name's one bucket. */
  readonly key: string | null;
  /** How long the platform asked to wait, from the decision's time. */
  readonly waitMs: number;
  readonly taskId: string;
  readonly reason: string;
}

/**
 * Pauses each (name, key) until the decision's time `now` plus its wait, unless a pause
 * already runs longer: no claim grants the key a task until then, whichever task it is.
 */
export async function ratePauseWrite(
  tx: Transaction<CausewayDatabase>,
  pauses: readonly RatePause[],
  now: Date,
): Promise<void> {
  if (pauses.length === 0) return;
  await sql`
    update causeway_rate_windows as w set
      paused_until = p.until, paused_by_task = p.task_id, paused_reason = p.reason
    from (
      select distinct on (name, key) name, key, until, task_id, reason
      from (
        select v.name, v.key, ${now.toISOString()}::timestamptz
            + v.wait_ms * interval '1 millisecond' as until, v.task_id, v.reason
        from unnest(
          ${arrayLiteral(pauses.map((p) => p.name))}::text[],
          ${arrayLiteral(pauses.map((p) => p.key ?? ''))}::text[],
          ${arrayLiteral(pauses.map((p) => p.waitMs))}::bigint[],
          ${arrayLiteral(pauses.map((p) => p.taskId))}::uuid[],
          ${arrayLiteral(pauses.map((p) => p.reason))}::text[]
        ) as v(name, key, wait_ms, task_id, reason)
      ) as u
      order by name, key, until desc
    ) as p
    where w.name = p.name and w.key = p.key
      and (w.paused_until is null or w.paused_until < p.until)`.execute(tx);
}
