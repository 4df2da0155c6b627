/**
 * A worker's `startChildren` (R43) is admitted and planned before the transaction that writes
 * the children (`children-ahead.ts`), and the decision uses that only while the step holds the
 * same lease in the same replay round and has no deadline; otherwise it admits them again under
 * its locks. Both ways must write the same children: here one parent without a deadline (ahead)
 * and one with (in the transaction) start the same children, and their rows and edges are
 * compared; then what the admission ahead gives for a step it must leave to the decision.
 */
import { workflowRegistry } from '@causeway/workflow/internal';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { applyContextOf } from '../../packages/engine/src/runtime/children/child-starts';
import { childrenAdmittedAhead } from '../../packages/engine/src/runtime/children/children-ahead';
import type { EventRequest } from '../../packages/engine/src/runtime/decision/event-request';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { finished, startChildren, workflow } from './children-support';

const database = useTestDatabase();

const child = workflow({ name: 'ahead-child', input: z.object({ n: z.number() }) })
  .step('work', { queue: 'ahead', run: (ctx) => ctx.input.n * 2 })
  .build();
const inputs = [{ n: 1 }, { n: 2 }, { n: 3 }];
const free = workflow({ name: 'ahead-free', input: z.object({}) })
  .step('fan', { queue: 'ahead', run: () => startChildren(child, inputs) })
  .build();
const bounded = workflow({ name: 'ahead-bounded', input: z.object({}), deadlineMs: 600_000 })
  .step('fan', { queue: 'ahead', run: () => startChildren(child, inputs) })
  .build();

/** Held at its start until the test lets it go, so that its lease can be read. */
let letGo: () => void = () => {};
const gate = new Promise<void>((resolve) => {
  letGo = resolve;
});
const heldRun = async () => {
  await gate;
  return startChildren(child, inputs);
};
const held = workflow({ name: 'ahead-held', input: z.object({}) })
  .step('fan', { queue: 'ahead-held', run: heldRun })
  .build();
const heldBounded = workflow({
  name: 'ahead-held-bounded',
  input: z.object({}),
  deadlineMs: 600_000,
})
  .step('fan', { queue: 'ahead-held', run: heldRun })
  .build();

/** A parent's children and their edges, without what differs by run (ids, times, the parent). */
async function childrenOf(url: string, parentId: string) {
  const rows = await query<Record<string, unknown>>(
    url,
    `select w.name, w.state, w.input, w.child_index, w.depth, w.detached, w.replaced,
        w.idempotency_key = t0.id || ':0:' || w.child_index as keyed,
        w.root_workflow_id = w.parent_workflow_id as rooted,
        (select jsonb_agg(jsonb_build_array(tr.step, tr.from_state, tr.to_state, tr.reason,
            tr.actor = 'parent:' || t0.id, tr.detail - 'parentWorkflowId') order by tr.id)
          from causeway_transitions as tr where tr.workflow_id = w.id) as edges
      from causeway_workflows as w
      join causeway_tasks as t0 on t0.id = w.parent_task_id
      where w.parent_workflow_id = $1
      order by w.child_index`,
    [parentId],
  );
  return rows;
}

describe('children admitted ahead of their transaction', () => {
  it('are written as the transaction would have admitted them', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [child, free, bounded, held] });
    await engine.migrate();
    const worker = await engine.startWorker({ queues: ['ahead'], concurrency: 4 });
    const a = await engine.submit('ahead-free', {});
    const b = await engine.submit('ahead-bounded', {});
    await finished(engine, a.workflow.id);
    await finished(engine, b.workflow.id);
    await worker.stop();
    const ahead = await childrenOf(url, a.workflow.id);
    expect(ahead).toHaveLength(3);
    expect(ahead.every((row) => row.keyed === true && row.rooted === true)).toBe(true);
    expect(ahead.map((row) => row.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(await childrenOf(url, b.workflow.id)).toEqual(ahead);
    const results = await query<{ output: unknown }>(
      url,
      `select output from causeway_tasks where workflow_id = any($1::uuid[]) order by workflow_id`,
      [[a.workflow.id, b.workflow.id]],
    );
    expect(results.map((row) => row.output)).toEqual([
      [2, 4, 6],
      [2, 4, 6],
    ]);
    await engine.close();
  });

  it('are left to the decision for another lease, a deadline or a refused child', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [child, held, heldBounded] });
    await engine.migrate();
    const worker = await engine.startWorker({ queues: ['ahead-held', 'ahead'], concurrency: 4 });
    const submitted = await engine.submit('ahead-held', {});
    const bounded = await engine.submit('ahead-held-bounded', {});
    const leases = await waitFor(async () => {
      const rows = await query<{
        id: string;
        workflow_id: string;
        lease_holder: string;
        lease_epoch: string;
      }>(
        url,
        `select id, workflow_id, lease_holder, lease_epoch from causeway_tasks
          where workflow_id = any($1::uuid[]) and state = 'leased'`,
        [[submitted.workflow.id, bounded.workflow.id]],
      );
      return rows.length === 2 ? rows : undefined;
    });
    const leased = leases.find((row) => row.workflow_id === submitted.workflow.id);
    const leasedBounded = leases.find((row) => row.workflow_id === bounded.workflow.id);
    if (leased === undefined || leasedBounded === undefined) throw new Error('no leased steps');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
    const apply = applyContextOf(workflowRegistry([child, held, heldBounded]), 30_000);
    const request = (
      epoch: number,
      children: readonly unknown[],
      task: typeof leased = leased,
    ): EventRequest => ({
      taskId: task.id,
      workflowId: task.workflow_id,
      fence: { taskId: task.id, holder: task.lease_holder, epoch },
      event: {
        type: 'start_children',
        actor: { kind: 'worker', name: task.lease_holder },
        count: children.length,
      },
      extra: {
        children: {
          workflow: 'ahead-child',
          inputs: children,
          tolerate: null,
          single: false,
          detached: false,
          maxChildren: 10,
        },
      },
    });
    const epoch = Number(leased.lease_epoch);
    let answers: readonly EventRequest[];
    try {
      answers = await childrenAdmittedAhead(db, apply, [
        request(epoch, inputs),
        request(epoch + 1, inputs),
        request(epoch, [{ n: 1 }, { n: 'two' }]),
        request(Number(leasedBounded.lease_epoch), inputs, leasedBounded),
      ]);
    } finally {
      await db.destroy();
    }
    const [admitted, otherLease, refused, withDeadline] = answers;
    const start = admitted?.extra?.children?.ahead?.start;
    expect(start?.children.map((prepared) => prepared.idempotencyKey)).toEqual(
      inputs.map((_, index) => `${leased.id}:0:${index}`),
    );
    expect(start?.planned?.plan.workflows).toHaveLength(3);
    expect(otherLease?.extra?.children?.ahead).toBeUndefined();
    expect(refused?.extra?.children?.ahead).toBeUndefined();
    expect(withDeadline?.extra?.children?.ahead).toBeUndefined();
    // Nothing is written ahead: the children exist only once the decision writes them.
    expect(
      await query(
        url,
        'select 1 from causeway_workflows where parent_workflow_id = any($1::uuid[])',
        [[submitted.workflow.id, bounded.workflow.id]],
      ),
    ).toEqual([]);
    letGo();
    expect((await finished(engine, submitted.workflow.id))?.state).toBe('succeeded');
    expect((await finished(engine, bounded.workflow.id))?.state).toBe('succeeded');
    await worker.stop();
    await engine.close();
  });
});
