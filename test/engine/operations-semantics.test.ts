import { type Engine, EngineError } from '@causeway/engine';
import {
  awaitReceipt,
  defineWorkflow,
  type ErrorCategory,
  StepError,
  step,
} from '@causeway/workflow';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { databaseTime, expectLogIsSound, type Gate, gate, reasons } from './semantics-support';

/**
 * Operations (R12–R15, R23, R26): cancel, workflow cancel, replay, bulk requeue, receipts.
 * Every answer says the state the task is in; a repeat answers the same and writes nothing.
 */
const database = useTestDatabase();
const url = () => database().url;

const gates = new Map<string, Gate>();
const started = new Set<string>();
const pastBoundary = new Set<string>();

/** `first` waits for the test's gate, then crosses a side-effect boundary; `second` follows. */
const gated = defineWorkflow({
  name: 'ops-gated',
  input: z.object({ label: z.string() }),
  steps: {
    first: step<{ label: string }>({
      queue: 'q-ops',
      run: async (ctx) => {
        started.add(ctx.input.label);
        await gates.get(ctx.input.label)?.promise;
        await ctx.boundary();
        pastBoundary.add(ctx.input.label);
        return 'first';
      },
    }),
    second: step({ queue: 'q-ops', after: ['first'], run: () => 'second' }),
  },
});

/** Fails with `category` until the test heals its label; one attempt per round. */
const healed = new Set<string>();
const fragile = defineWorkflow({
  name: 'ops-fragile',
  input: z.object({ label: z.string(), category: z.string() }),
  steps: {
    first: step<{ label: string; category: string }>({
      queue: 'q-fragile',
      maxAttempts: 1,
      run: (ctx) => {
        if (healed.has(ctx.input.label)) return { healed: true };
        throw new StepError(ctx.input.category as ErrorCategory, `${ctx.input.category} failure`);
      },
    }),
    second: step({ queue: 'q-fragile', after: ['first'], run: () => 'second' }),
  },
});

/** Always fails with `category` on its only attempt (for bulk requeue). */
const brittle = defineWorkflow({
  name: 'ops-brittle',
  input: z.object({ label: z.string(), category: z.string() }),
  steps: {
    only: step<{ label: string; category: string }>({
      queue: 'q-brittle',
      maxAttempts: 1,
      run: (ctx) => {
        throw new StepError(ctx.input.category as ErrorCategory, `${ctx.input.category} failure`);
      },
    }),
  },
});

/** The effect is accepted by an external system; the receipt comes later. */
function receiptWorkflow(name: string, reentrant: boolean) {
  return defineWorkflow({
    name,
    input: z.object({ label: z.string() }),
    steps: {
      submit: step<{ label: string }>({
        queue: 'q-receipt',
        reentrant,
        run: async (ctx) => {
          await ctx.boundary();
          return awaitReceipt({ receiptId: `receipt-${ctx.input.label}`, timeoutMs: 60_000 });
        },
      }),
      confirm: step({ queue: 'q-receipt', after: ['submit'], run: () => 'confirmed' }),
    },
  });
}
const receipt = receiptWorkflow('ops-receipt', false);
const receiptReentrant = receiptWorkflow('ops-receipt-reentrant', true);

/** A step with no boundary: it returns, submits for a receipt, or honours ctx.signal. */
const signalReasons = new Map<string, unknown>();
const unbounded = defineWorkflow({
  name: 'ops-unbounded',
  input: z.object({ label: z.string(), mode: z.enum(['return', 'receipt', 'honor']) }),
  steps: {
    only: step<{ label: string; mode: 'return' | 'receipt' | 'honor' }>({
      queue: 'q-ops',
      run: async (ctx) => {
        const { label, mode } = ctx.input;
        started.add(label);
        if (mode === 'honor') {
          await new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', () => {
              signalReasons.set(label, ctx.signal.reason);
              reject(ctx.signal.reason);
            });
          });
        }
        await gates.get(label)?.promise;
        if (mode === 'receipt') return awaitReceipt({ receiptId: `r-${label}`, timeoutMs: 60_000 });
        return 'done';
      },
    }),
  },
});

const workflows = [gated, fragile, brittle, receipt, receiptReentrant, unbounded];

function engine(): Engine {
  return testEngine(url(), { workflows });
}

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  for (const open of gates.values()) open.open();
  await setDatabaseClockOffset(url(), 0);
});

