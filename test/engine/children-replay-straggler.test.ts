/**
 * R47, without a race: a straggler that its step's failure asked to cancel and that is still
 * `cancel_requested` when the step is replayed starts again in its place once its cancel is
 * confirmed (at its worker's boundary, or by the sweeper when its lease runs out), in the
 * transaction of that end, and the step goes on to succeed; its tally stays equal to its
 * children. A child that an operator cancels while the replayed step awaits counts as a
 * failure, as it always did. Real engine, real PostgreSQL, real workers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { StepError, workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, setDatabaseClockOffset, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { type Engine, finished, startChildren } from './children-support';

const database = useTestDatabase();
const url = () => database().url;

/** Per gate name: opened by the test, awaited by a child's step. */
const opened = new Set<string>();
const waiters = new Map<string, (() => void)[]>();
/** Per token: how many times its step has started. */
const runs = new Map<string, number>();
/** The gates of the runs that have begun (a straggler's, once its effect started). */
const begun = new Set<string>();

function open(gate: string): void {
  opened.add(gate);
  for (const resolve of waiters.get(gate) ?? []) resolve();
}

function passed(gate: string): Promise<void> {
  if (opened.has(gate)) return Promise.resolve();
  return new Promise((resolve) => waiters.set(gate, [...(waiters.get(gate) ?? []), resolve]));
}

/** The gate name of a token's run: `t` the first time, `t#2` the second. */
const gateOf = (token: string, run: number) => (run === 1 ? token : `${token}#${run}`);

async function started(gate: string): Promise<void> {
  await waitFor(async () => begun.has(gate), { intervalMs: 5, description: `${gate} started` });
}

/**
 * What a child does, by its role, each run waiting at its gate: `fail-once` fails for good the
 * first time and succeeds after; `straggler` starts its effect first and passes a boundary
 * after its gate, where an asked cancel stops it; `stuck` passes no boundary at all, so only
 * the sweeper can end an asked cancel; `held` passes a boundary every few milliseconds until
 * its gate opens.
 */
const roles = ['fail-once', 'straggler', 'stuck', 'held'] as const;
const kid = workflow({
  name: 'straggle-kid',
  input: z.object({ token: z.string(), role: z.enum(roles) }),
})
  .step('work', {
    queue: 'straggle',
    maxAttempts: 1,
    reentrant: false,
    run: async (ctx) => {
      const { token, role } = ctx.input;
      const run = (runs.get(token) ?? 0) + 1;
      runs.set(token, run);
      const gate = gateOf(token, run);
      if (role === 'straggler') await ctx.boundary();
      begun.add(gate);
      if (role === 'held') {
        while (!opened.has(gate)) {
          await sleep(5);
          await ctx.boundary();
        }
        return token;
      }
      await passed(gate);
      if (role === 'fail-once' && run === 1) throw new StepError('invalid_argument', 'first run');
      if (role === 'straggler') await ctx.boundary();
      return token;
    },
  })
  .build();
const parent = workflow({
  name: 'straggle-parent',
  input: z.object({ kids: z.array(z.object({ token: z.string(), role: z.enum(roles) })) }),
})
  .step('fan', { queue: 'straggle', run: (ctx) => startChildren(kid, ctx.input.kids) })
  .build();

/** Leases long enough that only a test's clock jump lets the sweeper end one. */
const engine = () => testEngine(url(), { workflows: [kid, parent], leaseMs: 30_000 });

beforeAll(async () => {
  const setup = engine();
  await setup.migrate();
  await setup.close();
});

type Child = {
  readonly id: string;
  readonly token: string;
  readonly state: string;
  readonly replaced: boolean;
  readonly child_index: number;
  readonly task_state: string;
};

function children(parentId: string): Promise<Child[]> {
  return query<Child>(
    url(),
    `select w.id, w.input->>'token' as token, w.state, w.replaced, w.child_index,
        t.state as task_state
       from causeway_workflows as w join causeway_tasks as t on t.workflow_id = w.id
      where w.parent_workflow_id = $1 order by w.child_index, w.created_at`,
    [parentId],
  );
}

type Step = {
  readonly id: string;
  readonly state: string;
  readonly children_total: number;
  readonly children_succeeded: number;
  readonly children_failed: number;
};

async function stepOf(parentId: string): Promise<Step> {
  const [step] = await query<Step>(
    url(),
    `select id, state, children_total, children_succeeded, children_failed
       from causeway_tasks where workflow_id = $1`,
    [parentId],
  );
  return step as Step;
}

const tallyOf = (step: Step) => [
  step.children_total,
  step.children_succeeded,
  step.children_failed,
];

/** A workflow's task edges in log order: reason, actor, transaction, detail. */
function edgesOf(workflowId: string) {
  return query<{ reason: string; actor: string; xid: string; detail: unknown }>(
    url(),
    `select reason, actor, xmin::text as xid, detail from causeway_transitions
      where workflow_id = $1 and task_id is not null order by id`,
    [workflowId],
  );
}

/**
 * Fails the step with its `fail-once` child while the straggler has started, and replays it
 * while the straggler is still asked to cancel; then the failed child's second run succeeds.
 */
