/**
 * The one-statement settle of a worker's `complete` results (the resultWriter's
 * `writeResultsInOneStatement`), watched from outside in real runs:
 *
 * - the wake-up it sends for a step it makes ready (R5): a worker on that step's queue that
 *   would not poll for a minute claims it at once, and the notification is on the channel;
 * - its lease guard (R7): a holder whose lease ran out, or was taken again by another worker or
 *   by itself, completes its step late and nothing is written; the engine reports the result as
 *   stale (and does not fail writing it), and the new holder's completion is the one kept.
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, step, workflowRegistry } from '@causeway/workflow/internal';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import type { EventRequest } from '../../packages/engine/src/runtime/decision/event-request';
import { writeResultsInOneStatement } from '../../packages/engine/src/runtime/settle/one-statement-settle';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, type Gate, gate } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

/** Gates by `label:attempt` (or `label:step`), made by whichever side asks first. */
const gates = new Map<string, Gate>();
function gateFor(key: string): Gate {
  let found = gates.get(key);
  if (found === undefined) {
    found = gate();
    gates.set(key, found);
  }
  return found;
}

/** Two steps on two queues: `second` is made ready by `first`'s result. */
const wake = defineWorkflow({
  name: 'guard-wake',
  input: z.object({ label: z.string() }),
  steps: {
    first: step<{ label: string }>({
      queue: 'q-wake-first',
      run: async (ctx) => {
        await gateFor(`${ctx.input.label}:first`).promise;
        return 'first';
      },
    }),
    second: step({ queue: 'q-wake-second', after: ['first'], run: () => 'second' }),
  },
});

/**
 * Holds each attempt until the test opens its gate, whatever its signal says: a stalled
 * handler that returns after its lease is gone. A lease that ran out re-queues it at once.
 */
const stale = defineWorkflow({
  name: 'guard-stale',
  input: z.object({ label: z.string() }),
  steps: {
    only: step<{ label: string }>({
      queue: 'q-stale',
      maxAttempts: 5,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: async (ctx) => {
        await gateFor(`${ctx.input.label}:${ctx.attempt}`).promise;
        return { attempt: ctx.attempt };
      },
    }),
  },
});

const workflows = [wake, stale];

/** An engine whose JSON log lines the test reads. */
function loggedEngine(options: { pollIntervalMs?: number } = {}) {
  const lines: { msg?: string; taskId?: string | null; level: number }[] = [];
  const logger = pino(
    { level: 'info' },
    {
      write(chunk: string) {
        for (const line of chunk.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      },
    },
  );
  return { engine: testEngine(url(), { workflows, logger, ...options }), lines };
}

beforeAll(async () => {
  const setup = testEngine(url(), { workflows });
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  for (const open of gates.values()) open.open();
  await setDatabaseClockOffset(url(), 0);
});

interface TaskRow extends Record<string, unknown> {
  id: string;
  step: string;
  state: string;
  attempt: number;
  lease_holder: string | null;
  lease_epoch: string;
  output: unknown;
}

/** A workflow's task rows (not lease_expires_at: a holder renews it meanwhile). */
async function tasksOf(workflowId: string): Promise<TaskRow[]> {
  return query<TaskRow>(
    url(),
    `select id, step, state, attempt, lease_holder, lease_epoch, output
       from causeway_tasks where workflow_id = $1 order by step`,
    [workflowId],
  );
}

async function logOf(workflowId: string) {
  return query<{ step: string | null; reason: string; actor: string; attempt: number }>(
    url(),
    `select step, reason, actor, attempt from causeway_transitions
      where workflow_id = $1 and task_id is not null order by id`,
    [workflowId],
  );
}

describe('the settle statement wakes the queue of a step it makes ready (R5)', () => {
  it('a worker that polls once a minute claims the step at once, on the wake-up', async () => {
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: url() });
    await listener.connect();
    try {
      listener.on('notification', (message) => {
        if (message.channel === 'causeway_wakeup') heard.push(message.payload ?? '');
      });
      await listener.query('listen causeway_wakeup');
      const first = loggedEngine().engine;
      // The second step's worker: idle, it would look again only in a minute (past the
      // test's timeout); the first step's worker does not serve its queue, so the settle
      // statement queues the step (it chains only steps of the writer's own queues).
      const second = loggedEngine({ pollIntervalMs: 60_000 }).engine;
      await second.startWorker({ queues: ['q-wake-second'], concurrency: 1, sweeper: false });
      await first.startWorker({ queues: ['q-wake-first'], concurrency: 1, sweeper: false });
      const { workflow } = await first.submit('guard-wake', { label: 'wake' });
      await waitFor(async () => (await tasksOf(workflow.id))[0]?.state === 'leased', {
        description: 'the first step to be claimed',
      });
      // The second worker's claims at its start are done by now, and found nothing.
      expect((await tasksOf(workflow.id))[1]?.state).toBe('pending');
      expect(heard).not.toContain('q-wake-second');

      gateFor('wake:first').open();
      await waitFor(async () => (await tasksOf(workflow.id))[1]?.state === 'succeeded', {
        timeoutMs: 15_000,
        description: 'the second step to run on its wake-up',
      });
      // One wake-up for the second queue, sent when the first step's result made it ready.
      expect(heard.filter((queue) => queue === 'q-wake-second')).toHaveLength(1);
      expect(heard.indexOf('q-wake-second')).toBeGreaterThan(heard.indexOf('q-wake-first'));
      expect((await logOf(workflow.id)).map((row) => [row.step, row.reason, row.actor])).toEqual([
        ['first', 'submitted', 'client'],
        ['second', 'submitted', 'client'],
        ['first', 'lease_acquired', `worker:${first.holder}`],
        ['first', 'completed', `worker:${first.holder}`],
        ['second', 'upstream_succeeded', 'system'],
        ['second', 'lease_acquired', `worker:${second.holder}`],
        ['second', 'completed', `worker:${second.holder}`],
      ]);
    } finally {
      await listener.end();
    }
  });
});