async function transitionCount(): Promise<number> {
  const rows = await query<{ n: number }>(
    url(),
    'select count(*)::int as n from causeway_transitions',
  );
  return rows[0]?.n ?? -1;
}

async function view(cw: Engine, workflowId: string) {
  const found = await cw.getWorkflow(workflowId);
  if (found === undefined) throw new Error(`no workflow ${workflowId}`);
  return found;
}

function taskOf(found: Awaited<ReturnType<typeof view>>, stepName: string) {
  const task = found.tasks.find((candidate) => candidate.step === stepName);
  if (task === undefined) throw new Error(`no step ${stepName}`);
  return task;
}

async function waitForState(cw: Engine, workflowId: string, state: string) {
  return waitFor(
    async () => {
      const found = await view(cw, workflowId);
      return found.state === state ? found : undefined;
    },
    { description: `workflow ${workflowId} to be ${state}` },
  );
}

/** Submits a gated workflow and waits until a worker is inside `first`. */
async function startGated(cw: Engine, label: string) {
  gates.set(label, gate());
  const submitted = await cw.submit('ops-gated', { label });
  const worker = await cw.startWorker({ queues: ['q-ops'], concurrency: 2 });
  await waitFor(() => started.has(label), { description: `${label} to start` });
  return { workflowId: submitted.workflow.id, worker };
}

