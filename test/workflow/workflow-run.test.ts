import {
  type Actor,
  applyTaskEvent,
  cancelWorkflowRun,
  createWorkflowRun,
  defineWorkflow,
  type PlannedTransition,
  type RunClock,
  step,
  type TaskEvent,
  type WorkflowRun,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const worker: Actor = { kind: 'worker', name: 'w1' };
const clock: RunClock = { now: new Date('2026-03-01T10:00:00Z'), random: () => 0 };
const noop = () => ({});
const diamond = defineWorkflow({
  name: 'diamond',
  input: z.object({}),
  deadlineMs: 60_000,
  steps: {
    start: step({ run: noop }),
    left: step({ after: ['start'], run: noop, deadlineMs: 30_000 }),
    right: step({ after: ['start'], run: noop }),
    join: step({ after: ['left', 'right'], run: noop }),
  },
});

function start(): { run: WorkflowRun; transitions: PlannedTransition[] } {
  const created = createWorkflowRun(
    diamond,
    { workflowId: 'wf', taskIds: ['t-start', 't-left', 't-right', 't-join'] },
    clock.now,
  );
  return { run: created.run, transitions: [...created.transitions] };
}

function apply(
  state: { run: WorkflowRun; transitions: PlannedTransition[] },
  taskId: string,
  event: TaskEvent,
) {
  const decision = applyTaskEvent(diamond, state.run, taskId, event, clock);
  if (!decision.ok) throw new Error(`${decision.refusal.code}: ${decision.refusal.message}`);
  state.run = decision.run;
  state.transitions.push(...decision.transitions);
  return decision.transitions;
}

const stateOf = (run: WorkflowRun, taskId: string) =>
  run.tasks.find((task) => task.taskId === taskId)?.snapshot.state;

describe('workflow runs', () => {
  it('creates roots queued and the rest pending, with deadlines from acceptance', () => {
    const { run, transitions } = start();
    expect(run.state).toBe('queued');
    expect(run.tasks.map((task) => task.snapshot.state)).toEqual([
      'queued',
      'pending',
      'pending',
      'pending',
    ]);
    expect(transitions[0]).toEqual({
      kind: 'workflow',
      from: null,
      to: 'queued',
      reason: 'submitted',
      step: null,
      actor: 'client',
    });
    expect(transitions.filter((row) => row.kind === 'task')).toHaveLength(4);
    // left has its own tighter deadline; the others share the workflow's budget.
    expect(run.tasks[1]?.snapshot.deadlineAt?.toISOString()).toBe('2026-03-01T10:00:30.000Z');
    expect(run.tasks[3]?.snapshot.deadlineAt?.toISOString()).toBe('2026-03-01T10:01:00.000Z');
  });

  it('promotes a step only when all of its upstream steps succeeded, in the same decision', () => {
    const state = start();
    apply(state, 't-start', { type: 'claim', actor: worker });
    const completed = apply(state, 't-start', { type: 'complete', actor: worker });
    expect(
      completed.map((row) =>
        row.kind === 'task' ? `${row.step}:${row.edge.reason}` : `wf:${row.to}`,
      ),
    ).toEqual(['start:completed', 'left:upstream_succeeded', 'right:upstream_succeeded']);
    apply(state, 't-left', { type: 'claim', actor: worker });
    apply(state, 't-left', { type: 'complete', actor: worker });
    expect(stateOf(state.run, 't-join')).toBe('pending');
    apply(state, 't-right', { type: 'claim', actor: worker });
    const last = apply(state, 't-right', { type: 'complete', actor: worker });
    expect(stateOf(state.run, 't-join')).toBe('queued');
    expect(
      last.some(
        (row) =>
          row.kind === 'task' && row.step === 'join' && row.edge.reason === 'upstream_succeeded',
      ),
    ).toBe(true);
  });

  it('writes a workflow transition exactly when the parent changes, caused by the child edge', () => {
    const state = start();
    const claimed = apply(state, 't-start', { type: 'claim', actor: worker });
    expect(claimed.at(-1)).toEqual({
      kind: 'workflow',
      from: 'queued',
      to: 'running',
      reason: 'lease_acquired',
      step: 'start',
      actor: 'worker:w1',
    });
    apply(state, 't-start', { type: 'complete', actor: worker });
    const again = apply(state, 't-left', { type: 'claim', actor: worker });
    expect(again.filter((row) => row.kind === 'workflow')).toEqual([]);
  });

  it('keeps steps after a dead step pending, so a replay can continue them', () => {
    const state = start();
    apply(state, 't-start', { type: 'claim', actor: worker });
    apply(state, 't-start', {
      type: 'fail',
      actor: worker,
      category: 'unauthorized',
      summary: '401',
    });
    expect(state.run.state).toBe('dead');
    expect(stateOf(state.run, 't-left')).toBe('pending');
    apply(state, 't-start', {
      type: 'replay',
      actor: { kind: 'operator', name: 'alice' },
      reason: 'token renewed',
      bulk: false,
    });
    expect(state.run.state).toBe('queued');
  });

  it('cancels pending steps downstream of a cancelled step', () => {
    const state = start();
    const rows = apply(state, 't-start', {
      type: 'cancel',
      actor: { kind: 'operator', name: 'bob' },
    });
    expect(state.run.tasks.map((task) => task.snapshot.state)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
    expect(state.run.state).toBe('cancelled');
    const cascaded = rows.find((row) => row.kind === 'task' && row.step === 'join');
    expect(cascaded?.kind === 'task' && cascaded.edge).toMatchObject({
      reason: 'cancelled_before_start',
      actor: 'operator:bob',
    });
  });

  it('cancels a whole workflow once: a repeat produces no edge', () => {
    const state = start();
    apply(state, 't-start', { type: 'claim', actor: worker });
    const first = cancelWorkflowRun(diamond, state.run, { kind: 'client' }, clock);
    expect(first.run.state).toBe('cancel_requested');
    expect(first.run.tasks.map((task) => task.snapshot.state)).toEqual([
      'cancel_requested',
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
    const second = cancelWorkflowRun(diamond, first.run, { kind: 'client' }, clock);
    expect(second.transitions).toEqual([]);
    expect(second.run).toBe(first.run);
  });

  it('refuses an event that does not apply and changes nothing', () => {
    const { run } = start();
    const decision = applyTaskEvent(
      diamond,
      run,
      't-join',
      { type: 'complete', actor: worker },
      clock,
    );
    expect(decision).toMatchObject({
      ok: false,
      refusal: { code: 'not_applicable', state: 'pending' },
    });
  });
});
