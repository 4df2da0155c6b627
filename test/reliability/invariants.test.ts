import { defineWorkflow, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { checkInvariants } from './support/invariants';
import { createLedger, LedgerWriter } from './support/ledger';

const database = useTestDatabase();

const pair = defineWorkflow({
  name: 'inv-pair',
  input: z.object({ n: z.number() }),
  steps: {
    first: step({ run: () => 1 }),
    second: step({ after: ['first'], reentrant: false, run: () => 2 }),
  },
});

/** The checker itself: silent on a clean drain, loud on each kind of damage. */
describe('the reliability invariants checker', () => {
  it('passes a drained run and names every violation planted afterwards', async () => {
    const url = database().url;
    const ledger = new LedgerWriter(url);
    const engine = testEngine(url, { workflows: [pair] });
    await engine.migrate();
    await createLedger(url);
    const results = await engine.submitMany(
      [0, 1, 2].map((n) => ({ name: 'inv-pair', input: { n } })),
    );
    const ids = results.map((result) => result.workflow.id);
    const worker = await engine.startWorker({ concurrency: 2 });
    await waitFor(
      async () =>
        (await query(url, "select 1 from causeway_workflows where state <> 'succeeded'")).length ===
        0,
      { description: 'the drain' },
    );
    await worker.stop();
    const tasks = await query<{ id: string; workflow_id: string; step: string }>(
      url,
      "select id, workflow_id, step from causeway_tasks where step = 'second' order by id",
    );
    const context = (task: (typeof tasks)[number], attempt: number) =>
      ({ taskId: task.id, workflowId: task.workflow_id, step: task.step, attempt }) as never;
    // b's workflow is not the one whose state the damage sets directly.
    const [a, b] = tasks.filter((task) => task.workflow_id !== ids[0]);
    if (a === undefined || b === undefined) throw new Error('no tasks');
    await ledger.record('start', context(a, 1), false);
    await ledger.record('effect', context(a, 1), false);

    const clean = await checkInvariants({
      databaseUrl: url,
      submitted: ids,
      ledger: true,
      effects: [{ idempotencyKey: 'k1' }, { idempotencyKey: 'k2' }],
    });
    expect(clean.violations).toEqual({});
    expect(clean.counts).toMatchObject({
      workflows: 3,
      tasks: 6,
      workflowsByState: { succeeded: 3 },
      handlerStarts: 1,
      effectsStarted: 1,
      platformEffects: 2,
    });

    // The damage: a second start of the same attempt, a re-run after the effect started, an
    // unknown submitted id, a parent off its children, a state off its log, a doubled effect.
    await ledger.record('start', context(b, 1), false);
    await ledger.record('start', context(b, 1), false);
    await ledger.record('start', context(a, 2), false);
    await ledger.close();
    const unknown = '00000000-0000-4000-8000-000000000000';
    await query(url, "update causeway_workflows set state = 'running' where id = $1", [ids[0]]);
    await query(url, "update causeway_tasks set state = 'dead' where id = $1", [b.id]);
    const damaged = await checkInvariants({
      databaseUrl: url,
      submitted: [...ids, unknown],
      ledger: true,
      effects: [{ idempotencyKey: 'k1' }, { idempotencyKey: 'k1' }],
    });
    expect(Object.keys(damaged.violations).sort()).toEqual([
      'effectsPerKeyOverOne',
      'handlerStartedTwice',
      'logMismatches',
      'missingWorkflows',
      'nonReentrantRanAgainAfterEffect',
      'parentNotAggregateOfChildren',
      'workflowsInDisallowedState',
    ]);
    expect(damaged.violations.missingWorkflows).toEqual([{ id: unknown }]);
    expect(damaged.violations.effectsPerKeyOverOne).toEqual([{ key: 'k1', effects: 2 }]);
    expect(damaged.violations.handlerStartedTwice).toEqual([
      expect.objectContaining({ task_id: b.id, attempt: 1 }),
    ]);
    expect(damaged.violations.nonReentrantRanAgainAfterEffect).toEqual([
      expect.objectContaining({
        task_id: a.id,
        effect_attempt: 1,
        later_attempt: 2,
        ended_by: 'completed',
      }),
    ]);
    // Two workflows are off their children: the one set running, and b's, whose task went dead.
    expect(damaged.violations.parentNotAggregateOfChildren).toHaveLength(2);
  });
});
