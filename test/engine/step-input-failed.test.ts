/**
 * R58: an event step whose key function throws, or gives no valid key, ends `dead` at once by
 * `pending → dead` (`step_input_failed`), with the error on the edge; it never parks a wait that
 * no event can match. Real engine, real PostgreSQL, real workers.
 */
import { EngineError } from '@causeway/engine';
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, type LogRow } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

/** Keys that still fail: the "bug" an operator's replay runs into until it is fixed. */
const brokenKeys = new Set<string>();

/**
 * render → approval (an event step whose key comes from render's output) → publish. The key
 * function throws for a note in `brokenKeys`, and gives a number for a note named "number".
 */
const review = workflow({ name: 'input-review', input: z.object({ noteId: z.string() }) })
  .step('render', { queue: 'q-input', run: (ctx) => ({ note: ctx.input.noteId }) })
  .event('approval', {
    after: ['render'],
    name: 'note.approved',
    key: (ctx) => {
      const note = ctx.results.render.note;
      if (brokenKeys.has(note)) throw new Error(`no approver for ${note}`);
      return (note === 'number' ? 42 : `key-${note}`) as string;
    },
    payload: z.object({ editor: z.string() }),
    timeoutMs: 3 * 24 * 3_600_000,
    onTimeout: { editor: 'nobody' },
  })
  .step('publish', { after: ['approval'], queue: 'q-input', run: () => 'published' })
  .build();

/** A first step that is an event step: its key is computed at submit, from the input alone. */
const rootWait = workflow({ name: 'input-root', input: z.object({ id: z.string() }) })
  .event('wait', {
    name: 'ping.root',
    key: (ctx) => {
      if (ctx.input.id === 'bad') throw new Error('the input has no key');
      return ctx.input.id;
    },
    timeoutMs: 60_000,
  })
  .build();

const workflows = [review, rootWait];
const engine = () => testEngine(url(), { workflows });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

interface TaskRow extends Record<string, unknown> {
  id: string;
  step: string;
  state: string;
  event_key: string | null;
  last_error_category: string | null;
  last_error: string | null;
}

async function tasksOf(workflowId: string): Promise<Record<string, TaskRow>> {
  const rows = await query<TaskRow>(
    url(),
    `select id, step, state, event_key, last_error_category, last_error from causeway_tasks
      where workflow_id = $1`,
    [workflowId],
  );
  return Object.fromEntries(rows.map((row) => [row.step, row]));
}

async function logOf(workflowId: string): Promise<LogRow[]> {
  return query<LogRow>(
    url(),
    'select * from causeway_transitions where workflow_id = $1 order by id',
    [workflowId],
  );
}

async function workflowState(workflowId: string): Promise<string | undefined> {
  const rows = await query<{ state: string }>(
    url(),
    'select state from causeway_workflows where id = $1',
    [workflowId],
  );
  return rows[0]?.state;
}

/** Submits a review and waits until its approval step has left `pending`. */
async function reviewPastRender(cw: ReturnType<typeof engine>, noteId: string) {
  const { workflow: run } = await cw.submit('input-review', { noteId });
  await waitFor(async () => (await tasksOf(run.id)).approval?.state !== 'pending', {
    timeoutMs: 10_000,
    description: 'the approval step left pending',
  });
  return run.id;
}