async function replayWithStraggler(prefix: string, role: 'straggler' | 'stuck') {
  const app = engine();
  await app.startWorker({ queues: ['straggle'], concurrency: 4 });
  const kids = [
    { token: `${prefix}-f`, role: 'fail-once' as const },
    { token: `${prefix}-s`, role },
  ];
  const { workflow: submitted } = await app.submit('straggle-parent', { kids });
  await Promise.all(kids.map((child) => started(child.token)));
  open(`${prefix}-f`);
  await waitFor(async () => {
    const [failed, straggler] = await children(submitted.id);
    return failed?.state === 'dead' && straggler?.task_state === 'cancel_requested';
  });
  const step = await stepOf(submitted.id);
  expect(step.state).toBe('dead');
  const replayed = await app.replayTask(step.id, { operator: 'carol', reason: 'fixed it' });
  expect(replayed.state).toBe('awaiting_children');
  expect((await children(submitted.id))[1]?.task_state).toBe('cancel_requested');
  open(`${prefix}-f#2`);
  await waitFor(async () => (await children(submitted.id))[0]?.state === 'succeeded');
  return { app, parentId: submitted.id, stepId: step.id };
}

/**
 * The straggler started again at its index, in the transaction of its cancelled end, then
 * (its second run let through) the step succeeded with both children's results.
 */
async function expectRestarted(
  replayed: { app: Engine; parentId: string; stepId: string },
  prefix: string,
  endedBy: string,
) {
  const { app, parentId, stepId } = replayed;
  const [failed, old, again, more] = await children(parentId);
  expect(more).toBeUndefined();
  expect([failed?.state, failed?.replaced]).toEqual(['succeeded', false]);
  expect([old?.state, old?.replaced, old?.child_index]).toEqual(['cancelled', true, 1]);
  expect([again?.replaced, again?.child_index, again?.token]).toEqual([false, 1, old?.token]);
  const oldEdges = await edgesOf(old?.id as string);
  const end = oldEdges.at(-1);
  expect(oldEdges.map((edge) => edge.reason)).toEqual([
    'submitted',
    'lease_acquired',
    'cancel_requested',
    endedBy,
  ]);
  expect(oldEdges[2]?.actor).toBe(`parent:${stepId}`);
  const [creation] = await edgesOf(again?.id as string);
  expect(creation?.reason).toBe('submitted');
  expect(creation?.actor).toBe(`parent:${stepId}`);
  expect(creation?.detail).toMatchObject({ replaces: old?.id, index: 1 });
  expect(creation?.xid).toBe(end?.xid);
  // R45: the restarted child is open in the old one's place; the tally did not move.
  const step = await stepOf(parentId);
  expect(step.state).toBe('awaiting_children');
  expect(tallyOf(step)).toEqual([2, 1, 0]);
  open(`${prefix}-s#2`);
  const done = await finished(app, parentId);
  expect(done.state).toBe('succeeded');
  expect(done.tasks[0]?.output).toEqual([`${prefix}-f`, `${prefix}-s`]);
  expect(tallyOf(await stepOf(parentId))).toEqual([2, 2, 0]);
}

describe('a straggler still asked to cancel when its step is replayed', () => {
  it('starts again once it confirms its cancel at a boundary, and the step succeeds', async () => {
    const replayed = await replayWithStraggler('b', 'straggler');
    open('b-s');
    await started('b-s#2');
    await expectRestarted(replayed, 'b', 'cancel_confirmed');
    expect(await logMismatches(url())).toEqual([]);
  });

  it('starts again once the sweeper ends its cancel at its lease, and the step succeeds', async () => {
    const replayed = await replayWithStraggler('w', 'stuck');
    try {
      // Past its lease: a task asked to cancel is no longer renewed (R9).
      await setDatabaseClockOffset(url(), 60_000);
      await replayed.app.sweep();
      await started('w-s#2');
      await expectRestarted(replayed, 'w', 'lease_expired');
    } finally {
      // The first run, long fenced out, may end now.
      open('w-s');
      await setDatabaseClockOffset(url(), 0);
    }
    expect(await logMismatches(url())).toEqual([]);
  });

  it('a child an operator cancels while the replayed step awaits counts as a failure', async () => {
    const app = engine();
    await app.startWorker({ queues: ['straggle'], concurrency: 4 });
    const kids = [
      { token: 'o-f', role: 'fail-once' as const },
      { token: 'o-h', role: 'held' as const },
    ];
    const { workflow: submitted } = await app.submit('straggle-parent', { kids });
    await Promise.all(kids.map((child) => started(child.token)));
    open('o-f');
    // The held sibling confirms its cancel at its next boundary, before the replay.
    await waitFor(async () => (await children(submitted.id))[1]?.state === 'cancelled');
    const step = await stepOf(submitted.id);
    await app.replayTask(step.id, { operator: 'carol', reason: 'fixed it' });
    open('o-f#2');
    await started('o-h#2');
    await waitFor(async () => (await children(submitted.id))[0]?.state === 'succeeded');
    const restarted = (await children(submitted.id))[2];
    expect([restarted?.replaced, restarted?.child_index]).toEqual([false, 1]);
    await app.cancelWorkflow(restarted?.id as string, { operator: 'dave', reason: 'not needed' });
    const done = await finished(app, submitted.id);
    expect(done.state).toBe('dead');
    expect(done.tasks[0]?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'children_started',
      'children_failed',
      'manual_replay',
      'children_failed',
    ]);
    const after = await children(submitted.id);
    expect(after.map((child) => [child.token, child.state, child.replaced])).toEqual([
      ['o-f', 'succeeded', false],
      ['o-h', 'cancelled', true],
      ['o-h', 'cancelled', false],
    ]);
    const asked = (await edgesOf(restarted?.id as string)).find(
      (edge) => edge.reason === 'cancel_requested',
    );
    expect(asked?.actor).toBe('operator:dave');
    expect(tallyOf(await stepOf(submitted.id))).toEqual([2, 1, 1]);
    expect(await logMismatches(url())).toEqual([]);
  });
});