describe('cancel (R12–R15)', () => {
  it('a queued task is cancelled before start; its pending downstream follows; a repeat writes nothing', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('ops-gated', { label: 'queued-cancel' });
    const first = taskOf(await view(cw, workflow.id), 'first');
    expect(first.state).toBe('queued');

    expect(await cw.cancelTask(first.id, { operator: 'alice' })).toEqual({
      taskId: first.id,
      state: 'cancelled',
      changed: true,
      reason: 'cancelled_before_start',
    });
    const after = await view(cw, workflow.id);
    expect(after.state).toBe('cancelled');
    expect(taskOf(after, 'first').transitions.at(-1)).toMatchObject({
      from: 'queued',
      to: 'cancelled',
      reason: 'cancelled_before_start',
      actor: 'operator:alice',
    });
    expect(taskOf(after, 'second').transitions.at(-1)).toMatchObject({
      from: 'pending',
      to: 'cancelled',
      reason: 'cancelled_before_start',
      actor: 'operator:alice',
      detail: { cascadedFrom: 'first' },
    });

    const rows = await transitionCount();
    const repeat = await cw.cancelTask(first.id, { operator: 'alice' });
    expect(repeat).toMatchObject({
      taskId: first.id,
      state: 'cancelled',
      changed: false,
      reason: 'cancelled_before_start',
    });
    expect(await transitionCount()).toBe(rows);
  });

  it('a pending task is cancelled before start by a client', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('ops-gated', { label: 'pending-cancel' });
    const second = taskOf(await view(cw, workflow.id), 'second');
    expect(await cw.cancelTask(second.id)).toMatchObject({ state: 'cancelled', changed: true });
    const after = await view(cw, workflow.id);
    expect(taskOf(after, 'second').transitions.at(-1)).toMatchObject({
      from: 'pending',
      reason: 'cancelled_before_start',
      actor: 'client',
    });
    expect(taskOf(after, 'first').state).toBe('queued');
    expect(await cw.cancelWorkflow(workflow.id)).toMatchObject({
      state: 'cancelled',
      changed: true,
    });
  });

  it('a leased task becomes cancel_requested; the worker confirms at its next boundary', async () => {
    const cw = engine();
    const { workflowId, worker } = await startGated(cw, 'leased-cancel');
    const first = taskOf(await view(cw, workflowId), 'first');
    expect(first.state).toBe('leased');

    expect(await cw.cancelTask(first.id, { operator: 'alice' })).toEqual({
      taskId: first.id,
      state: 'cancel_requested',
      changed: true,
      reason: 'cancel_requested',
    });
    expect((await view(cw, workflowId)).state).toBe('cancel_requested');
    const rows = await transitionCount();
    expect(await cw.cancelTask(first.id, { operator: 'alice' })).toMatchObject({
      state: 'cancel_requested',
      changed: false,
      refusal: 'cancel_already_requested',
    });
    expect(await transitionCount()).toBe(rows);

    gates.get('leased-cancel')?.open();
    const done = await waitForState(cw, workflowId, 'cancelled');
    await worker.stop();
    expect(pastBoundary.has('leased-cancel')).toBe(false);
    const confirmed = taskOf(done, 'first');
    expect(reasons(confirmed.transitions)).toEqual([
      'submitted',
      'lease_acquired',
      'cancel_requested',
      'cancel_confirmed',
    ]);
    expect(confirmed.transitions.at(-1)).toMatchObject({
      from: 'cancel_requested',
      to: 'cancelled',
      actor: `worker:${cw.holder}`,
    });
    expect(taskOf(done, 'second').state).toBe('cancelled');
    expect(await cw.cancelTask(first.id)).toMatchObject({
      state: 'cancelled',
      changed: false,
      reason: 'cancel_confirmed',
    });
  });

  it('a cancel of a terminal task answers its state and changes nothing', async () => {
    const cw = engine();
    gates.set('terminal', gate());
    gates.get('terminal')?.open();
    const succeeded = await cw.submit('ops-gated', { label: 'terminal' });
    const dead = await cw.submit('ops-fragile', { label: 'terminal-dead', category: 'not_found' });
    const worker = await cw.startWorker({ queues: ['q-ops', 'q-fragile'], concurrency: 2 });
    await waitForState(cw, succeeded.workflow.id, 'succeeded');
    await waitForState(cw, dead.workflow.id, 'dead');
    await worker.stop();
    const rows = await transitionCount();
    const succeededTask = taskOf(await view(cw, succeeded.workflow.id), 'first');
    const deadTask = taskOf(await view(cw, dead.workflow.id), 'first');
    expect(await cw.cancelTask(succeededTask.id)).toMatchObject({
      state: 'succeeded',
      changed: false,
    });
    expect(await cw.cancelTask(deadTask.id, { operator: 'alice' })).toMatchObject({
      state: 'dead',
      changed: false,
    });
    expect(await cw.cancelWorkflow(succeeded.workflow.id)).toEqual({
      workflowId: succeeded.workflow.id,
      state: 'succeeded',
      changed: false,
    });
    expect(await transitionCount()).toBe(rows);
  });

  it('R15: the answer for a terminal task carries the reason it got there', async () => {
    const cw = engine();
    const dead = await cw.submit('ops-fragile', { label: 'reason-dead', category: 'conflict' });
    const worker = await cw.startWorker({ queues: ['q-fragile'], concurrency: 1 });
    await waitForState(cw, dead.workflow.id, 'dead');
    await worker.stop();
    const deadTask = taskOf(await view(cw, dead.workflow.id), 'first');
    const answer = await cw.cancelTask(deadTask.id);
    // "on a terminal task it returns that state and its reason": the reason code of the edge
    // that made it terminal is part of the answer.
    expect(answer).toMatchObject({
      state: 'dead',
      changed: false,
      reason: 'non_retryable_error',
      refusal: 'terminal_state',
    });
  });

  it('a cancel after the effect was submitted (awaiting_receipt) is too late and says so', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('ops-receipt', { label: 'late-cancel' });
    const worker = await cw.startWorker({ queues: ['q-receipt'], concurrency: 1 });
    const waiting = await waitFor(async () => {
      const task = taskOf(await view(cw, workflow.id), 'submit');
      return task.state === 'awaiting_receipt' ? task : undefined;
    });
    await worker.stop();
    const rows = await transitionCount();
    expect(await cw.cancelTask(waiting.id)).toMatchObject({
      state: 'awaiting_receipt',
      changed: false,
      refusal: 'effect_already_submitted',
    });
    expect(await transitionCount()).toBe(rows);
    expect(await cw.recordReceipt(waiting.id, { ok: true })).toMatchObject({ state: 'succeeded' });
  });
});

