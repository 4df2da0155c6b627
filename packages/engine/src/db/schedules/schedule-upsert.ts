import { sql } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { Db } from '../database';

/** A schedule as code declares it, with its first tick after the database's now. */
export interface ScheduleDeclaration {
  readonly name: string;
  readonly workflow: string;
  readonly cron: string;
  readonly timezone: string;
  readonly catchUp: string;
  readonly inputJson: string;
  /** The first tick after now by this cron and time zone (null: none left). */
  readonly nextTickAt: Date | null;
}

/**
 * Writes the schedules code declares (R41), by name: a new one starts at its next tick; a
 * changed one takes the code's workflow, cron, time zone, catch-up and input, and its next
 * tick is recomputed only when its cron or time zone changed. The operator's pause, the last
 * tick and the last workflow are kept. An unchanged row is not written at all. Returns the
 * names of the rows written.
 */
export async function scheduleUpsert(
  db: Db,
  declarations: readonly ScheduleDeclaration[],
): Promise<string[]> {
  if (declarations.length === 0) return [];
  const { rows } = await sql<{ name: string }>`
    insert into causeway_schedules as s (name, workflow_name, cron, timezone, catch_up, input,
      next_tick_at, created_at, updated_at)
    select v.name, v.workflow_name, v.cron, v.timezone, v.catch_up,
      (${`[${declarations.map((row) => row.inputJson).join(',')}]`}::jsonb)->(v.position::integer - 1),
      v.next_tick_at, causeway_now(), causeway_now()
    from unnest(
      ${arrayLiteral(declarations.map((row) => row.name))}::text[],
      ${arrayLiteral(declarations.map((row) => row.workflow))}::text[],
      ${arrayLiteral(declarations.map((row) => row.cron))}::text[],
      ${arrayLiteral(declarations.map((row) => row.timezone))}::text[],
      ${arrayLiteral(declarations.map((row) => row.catchUp))}::text[],
      ${arrayLiteral(declarations.map((row) => row.nextTickAt?.toISOString() ?? null))}::timestamptz[]
    ) with ordinality as v(name, workflow_name, cron, timezone, catch_up, next_tick_at, position)
    on conflict (name) do update set
      workflow_name = excluded.workflow_name,
      cron = excluded.cron,
      timezone = excluded.timezone,
      catch_up = excluded.catch_up,
      input = excluded.input,
      next_tick_at = case
        when (s.cron, s.timezone) is distinct from (excluded.cron, excluded.timezone)
        then excluded.next_tick_at else s.next_tick_at end,
      updated_at = causeway_now()
    where (s.workflow_name, s.cron, s.timezone, s.catch_up, s.input)
      is distinct from (excluded.workflow_name, excluded.cron, excluded.timezone,
        excluded.catch_up, excluded.input)
    returning s.name`.execute(db);
  return rows.map((row) => row.name);
}
