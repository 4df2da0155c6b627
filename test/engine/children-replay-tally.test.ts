/**
 * A step's tally (R45) counts its children anew when the step is replayed (R47). When one
 * operator call replays both the dead step and its dead child (a bulk requeue by the reason
 * they share), the child's reopening is in that count already, and must not be taken off it a
 * second time: the tally stays equal to the children's states.
 */
import { workflow } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startChildren } from './children-support';

const database = useTestDatabase();

/**
 * Starts its effect and runs until the test ends: its worker stops without releasing it, and
 * its lease and its deadline pass meanwhile.
 */
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});
const child = workflow({ name: 'tally-child', input: z.object({}) })
  .step('work', {
    queue: 'tally',
    reentrant: true,
    maxAttempts: 3,
    run: async (ctx) => {
      await ctx.boundary();
      await held;
    },
  })
  .build();
const parent = workflow({ name: 'tally-parent', input: z.object({}), deadlineMs: 60_000 })
  .step('fan', { queue: 'tally', run: () => startChildren(child, [{}]) })
  .build();

describe('a bulk requeue of a dead step and its dead child together', () => {
  it('leaves the tally equal to the children', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [child, parent], leaseMs: 2_000 });
    await engine.migrate();
    const worker = await engine.startWorker({ queues: ['tally'], concurrency: 2 });
    const { workflow: submitted } = await engine.submit('tally-parent', {});
    await waitFor(async () => {
      const rows = await query(
        url,
        `select 1 from causeway_workflows as w join causeway_tasks as t on t.workflow_id = w.id
          where w.parent_workflow_id = $1 and t.state = 'leased' and t.effect_started`,
        [submitted.id],
      );
      return rows.length === 1;
    });
    await worker.stop({ drainMs: 0 });
    // Past the shared deadline and the child's lease: the sweeper ends both, each by its deadline.
    await setDatabaseClockOffset(url, 120_000);
    await engine.sweep();
    const dead = await query<{ step: string; reason: string }>(
      url,
      `select t.step, (select reason from causeway_transitions as l where l.task_id = t.id
          order by l.id desc limit 1) as reason
         from causeway_tasks as t join causeway_workflows as w on w.id = t.workflow_id
        where (w.id = $1 or w.parent_workflow_id = $1) and t.state = 'dead' order by t.step`,
      [submitted.id],
    );
    expect(dead).toEqual([
      { step: 'fan', reason: 'deadline_exceeded' },
      { step: 'work', reason: 'deadline_exceeded' },
    ]);

    const answers = await engine.requeueDead({
      reasonCode: 'deadline_exceeded',
      from: new Date(0),
      to: new Date(Date.now() + 86_400_000),
      operator: 'alice',
      reason: 'deadline was too short',
    });
    expect(answers.map((answer) => answer.state).sort()).toEqual(['awaiting_children', 'queued']);
    const tally = await query(
      url,
      `select children_total, children_succeeded, children_failed from causeway_tasks
        where workflow_id = $1`,
      [submitted.id],
    );
    expect(tally).toEqual([{ children_total: 1, children_succeeded: 0, children_failed: 0 }]);
    release();
    expect(await logMismatches(url)).toEqual([]);
  });
});
