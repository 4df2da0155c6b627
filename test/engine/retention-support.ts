import type { Engine, SubmitOptions } from '@causeway/engine';
import {
  aggregateWorkflowState,
  StepError,
  type TaskState,
  workflow,
} from '@causeway/workflow/internal';
import { vi } from 'vitest';
import { z } from 'zod';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

/** Retention fixtures: a one-step workflow and one that waits for an event (live for days). */
export const dayMs = 24 * 3_600_000;

export const note = workflow({
  name: 'retention-note',
  input: z.object({ n: z.number() }),
  deadlineMs: 300 * dayMs,
})
  .step('render', { queue: 'q-retention', run: (ctx) => ({ n: ctx.input.n }) })
  .build();

export const approval = workflow({
  name: 'retention-approval',
  input: z.object({ key: z.string() }),
  deadlineMs: 300 * dayMs,
})
  .event('approve', {
    name: 'retention.approved',
    key: (ctx) => ctx.input.key,
    timeoutMs: 300 * dayMs,
  })
  .step('publish', { after: ['approve'], queue: 'q-retention', run: () => ({ done: true }) })
  .build();

export const retentionWorkflows = [note, approval];

/** Dies at its first step, so its second step stays `pending` for good (R59). */
export const doomed = workflow({
  name: 'retention-doomed',
  input: z.object({ n: z.number() }),
  deadlineMs: 300 * dayMs,
})
  .step('refuse', {
    queue: 'q-retention',
    run: (): { n: number } => {
      throw new StepError('invalid_argument', 'refused on purpose');
    },
  })
  .step('after', { after: ['refuse'], queue: 'q-retention', run: () => ({ done: true }) })
  .build();

/** Waits for its event only after a first step on a queue the test serves when it chooses. */
export const relay = workflow({
  name: 'retention-relay',
  input: z.object({ key: z.string() }),
  deadlineMs: 300 * dayMs,
})
  .step('prepare', { queue: 'q-retention-late', run: () => ({ ready: true }) })
  .event('approve', {
    after: ['prepare'],
    name: 'retention.approved',
    key: (ctx) => ctx.input.key,
    timeoutMs: 300 * dayMs,
  })
  .build();

/**
 * Submits with ids made as if the engine's clock read `daysAhead` days from now: a workflow id
 * carries its creation millisecond, so this is what puts it in that day's log partition (as a
 * process with a skewed clock would).
 */
export async function submitOnDay(
  engine: Engine,
  daysAhead: number,
  name: string,
  input: unknown,
  options?: SubmitOptions,
): Promise<string> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + daysAhead * dayMs });
  try {
    return (await engine.submit(name, input, options)).workflow.id;
  } finally {
    vi.useRealTimers();
  }
}

/** The log partition each workflow's rows are in. */
export async function partitionsOf(
  url: string,
  workflowIds: readonly string[],
): Promise<Map<string, string>> {
  const rows = await query<{ workflow_id: string; partition: string }>(
    url,
    `select distinct workflow_id::text, tableoid::regclass::text as partition
       from causeway_transitions where workflow_id = any($1::uuid[])`,
    [workflowIds],
  );
  return new Map(rows.map((row) => [row.workflow_id, row.partition]));
}

/** What a purge could touch, to compare before and after one that must change nothing. */
export async function storedCounts(url: string): Promise<Record<string, number>> {
  const [row] = await query<Record<string, number>>(
    url,
    `select (select count(*)::int from causeway_workflows) as workflows,
            (select count(*)::int from causeway_tasks) as tasks,
            (select count(*)::int from causeway_transitions) as log,
            (select count(*)::int from causeway_transition_partitions) as partitions,
            (select count(*)::int from causeway_retention_runs) as runs`,
  );
  return row ?? {};
}

/** Every remaining workflow whose state is not the aggregation of its tasks' states. */
export async function parentMismatches(url: string): Promise<Record<string, unknown>[]> {
  const rows = await query<{ id: string; state: string; tasks: TaskState[] }>(
    url,
    `select w.id::text, w.state, array_agg(t.state order by t.step) as tasks
       from causeway_workflows w join causeway_tasks t on t.workflow_id = w.id
      group by w.id, w.state`,
  );
  return rows.filter((row) => aggregateWorkflowState(row.tasks) !== row.state);
}

/** Waits until every one of the workflows has succeeded. */
export async function untilSucceeded(
  url: string,
  workflowIds: readonly string[],
  timeoutMs = 5_000,
): Promise<void> {
  await waitFor(
    async () => {
      const rows = await query<{ n: number }>(
        url,
        `select count(*)::int as n from causeway_workflows
          where id = any($1::uuid[]) and state = 'succeeded'`,
        [workflowIds],
      );
      return rows[0]?.n === workflowIds.length;
    },
    { timeoutMs },
  );
}
