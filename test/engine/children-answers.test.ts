/**
 * An operation's answer is the task or workflow as the call's transaction left it (R15, R26),
 * children's consequences included: a cancel of a step whose children have not started yet
 * cancels them before they start, and the step ends `cancelled` (`children_cancelled`, R46) in
 * the same transaction; the answer says so, not the `cancel_requested` the step passed through.
 */
import { workflow } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { startChildren } from './children-support';

const database = useTestDatabase();

/** Its step never runs: no worker serves its queue. */
const child = workflow({ name: 'answers-child', input: z.object({}) })
  .step('work', { queue: 'answers-idle', run: () => null })
  .build();
const parent = workflow({ name: 'answers-parent', input: z.object({}) })
  .step('fan', { queue: 'answers', run: () => startChildren(child, [{}, {}]) })
  .build();

describe('answers of operations on a step awaiting children', () => {
  it('a cancel answers the state its children left the step and workflow in', async () => {
    const url = database().url;
    const engine = testEngine(url, { workflows: [child, parent] });
    await engine.migrate();
    const worker = await engine.startWorker({ queues: ['answers'], concurrency: 1 });
    const first = await engine.submit('answers-parent', {});
    const second = await engine.submit('answers-parent', {});
    const fanOf = async (id: string) =>
      waitFor(async () => {
        const fan = (await engine.getWorkflow(id))?.tasks[0];
        return fan?.state === 'awaiting_children' ? fan : undefined;
      });
    const [firstFan, secondFan] = await Promise.all([
      fanOf(first.workflow.id),
      fanOf(second.workflow.id),
    ]);
    await worker.stop();

    expect(await engine.cancelWorkflow(first.workflow.id)).toEqual({
      workflowId: first.workflow.id,
      state: 'cancelled',
      changed: true,
    });
    expect(await engine.cancelTask(secondFan.id)).toEqual({
      taskId: secondFan.id,
      state: 'cancelled',
      changed: true,
      reason: 'children_cancelled',
    });
    for (const fan of [firstFan, secondFan]) {
      const done = await engine.getWorkflow(fan.workflowId);
      expect(done?.tasks[0]?.transitions.slice(-2).map((row) => row.reason)).toEqual([
        'cancel_requested',
        'children_cancelled',
      ]);
    }
    expect(await logMismatches(url)).toEqual([]);
  });
});
