/**
 * R56: every claim of a task is an attempt, read back by `getWorkflow` (and `explain`) equal
 * to what the stored rows say (test/helpers/attempt-log.ts), with the epochs equal to the
 * task's `lease_epoch`: through retries, an expired lease the sweeper took, a result that came
 * after its lease was lost (stale: recorded, nothing else changed), and an operator's replay.
 * Retention removes the recorded results with their workflow (R59). Real engines on a real
 * database; the database clock is moved to expire a lease.
 */
import type { Engine } from '@causeway/engine';
import { defineWorkflow, StepError, step } from '@causeway/workflow';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { attemptsFromLog, storedLeaseEpoch } from '../helpers/attempt-log';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { dayMs } from './retention-support';
import { expectLogIsSound } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

type Act = 'complete' | 'refuse';
interface Hold {
  readonly promise: Promise<Act>;
  readonly release: (act: Act) => void;
}
/** Each run of the held step waits for the test to say how it ends, by `label#run`. */
const holds = new Map<string, Hold>();
function holdFor(key: string): Hold {
  let hold = holds.get(key);
  if (hold === undefined) {
    let release: (act: Act) => void = () => undefined;
    const promise = new Promise<Act>((resolve) => {
      release = resolve;
    });
    hold = { promise, release };
    holds.set(key, hold);
  }
  return hold;
}
const runs = new Map<string, number>();
const input = z.object({ label: z.string() });
const noBackoff = { initialIntervalMs: 0, maximumIntervalMs: 0 };

/** Fails twice (a transient error), then succeeds. */
const retried = defineWorkflow({
  name: 'ledger-retried',
  input,
  steps: {
    only: step<{ label: string }>({
      queue: 'q-ledger-retried',
      maxAttempts: 5,
      backoff: noBackoff,
      run: (ctx) => {
        if (ctx.attempt < 3) throw new StepError('unavailable', `attempt ${ctx.attempt} failed`);
        return { attempt: ctx.attempt };
      },
    }),
  },
});

/** Each run waits for the test, whatever its signal says: a stalled handler may return late. */
const held = defineWorkflow({
  name: 'ledger-held',
  input,
  steps: {
    only: step<{ label: string }>({
      queue: 'q-ledger-held',
      reentrant: true,
      maxAttempts: 5,
      backoff: noBackoff,
      run: async (ctx) => {
        const run = (runs.get(ctx.input.label) ?? 0) + 1;
        runs.set(ctx.input.label, run);
        const act = await holdFor(`${ctx.input.label}#${run}`).promise;
        if (act === 'refuse') throw new StepError('invalid_argument', 'the platform refused');
        return { run };
      },
    }),
  },
});

const workflows = [retried, held];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await setDatabaseClockOffset(url(), 0);
});

afterAll(async () => {
  for (const hold of holds.values()) hold.release('complete');
  await setDatabaseClockOffset(url(), 0);
});

async function taskOf(workflowId: string) {
  const [task] = await query<{ id: string; state: string; attempt: number; lease_holder: string }>(
    url(),
    'select id, state, attempt, lease_holder from causeway_tasks where workflow_id = $1',
    [workflowId],
  );
  return task;
}

/** The attempts `getWorkflow` answers for the workflow's one task. */
async function attemptsOf(cw: Engine, workflowId: string) {
  const view = await cw.getWorkflow(workflowId);
  return view?.tasks[0]?.attempts;
}

/** Everything the stored rows say of the workflow, but the stale results. */
async function storedState(workflowId: string) {
  return {
    tasks: await query(url(), 'select * from causeway_tasks where workflow_id = $1', [workflowId]),
    workflow: await query(url(), 'select * from causeway_workflows where id = $1', [workflowId]),
    log: await query(url(), 'select * from causeway_transitions where workflow_id = $1', [
      workflowId,
    ]),
  };
}