describe('cancel of a leased step without a boundary (R9, R13, R14)', () => {
  it.each([
    ['return', 'succeeded', 'cancel_after_submit'],
    ['receipt', 'awaiting_receipt', 'cancel_after_submit'],
    ['honor', 'cancelled', 'cancel_confirmed'],
  ] as const)('a step that %ss after the cancel ends %s (%s)', async (mode, state, reason) => {
    const cw = engine();
    const label = `unbounded-${mode}`;
    gates.set(label, gate());
    const { workflow } = await cw.submit('ops-unbounded', { label, mode });
    const worker = await cw.startWorker({ queues: ['q-ops'], concurrency: 1 });
    await waitFor(() => started.has(label));
    const task = taskOf(await view(cw, workflow.id), 'only');
    expect(await cw.cancelTask(task.id)).toMatchObject({
      state: 'cancel_requested',
      changed: true,
    });
    if (mode === 'honor') {
      // The failed renewal tells the step through its signal (R9).
      await waitFor(() => signalReasons.has(label), { description: 'the signal to abort' });
      expect(signalReasons.get(label)).toMatchObject({ reason: 'cancel_requested' });
    }
    gates.get(label)?.open();
    const done = await waitFor(async () => {
      const found = taskOf(await view(cw, workflow.id), 'only');
      return found.state === state ? found : undefined;
    });
    await worker.stop();
    expect(done.transitions.at(-1)).toMatchObject({
      from: 'cancel_requested',
      to: state,
      reason,
      actor: `worker:${cw.holder}`,
    });
    if (state === 'awaiting_receipt') {
      expect(await cw.recordReceipt(task.id, { ok: true })).toMatchObject({ state: 'succeeded' });
    }
  });
});

describe('unknown ids are not found and change nothing', () => {
  it('answers not_found for every operation', async () => {
    const cw = engine();
    const rows = await transitionCount();
    const missing = '5b0e7a4e-0000-4000-8000-000000000000';
    for (const attempt of [
      () => cw.cancelTask('not-a-uuid'),
      () => cw.cancelTask(missing),
      () => cw.cancelWorkflow(missing),
      () => cw.replayTask(missing, { operator: 'erin', reason: 'why not' }),
      () => cw.recordReceipt(missing, { ok: true }),
      () => cw.explain(missing),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'not_found' });
    }
    expect(await cw.getWorkflow(missing)).toBeUndefined();
    expect(await transitionCount()).toBe(rows);
  });
});

describe('cancelWorkflow', () => {
  it('cancels every queued and pending child and answers the workflow state; a repeat writes nothing', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('ops-gated', { label: 'wf-cancel' });
    expect(await cw.cancelWorkflow(workflow.id, { operator: 'bob' })).toEqual({
      workflowId: workflow.id,
      state: 'cancelled',
      changed: true,
    });
    const after = await view(cw, workflow.id);
    expect(after.tasks.map((task) => [task.step, task.state])).toEqual([
      ['first', 'cancelled'],
      ['second', 'cancelled'],
    ]);
    for (const task of after.tasks) {
      expect(task.transitions.at(-1)).toMatchObject({
        reason: 'cancelled_before_start',
        actor: 'operator:bob',
      });
    }
    const rows = await transitionCount();
    expect(await cw.cancelWorkflow(workflow.id, { operator: 'bob' })).toEqual({
      workflowId: workflow.id,
      state: 'cancelled',
      changed: false,
    });
    expect(await transitionCount()).toBe(rows);
  });

  it('with a running child: the child is asked to stop, pending ones are cancelled', async () => {
    const cw = engine();
    const { workflowId, worker } = await startGated(cw, 'wf-running-cancel');
    expect(await cw.cancelWorkflow(workflowId)).toEqual({
      workflowId,
      state: 'cancel_requested',
      changed: true,
    });
    const during = await view(cw, workflowId);
    expect(during.tasks.map((task) => [task.step, task.state])).toEqual([
      ['first', 'cancel_requested'],
      ['second', 'cancelled'],
    ]);
    expect(await cw.cancelWorkflow(workflowId)).toMatchObject({
      state: 'cancel_requested',
      changed: false,
    });
    gates.get('wf-running-cancel')?.open();
    const done = await waitForState(cw, workflowId, 'cancelled');
    await worker.stop();
    expect(taskOf(done, 'first').transitions.at(-1)?.reason).toBe('cancel_confirmed');
    expect((await cw.explain(workflowId)).summary).toBe('first cancelled, second cancelled');
  });
});

