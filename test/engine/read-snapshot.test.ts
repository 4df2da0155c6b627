/**
 * `getWorkflow` and `explain` read several tables; read while a worker writes, they must
 * still show one moment: every state shown is the `to` of the last edge shown for it (R25 as
 * the caller sees it), never a state whose edge the history shown does not have yet.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';

const database = useTestDatabase();

const chain = defineWorkflow({
  name: 'snapshot-chain',
  input: z.object({ i: z.number().int() }),
  steps: {
    a: step({ run: () => 'a' }),
    b: step({ after: ['a'], run: () => 'b' }),
    c: step({ after: ['b'], run: () => 'c' }),
  },
});

describe('reads of one workflow', () => {
  it('show states that agree with the history they show, while a worker writes', async () => {
    const engine = testEngine(database().url, { workflows: [chain] });
    await engine.migrate();
    const n = 60;
    const submitted = await engine.submitMany(
      Array.from({ length: n }, (_, i) => ({ name: 'snapshot-chain', input: { i } })),
    );
    const ids = submitted.map((result) => result.workflow.id);
    const worker = await engine.startWorker({ concurrency: 4 });
    const disagreements: string[] = [];
    let reads = 0;
    let finished = 0;
    while (finished < n) {
      finished = 0;
      for (const id of ids) {
        const view = await engine.getWorkflow(id);
        if (view === undefined) throw new Error(`no workflow ${id}`);
        reads += 1;
        if (view.state === 'succeeded') finished += 1;
        const lastOfWorkflow = view.transitions.filter((row) => row.taskId === null).at(-1);
        if (lastOfWorkflow?.to !== view.state) {
          disagreements.push(`${id}: ${view.state}, last edge to ${lastOfWorkflow?.to}`);
        }
        for (const task of view.tasks) {
          if (task.transitions.at(-1)?.to !== task.state) {
            disagreements.push(
              `${task.id}: ${task.state}, last edge to ${task.transitions.at(-1)?.to}`,
            );
          }
        }
      }
    }
    await worker.stop();
    expect(reads).toBeGreaterThan(n);
    expect(disagreements).toEqual([]);
    expect(await logMismatches(database().url)).toEqual([]);
  });
});
