import type { ConcurrencyFacts, TaskState } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { arrayLiteral } from '../array-literal';
import type { Db } from '../database';
import { slotHoldingSql } from '../task-states';

type Holder = ConcurrencyFacts['holders'][number];

/** The key of a group and key in `slotHolderList`'s answer. */
export function slotKey(group: string, key: string): string {
  return `${group}\u0000${key}`;
}

/**
 * The tasks holding each concurrency key's slots (R50), oldest edge first, through the slot
 * holders' partial index: what a `concurrency_limited` blocker names.
 */
export async function slotHolderList(
  db: Db,
  keys: readonly { readonly group: string; readonly key: string }[],
): Promise<Map<string, Holder[]>> {
  const holders = new Map<string, Holder[]>();
  if (keys.length === 0) return holders;
  const { rows } = await sql<{
    concurrency_group: string;
    concurrency_key: string;
    id: string;
    workflow_id: string;
    step: string;
    state: TaskState;
    lease_holder: string | null;
    updated_at: Date;
  }>`
    select h.concurrency_group, h.concurrency_key, h.id, h.workflow_id, h.step, h.state,
      h.lease_holder, h.updated_at
    from unnest(
      ${arrayLiteral(keys.map((entry) => entry.group))}::text[],
      ${arrayLiteral(keys.map((entry) => entry.key))}::text[]
    ) as k(concurrency_group, concurrency_key)
    join causeway_tasks as h
      on h.concurrency_group = k.concurrency_group and h.concurrency_key = k.concurrency_key
        and ${slotHoldingSql(sql`h`)}
    order by h.updated_at, h.id`.execute(db);
  for (const row of rows) {
    const at = slotKey(row.concurrency_group, row.concurrency_key);
    const list = holders.get(at) ?? [];
    list.push({
      taskId: row.id,
      workflowId: row.workflow_id,
      step: row.step,
      state: row.state,
      holder: row.lease_holder,
      since: row.updated_at,
    });
    holders.set(at, list);
  }
  return holders;
}
