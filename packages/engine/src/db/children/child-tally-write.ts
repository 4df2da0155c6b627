import { sql, type Transaction } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { ChildTallyRecord } from '../rows';
import type { CausewayDatabase } from '../schema';

/**
 * Writes the tally of steps' children (R45): set when a step starts them, moved by the child
 * edges that end or reopen a child. The caller holds the steps' workflow locks, so the values
 * are absolute, never read-modify-write races.
 */
export async function childTallyWrite(
  tx: Transaction<CausewayDatabase>,
  rows: readonly ({ readonly taskId: string } & ChildTallyRecord)[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    update causeway_tasks as t
    set children_total = v.total, children_succeeded = v.succeeded,
      children_failed = v.failed, children_allowed_failures = v.allowed,
      children_output = v.output
    from unnest(${arrayLiteral(rows.map((row) => row.taskId))}::uuid[],
      ${arrayLiteral(rows.map((row) => row.total))}::integer[],
      ${arrayLiteral(rows.map((row) => row.succeeded))}::integer[],
      ${arrayLiteral(rows.map((row) => row.failed))}::integer[],
      ${arrayLiteral(rows.map((row) => row.allowedFailures))}::integer[],
      ${arrayLiteral(rows.map((row) => row.output))}::text[])
      as v(task_id, total, succeeded, failed, allowed, output)
    where t.id = v.task_id`.execute(tx);
}