describe('the attempts of a task (R56)', () => {
  it('a step that failed twice and then succeeded has three settled attempts, as the log says', async () => {
    const cw = engine();
    await cw.startWorker({ queues: ['q-ledger-retried'], concurrency: 1, sweeper: false });
    const { workflow } = await cw.submit('ledger-retried', { label: 'retried' });
    const task = await waitFor(async () => {
      const found = await taskOf(workflow.id);
      return found?.state === 'succeeded' ? found : undefined;
    });
    const attempts = await attemptsOf(cw, workflow.id);
    expect(attempts).toEqual(await attemptsFromLog(url(), task.id));
    expect(
      attempts?.map(({ attempt, epoch, holder, outcome, reason, refusedAt }) => ({
        attempt,
        epoch,
        holder,
        outcome,
        reason,
        refusedAt,
      })),
    ).toEqual(
      [1, 2, 3].map((n) => ({
        attempt: n,
        epoch: n,
        holder: cw.holder,
        outcome: 'settled',
        reason: n < 3 ? 'retry_scheduled' : 'completed',
        refusedAt: null,
      })),
    );
    for (const attempt of attempts ?? []) {
      expect(attempt.endedAt?.getTime()).toBeGreaterThanOrEqual(attempt.leasedAt.getTime());
    }
    expect(attempts?.at(-1)?.epoch).toBe(await storedLeaseEpoch(url(), task.id));
  });

  it('an expired lease, a late result refused as stale, and a replay: epochs keep counting', async () => {
    const label = 'expired';
    const a = engine();
    const b = engine();
    const workerA = await a.startWorker({
      queues: ['q-ledger-held'],
      concurrency: 1,
      sweeper: false,
    });
    const { workflow } = await a.submit('ledger-held', { label });
    const first = await waitFor(async () => {
      const found = await taskOf(workflow.id);
      return found?.state === 'leased' ? found : undefined;
    });
    expect(await attemptsOf(a, workflow.id)).toEqual([
      expect.objectContaining({ attempt: 1, epoch: 1, holder: a.holder, outcome: 'running' }),
    ]);
    expect((await attemptsOf(a, workflow.id))?.[0]).toMatchObject({ endedAt: null, reason: null });
    const stalled = [...workerA.running].find((attempt) => attempt.fence.epoch === 1);
    if (stalled === undefined) throw new Error('no running attempt holds the first lease');

    // Ten seconds on by the database clock: A's two-second lease has run out; B's sweeper
    // takes the task (reentrant: queued again) while A's handler is still stalled.
    await setDatabaseClockOffset(url(), 10_000);
    expect(await b.sweep()).toBeGreaterThan(0);
    expect((await attemptsOf(b, workflow.id))?.[0]).toMatchObject({
      outcome: 'lease_lost',
      reason: 'lease_expired',
      refusedAt: null,
    });
    await b.startWorker({ queues: ['q-ledger-held'], concurrency: 1, sweeper: false });
    await waitFor(async () => (await taskOf(workflow.id))?.lease_holder === b.holder);
    holdFor(`${label}#2`).release('refuse');
    await waitFor(async () => (await taskOf(workflow.id))?.state === 'dead');

    // A's stalled handler returns: its result is refused, recorded, and changes nothing else.
    const before = await storedState(workflow.id);
    holdFor(`${label}#1`).release('complete');
    await waitFor(() => !workerA.running.has(stalled), { description: 'the stalled handler' });
    await stalled.written;
    expect(stalled.writtenEdge).toBeNull();
    const stale = await query<{ lease_epoch: string; holder: string; refused_at: Date }>(
      url(),
      'select lease_epoch, holder, refused_at from causeway_stale_results where task_id = $1',
      [first.id],
    );
    expect(stale).toEqual([{ lease_epoch: '1', holder: a.holder, refused_at: expect.any(Date) }]);
    expect(await storedState(workflow.id)).toEqual(before);
    const afterStale = await attemptsOf(b, workflow.id);
    expect(afterStale).toEqual(await attemptsFromLog(url(), first.id));
    expect(
      afterStale?.map(({ epoch, holder, outcome, reason }) => [epoch, holder, outcome, reason]),
    ).toEqual([
      [1, a.holder, 'stale', 'lease_expired'],
      [2, b.holder, 'settled', 'non_retryable_error'],
    ]);
    expect(afterStale?.[0]?.refusedAt).toEqual(stale[0]?.refused_at);
    const explained = await a.explain(workflow.id);
    expect(explained.text).toContain(
      `only: attempt 1 by ${a.holder} finished after its lease was lost; its result was refused; check the platform for its effect`,
    );

    // The operator replays the dead task: the attempt counter starts again, the epoch does not.
    await b.replayTask(first.id, { operator: 'alice', reason: 'platform fixed' });
    holdFor(`${label}#3`).release('complete');
    await waitFor(async () => (await taskOf(workflow.id))?.state === 'succeeded');
    const attempts = await attemptsOf(a, workflow.id);
    expect(attempts).toEqual(await attemptsFromLog(url(), first.id));
    expect(
      attempts?.map(({ attempt, epoch, outcome, reason }) => [attempt, epoch, outcome, reason]),
    ).toEqual([
      [1, 1, 'stale', 'lease_expired'],
      [2, 2, 'settled', 'non_retryable_error'],
      [1, 3, 'settled', 'completed'],
    ]);
    expect(attempts?.at(-1)?.epoch).toBe(await storedLeaseEpoch(url(), first.id));
    await expectLogIsSound(url());
  });

  it('retention removes the recorded results with their workflow (R59)', async () => {
    const [kept] = await query<{ workflow_id: string }>(
      url(),
      'select workflow_id from causeway_stale_results',
    );
    expect(kept).toBeDefined();
    // Three days on: every workflow of this file finished more than a day before.
    await setDatabaseClockOffset(url(), 3 * dayMs);
    const cw = engine();
    await cw.purgeFinished({ olderThanMs: dayMs, operator: 'ops', reason: 'keep one day' });
    expect(
      await query(url(), 'select id from causeway_workflows where id = $1', [kept?.workflow_id]),
    ).toEqual([]);
    expect(await query(url(), 'select * from causeway_stale_results')).toEqual([]);
  });
});