type Reclaim = 'not yet' | 'by another worker' | 'by the same worker';

const apply = { definitions: workflowRegistry(workflows), leaseMs: 2_000, random: Math.random };

/** A worker's `complete` result for a task, fenced on `holder`'s lease of `epoch`. */
function completeRequest(
  holder: Engine,
  taskId: string,
  workflowId: string,
  epoch: number,
): EventRequest {
  return {
    taskId,
    workflowId,
    event: { type: 'complete', actor: { kind: 'worker', name: holder.holder } },
    fence: { taskId, holder: holder.holder, epoch },
    extra: { outputJson: JSON.stringify({ forged: true }) },
  };
}

describe('a stale holder completing its step writes nothing (R7)', () => {
  it.each<Reclaim>(['not yet', 'by another worker', 'by the same worker'])(
    'its lease ran out, the task re-claimed %s',
    async (reclaim) => {
      const label = `stale ${reclaim}`;
      const { engine: a, lines } = loggedEngine();
      const b = loggedEngine().engine;
      const { workflow } = await a.submit('guard-stale', { label });
      // With one slot, A cannot take the task again while its stalled attempt runs.
      const concurrency = reclaim === 'by the same worker' ? 2 : 1;
      const workerA = await a.startWorker({ queues: ['q-stale'], concurrency, sweeper: false });
      const held = await waitFor(async () => {
        const [task] = await tasksOf(workflow.id);
        return task?.state === 'leased' ? task : undefined;
      });
      expect(held).toMatchObject({ attempt: 1, lease_holder: a.holder });
      const staleAttempt = [...workerA.running].find(
        (attempt) => attempt.fence.epoch === Number(held.lease_epoch),
      );
      if (staleAttempt === undefined) throw new Error('no running attempt holds the lease');

      // Ten seconds on by the database clock: A's two-second lease has run out.
      await setDatabaseClockOffset(url(), 10_000);
      let claimer: Engine = a;
      const reclaimed = async (by: Engine) => {
        // The sweeper (its own pass, no sweeper runs in the workers) re-queues the task.
        expect(await b.sweep()).toBeGreaterThan(0);
        return waitFor(async () => {
          const [task] = await tasksOf(workflow.id);
          return task?.state === 'leased' && task.attempt === 2 && task.lease_holder === by.holder
            ? task
            : undefined;
        });
      };
      if (reclaim === 'by another worker') {
        await b.startWorker({ queues: ['q-stale'], concurrency: 1, sweeper: false });
        claimer = b;
      }
      const before = reclaim === 'not yet' ? held : await reclaimed(claimer);
      if (reclaim !== 'not yet') expect(before.lease_epoch).not.toBe(held.lease_epoch);
      if (reclaim === 'by another worker') {
        // The new claim's epoch with the old holder is no lease either (the fence is both).
        const forged = completeRequest(a, held.id, workflow.id, Number(before.lease_epoch));
        const settled = await writeResultsInOneStatement(a.db, apply, [forged]);
        expect(settled.decided.size).toBe(0);
        const full = await a.db.transaction().execute((tx) => applyEvents(tx, apply, [forged]));
        expect(full.outcomes.map((outcome) => outcome.kind)).toEqual(['stale']);
        expect(await tasksOf(workflow.id)).toEqual([before]);
      }

      // The stalled attempt returns and its result is written.
      gateFor(`${label}:1`).open();
      await waitFor(() => !workerA.running.has(staleAttempt), {
        description: 'the stalled handler to return',
      });
      await staleAttempt.written;
      expect(staleAttempt.writtenEdge).toBeNull();
      expect(await tasksOf(workflow.id)).toEqual([before]);
      // R56: the refused result is on record for its claim, whose attempt the ledger calls
      // stale (not yet swept: the log has not ended it, so it has no end or reason yet).
      const refused = await query<{ lease_epoch: string; holder: string }>(
        url(),
        'select lease_epoch, holder from causeway_stale_results where task_id = $1',
        [held.id],
      );
      expect(refused).toContainEqual({ lease_epoch: held.lease_epoch, holder: a.holder });
      const [first] = (await a.getWorkflow(workflow.id))?.tasks[0]?.attempts ?? [];
      expect(first).toMatchObject({ epoch: 1, holder: a.holder, outcome: 'stale' });
      if (reclaim === 'not yet') expect(first).toMatchObject({ endedAt: null, reason: null });
      expect((await logOf(workflow.id)).map((row) => row.reason)).not.toContain('completed');
      // Reported as stale, not as a result that could not be written (errors are level 50).
      const about = lines.filter((line) => line.taskId === held.id);
      expect(about.filter((line) => line.msg?.startsWith('stale writer'))).toHaveLength(1);
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);

      // The task's current holder completes it (after its re-claim, where it had none yet).
      if (reclaim === 'not yet') await reclaimed(claimer);
      gateFor(`${label}:2`).open();
      const [done] = await waitFor(async () => {
        const tasks = await tasksOf(workflow.id);
        return tasks[0]?.state === 'succeeded' ? tasks : undefined;
      });
      expect(done).toMatchObject({ attempt: 2, output: { attempt: 2 }, lease_holder: null });
      const completions = (await logOf(workflow.id)).filter((row) => row.reason === 'completed');
      expect(completions).toEqual([
        { step: 'only', reason: 'completed', actor: `worker:${claimer.holder}`, attempt: 2 },
      ]);
    },
  );
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