describe('an event key that fails ends the step dead at once (R58)', () => {
  it('a key function that throws: pending → dead (step_input_failed) with the error', async () => {
    brokenKeys.add('n-throws');
    const cw = engine();
    await cw.startWorker({ queues: ['q-input'], concurrency: 2 });
    const id = await reviewPastRender(cw, 'n-throws');
    const tasks = await tasksOf(id);
    expect(tasks.approval).toMatchObject({
      state: 'dead',
      event_key: null,
      last_error_category: 'unknown',
      last_error: 'the key function threw: no approver for n-throws',
    });
    // The steps after it stay pending, and the workflow is dead by the aggregation rules.
    expect(tasks.publish?.state).toBe('pending');
    expect(await workflowState(id)).toBe('dead');
    const edge = (await logOf(id)).find(
      (row) => row.step === 'approval' && row.to_state === 'dead',
    );
    expect(edge).toMatchObject({
      from_state: 'pending',
      reason: 'step_input_failed',
      actor: 'system',
      error_category: 'unknown',
      error_summary: 'the key function threw: no approver for n-throws',
      detail: { input: 'event_key', error: 'the key function threw: no approver for n-throws' },
    });
    expect(
      (await logOf(id)).some((row) => row.step === 'approval' && row.to_state === 'waiting'),
    ).toBe(false);
    const explained = await cw.explain(id);
    expect(explained.text).toContain('no approver for n-throws');
    await expectLogIsSound(url());
  });

  it('a key function that returns something other than a string ends the step the same way', async () => {
    const cw = engine();
    await cw.startWorker({ queues: ['q-input'], concurrency: 2 });
    const id = await reviewPastRender(cw, 'number');
    const edge = (await logOf(id)).find(
      (row) => row.step === 'approval' && row.to_state === 'dead',
    );
    expect(edge).toMatchObject({
      from_state: 'pending',
      reason: 'step_input_failed',
      error_category: 'invalid_argument',
      detail: { input: 'event_key', error: 'an event key is a string (got number)' },
    });
    expect(await workflowState(id)).toBe('dead');
  });

  it('a first event step whose key throws at submit is created pending and ends dead', async () => {
    const cw = engine();
    const { workflow: run } = await cw.submit('input-root', { id: 'bad' });
    expect(run.state).toBe('dead');
    expect((await tasksOf(run.id)).wait).toMatchObject({
      state: 'dead',
      event_key: null,
      last_error_category: 'unknown',
      last_error: 'the key function threw: the input has no key',
    });
    const taskEdges = (await logOf(run.id)).filter((row) => row.task_id !== null);
    expect(taskEdges.map((row) => [row.from_state, row.to_state, row.reason])).toEqual([
      [null, 'pending', 'submitted'],
      ['pending', 'dead', 'step_input_failed'],
    ]);
    // A good key in the same batch still waits.
    const good = await cw.submit('input-root', { id: 'good' });
    expect(good.workflow.state).toBe('waiting');
    expect((await tasksOf(good.workflow.id)).wait).toMatchObject({
      state: 'waiting',
      event_key: 'good',
    });
    await expectLogIsSound(url());
  });

  it('a replay evaluates the key again: refused while it fails, waiting once it is fixed', async () => {
    brokenKeys.add('n-replay');
    const cw = engine();
    await cw.startWorker({ queues: ['q-input'], concurrency: 2 });
    const id = await reviewPastRender(cw, 'n-replay');
    const approvalId = (await tasksOf(id)).approval?.id as string;
    const logBefore = await logOf(id);

    const refused = await cw
      .replayTask(approvalId, { operator: 'ada', reason: 'try again' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EngineError);
    expect(refused).toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('no approver for n-replay'),
    });
    expect(await logOf(id)).toEqual(logBefore);
    expect((await tasksOf(id)).approval?.state).toBe('dead');

    brokenKeys.delete('n-replay');
    const replayed = await cw.replayTask(approvalId, { operator: 'ada', reason: 'key fixed' });
    expect(replayed.state).toBe('waiting');
    expect((await tasksOf(id)).approval).toMatchObject({
      state: 'waiting',
      event_key: 'key-n-replay',
    });
    await cw.sendEvent('note.approved', 'key-n-replay', { editor: 'ada' });
    await waitFor(async () => (await workflowState(id)) === 'succeeded', {
      timeoutMs: 10_000,
      description: 'the replayed workflow succeeded',
    });
    await expectLogIsSound(url());
  });
});