describe('replay and bulk requeue (R26)', () => {
  it('replays a dead task with operator and reason; the workflow continues', async () => {
    const cw = engine();
    const { workflow } = await cw.submit('ops-fragile', {
      label: 'replay',
      category: 'unauthorized',
    });
    const worker = await cw.startWorker({ queues: ['q-fragile'], concurrency: 1 });
    const dead = await waitForState(cw, workflow.id, 'dead');
    const first = taskOf(dead, 'first');
    expect(first).toMatchObject({ state: 'dead', attempt: 1, replayCount: 0 });
    expect(taskOf(dead, 'second').state).toBe('pending');

    await expect(
      cw.replayTask(first.id, { operator: 'carol', reason: '  ' }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await expect(cw.replayTask(first.id, { operator: '', reason: 'why' })).rejects.toMatchObject({
      code: 'invalid_request',
    });

    healed.add('replay');
    expect(await cw.replayTask(first.id, { operator: 'carol', reason: 'token re-issued' })).toEqual(
      {
        taskId: first.id,
        state: 'queued',
        changed: true,
        reason: 'manual_replay',
      },
    );
    const done = await waitForState(cw, workflow.id, 'succeeded');
    await worker.stop();
    const replayed = taskOf(done, 'first');
    expect(replayed.replayCount).toBe(1);
    const replayEdge = replayed.transitions.find((row) => row.reason === 'manual_replay');
    expect(replayEdge).toMatchObject({
      from: 'dead',
      to: 'queued',
      actor: 'operator:carol',
      detail: { operatorReason: 'token re-issued', replayCount: 1 },
    });
    expect(reasons(replayed.transitions)).toEqual([
      'submitted',
      'lease_acquired',
      'non_retryable_error',
      'manual_replay',
      'lease_acquired',
      'completed',
    ]);
    expect(taskOf(done, 'second').state).toBe('succeeded');
    expect((await cw.explain(workflow.id)).text).toContain('replayed by carol: "token re-issued"');

    // Only a dead task can be replayed.
    const error = await cw
      .replayTask(replayed.id, { operator: 'carol', reason: 'again' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe('conflict');
  });

  it('requeueDead re-queues exactly the dead tasks with that reason in the time range', async () => {
    const cw = engine();
    const worker = await cw.startWorker({ queues: ['q-brittle'], concurrency: 3 });
    const submitBatch = async (batch: string) => {
      const submitted = await cw.submitMany(
        (['unauthorized', 'invalid_argument', 'network'] as const).map((category) => ({
          name: 'ops-brittle',
          input: { label: `${batch}-${category}`, category },
        })),
      );
      const ids = submitted.map((result) => result.workflow.id);
      for (const id of ids) await waitForState(cw, id, 'dead');
      return Promise.all(ids.map(async (id) => taskOf(await view(cw, id), 'only')));
    };
    const early = await submitBatch('early');
    const from = await databaseTime(url());
    const late = await submitBatch('late');
    const to = await databaseTime(url());
    await worker.stop();
    expect(late.map((task) => task.transitions.at(-1)?.reason)).toEqual([
      'non_retryable_error',
      'non_retryable_error',
      'attempts_exhausted',
    ]);

    const rows = await transitionCount();
    await expect(
      cw.requeueDead({
        reasonCode: 'bogus' as 'bulk_requeue',
        from,
        to,
        operator: 'dave',
        reason: 'x',
      }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      cw.requeueDead({
        reasonCode: 'non_retryable_error',
        from: to,
        to: from,
        operator: 'dave',
        reason: 'x',
      }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect(await transitionCount()).toBe(rows);

    const answers = await cw.requeueDead({
      reasonCode: 'non_retryable_error',
      from,
      to,
      operator: 'dave',
      reason: 'credentials fixed',
    });
    const expected = late.slice(0, 2).map((task) => task.id);
    expect([...answers].sort((a, b) => a.taskId.localeCompare(b.taskId))).toEqual(
      expected
        .sort()
        .map((taskId) => ({ taskId, state: 'queued', changed: true, reason: 'bulk_requeue' })),
    );
    for (const taskId of expected) {
      const found = await query<{ state: string; replay_count: number }>(
        url(),
        'select state, replay_count from causeway_tasks where id = $1',
        [taskId],
      );
      expect(found[0]).toEqual({ state: 'queued', replay_count: 1 });
      const last = (
        await query<{ reason: string; actor: string; detail: unknown }>(
          url(),
          'select reason, actor, detail from causeway_transitions where task_id = $1 order by id desc limit 1',
          [taskId],
        )
      )[0];
      expect(last).toMatchObject({
        reason: 'bulk_requeue',
        actor: 'operator:dave',
        detail: { operatorReason: 'credentials fixed', replayCount: 1 },
      });
    }
    // Outside the range, or with another reason: still dead.
    const untouched = [...early, late[2]].map((task) => task?.id);
    const states = await query<{ state: string }>(
      url(),
      'select state from causeway_tasks where id = any($1::uuid[])',
      [untouched],
    );
    expect(states.map((row) => row.state)).toEqual(['dead', 'dead', 'dead', 'dead']);
    // A repeat finds nothing left to requeue.
    expect(
      await cw.requeueDead({
        reasonCode: 'non_retryable_error',
        from,
        to,
        operator: 'dave',
        reason: 'credentials fixed',
      }),
    ).toEqual([]);

    // Tidy: the requeued tasks must not run again in this file.
    for (const taskId of expected) await cw.cancelTask(taskId, { operator: 'dave' });
  });
});

describe('receipts (R23)', () => {
  async function awaiting(cw: Engine, name: string, label: string) {
    const { workflow } = await cw.submit(name, { label });
    const worker = await cw.startWorker({ queues: ['q-receipt'], concurrency: 1 });
    const task = await waitFor(async () => {
      const found = taskOf(await view(cw, workflow.id), 'submit');
      return found.state === 'awaiting_receipt' ? found : undefined;
    });
    return { workflowId: workflow.id, task, worker };
  }

  it('a confirmed receipt succeeds the task and the workflow continues; a duplicate changes nothing', async () => {
    const cw = engine();
    const { workflowId, task, worker } = await awaiting(cw, 'ops-receipt', 'confirmed');
    expect(task).toMatchObject({ receiptId: 'receipt-confirmed', leaseHolder: null });
    expect((await view(cw, workflowId)).state).toBe('running');

    expect(await cw.recordReceipt(task.id, { ok: true })).toEqual({
      taskId: task.id,
      state: 'succeeded',
      changed: true,
      reason: 'receipt_confirmed',
    });
    const done = await waitForState(cw, workflowId, 'succeeded');
    await worker.stop();
    expect(reasons(taskOf(done, 'submit').transitions)).toEqual([
      'submitted',
      'lease_acquired',
      'submitted_awaiting_receipt',
      'receipt_confirmed',
    ]);
    expect(taskOf(done, 'submit').transitions.at(-1)?.actor).toBe('receipt');

    const rows = await transitionCount();
    expect(await cw.recordReceipt(task.id, { ok: true })).toMatchObject({
      state: 'succeeded',
      changed: false,
    });
    expect(
      await cw.recordReceipt(task.id, { ok: false, category: 'network', message: 'late' }),
    ).toMatchObject({ state: 'succeeded', changed: false });
    expect(await transitionCount()).toBe(rows);
  });

  it('a receipt rejected with a non-retryable category ends dead', async () => {
    const cw = engine();
    const { workflowId, task, worker } = await awaiting(cw, 'ops-receipt', 'rejected');
    await worker.stop();
    expect(
      await cw.recordReceipt(task.id, { ok: false, category: 'unauthorized', message: 'revoked' }),
    ).toMatchObject({ state: 'dead', changed: true });
    const found = await view(cw, workflowId);
    expect(found.state).toBe('dead');
    expect(taskOf(found, 'submit').transitions.at(-1)).toMatchObject({
      reason: 'receipt_rejected',
      errorCategory: 'unauthorized',
      actor: 'receipt',
    });
  });

  it.each([
    ['ops-receipt', 'dead'],
    ['ops-receipt-reentrant', 'queued'],
  ] as const)('%s: the sweeper enforces the receipt deadline (→ %s)', async (name, state) => {
    const cw = engine();
    const { task, worker } = await awaiting(cw, name, `timeout-${name}`);
    await worker.stop();
    expect(await cw.sweep()).toBe(0);
    await setDatabaseClockOffset(url(), 61_000);
    expect(await cw.sweep()).toBe(1);
    const rows = await query<{ state: string }>(
      url(),
      'select state from causeway_tasks where id = $1',
      [task.id],
    );
    expect(rows[0]?.state).toBe(state);
    const last = (
      await query<{ reason: string; actor: string; error_category: string }>(
        url(),
        'select reason, actor, error_category from causeway_transitions where task_id = $1 order by id desc limit 1',
        [task.id],
      )
    )[0];
    expect(last).toEqual({
      reason: 'receipt_timeout',
      actor: `sweeper:${cw.holder}`,
      error_category: 'timeout',
    });
    // A receipt after the timeout changes nothing.
    expect(await cw.recordReceipt(task.id, { ok: true })).toMatchObject({ state, changed: false });
    if (state === 'queued') await cw.cancelTask(task.id);
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
