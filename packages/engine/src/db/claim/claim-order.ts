import { priorityLimits } from '@causeway/workflow/internal';
import { type RawBuilder, sql } from 'kysely';

/**
 * The order claims take ready tasks in (R49): `run_at − priority`, written exactly as the
 * ready index's expression (migration 0028), so the planner walks that index in this order.
 */
export function claimAtSql(table: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`causeway_claim_at(${table}.run_at, ${table}.priority)`;
}

/**
 * The ready rows a claim at `now` may take, as conditions on the ready index: due (`run_at <=
 * now`), and so no later in claim order than `now` plus the largest priority. The second
 * bounds the index walk; the first is checked inside the index (run_at is one of its keys).
 */
export function dueSql(table: RawBuilder<unknown>, now: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`${table}.run_at <= ${now}
    and ${claimAtSql(table)} <= ${now} + ${sql.lit(priorityLimits.max)} * interval '1 second'`;
}

/**
 * A ready row lives in one of two partial indexes (migration 0030): plain, or keyed (R50). A
 * read over every ready row of a queue reads each with its condition and adds them up, so
 * both are index scans.
 */
export const readyHalves: readonly RawBuilder<unknown>[] = [
  sql`concurrency_key is null`,
  sql`concurrency_key is not null`,
];
