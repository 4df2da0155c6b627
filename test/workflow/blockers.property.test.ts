import {
  type BlockerCode,
  type BlockerInput,
  blockerCodeMeanings,
  blockerCodes,
  type ChildrenFacts,
  decideBlocker,
  defaultBackoff,
  errorCategories,
  findEdgeRule,
  isTerminalTaskState,
  type RegisteredWorker,
  reasonCodes,
  type TaskState,
  taskStates,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyParameters, timeoutForRuns } from './arbitraries';
import { at, edge, now, task } from './blocker-facts';

/**
 * Properties of the blocker decision over arbitrary facts: one blocker exactly for each
 * non-terminal task, a code its state allows, the facts its code documents (JSON-ready), a
 * sentence without holes, and the worker arithmetic and lease liveness as an independent
 * oracle states them.
 */
const codesByState: Readonly<
  Record<Exclude<TaskState, 'succeeded' | 'cancelled' | 'dead'>, readonly BlockerCode[]>
> = {
  pending: ['upstream_pending'],
  queued: ['not_due', 'no_worker', 'queue_full', 'claimable', 'queue_paused'],
  leased: ['running', 'lease_stale'],
  cancel_requested: ['cancel_pending', 'lease_stale', 'children_pending'],
  awaiting_receipt: ['awaiting_receipt'],
  waiting: ['waiting_for_event'],
  awaiting_children: ['children_pending'],
};

const holders = ['w1', 'w2', 'w3'] as const;
const day = 86_400_000;
const time = fc.integer({ min: -3 * day, max: 3 * day }).map(at);
const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

/** Mostly workers that can claim the task (the interesting arithmetic), some that cannot. */
const registered: fc.Arbitrary<RegisteredWorker> = fc.record({
  holder: fc.constantFrom(...holders),
  queues: fc.oneof(
    {
      weight: 3,
      arbitrary: fc.integer({ min: 1, max: 3 }).map((slots) => [
        { name: 'io', slots },
        { name: 'cpu', slots },
      ]),
    },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(
        fc.record({ name: fc.constantFrom('io', 'cpu'), slots: fc.integer({ min: 1, max: 3 }) }),
        { selector: (queue) => queue.name, maxLength: 2 },
      ),
    },
  ),
  workflows: fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constant([
        { name: 'note', steps: ['render', 'publish'] },
        { name: 'digest', steps: ['render', 'publish'] },
      ]),
    },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(
        fc.record({
          name: fc.constantFrom('note', 'digest'),
          steps: fc.subarray(['render', 'publish']),
        }),
        { selector: (workflow) => workflow.name, maxLength: 2 },
      ),
    },
  ),
  sweeper: fc.boolean(),
  heartbeatAt: time,
  live: fc.oneof(
    { weight: 3, arbitrary: fc.constant(true) },
    { weight: 1, arbitrary: fc.constant(false) },
  ),
});

/**
 * What the engine reads of a step's child workflows (R48): counts that add up, a tolerance of
 * 0..total, and the oldest unfinished child (with its own blocker or not) when one is open. The
 * child's blocker speaks without numbers, so the parent's counts are the sentence's only ones.
 */
const childrenFacts: fc.Arbitrary<ChildrenFacts> = fc
  .record({
    succeeded: fc.integer({ min: 0, max: 12 }),
    failed: fc.integer({ min: 0, max: 3 }),
    open: fc.integer({ min: 0, max: 12 }),
    tolerance: fc.nat(),
    oldestState: fc.constantFrom('queued', 'running', 'waiting', 'cancel_requested'),
    oldestBlocker: maybe(fc.constantFrom(...blockerCodes)),
  })
  .map(({ succeeded, failed, open, tolerance, oldestState, oldestBlocker }) => {
    const total = succeeded + failed + open;
    const oldest = {
      workflowId: 'wf-child-1',
      name: 'publish-to-platform',
      state: oldestState,
      blocker:
        oldestBlocker === null
          ? null
          : {
              taskId: 't-child',
              step: 'post',
              code: oldestBlocker,
              message: 'post: held by its own blocker',
              until: null,
              facts: {},
            },
    };
    return {
      total,
      succeeded,
      failed,
      open,
      allowedFailures: tolerance % (total + 1),
      oldest: open > 0 ? oldest : null,
    };
  });

const facts: fc.Arbitrary<BlockerInput> = fc
  .record({
    state: fc.constantFrom(...taskStates),
    attempt: fc.integer({ min: 0, max: 4 }),
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    effectStarted: fc.boolean(),
    evidence: maybe(fc.constant('ev-1')),
    runAt: maybe(time),
    deadlineAt: maybe(time),
    waitTimeoutAt: maybe(time),
    leaseHolder: maybe(fc.constantFrom(...holders, 'ghost')),
    leaseExpiresAt: maybe(time),
    receiptDeadlineAt: maybe(time),
    eventKey: maybe(fc.constant('k1')),
    lastEdge: maybe(
      fc.record({
        reason: fc.constantFrom(...reasonCodes),
        at: time,
        category: maybe(fc.constantFrom(...errorCategories)),
        detail: fc.constantFrom(
          null,
          { delayMs: 3_600_000 },
          { reason: 'later' },
          { operatorReason: 'why' },
          { evidence: 'ev-1' },
        ),
        actor: fc.constantFrom('client', 'operator:alice', 'worker:w1', 'weird-actor'),
      }),
    ),
    sending: fc.array(
      fc.record({
        channel: fc.constant('platform'),
        attempts: fc.integer({ min: 0, max: 5 }),
        lastError: maybe(fc.constant('HTTP 503')),
      }),
      { maxLength: 2 },
    ),
    queue: fc.constantFrom('io', 'cpu'),
    step: fc.constantFrom('render', 'publish'),
    workflow: fc.record({
      name: fc.constantFrom('note', 'digest'),
      steps: fc.constantFrom([], ['render'], ['render', 'publish']),
    }),
    upstream: maybe(
      fc.array(
        fc.record({ step: fc.constantFrom('a', 'b', 'c'), state: fc.constantFrom(...taskStates) }),
        { maxLength: 3 },
      ),
    ),
    policy: maybe(
      fc.record({
        maxAttempts: fc.integer({ min: 1, max: 4 }),
        reentrant: fc.boolean(),
        timeoutMs: fc.integer({ min: 1, max: day }),
        wait: maybe(
          fc.record({
            timeoutMs: fc.integer({ min: 1, max: day }),
            succeedsOnTimeout: fc.boolean(),
          }),
        ),
        map: fc.boolean(),
      }),
    ),
    workers: fc.uniqueArray(registered, { selector: (worker) => worker.holder, maxLength: 3 }),
    leased: fc.record({
      w1: fc.integer({ min: 0, max: 4 }),
      w2: fc.integer({ min: 0, max: 4 }),
      w3: fc.integer({ min: 0, max: 4 }),
    }),
    oldestReadyAt: maybe(time),
    paused: maybe(
      fc.record({
        operator: fc.constantFrom('ana', 'bo'),
        reason: fc.string({ minLength: 1, maxLength: 20 }),
        pausedAt: time,
      }),
    ),
    children: maybe(childrenFacts),
  })
  .map((drawn) => ({
    task: task(drawn.state, {
      step: drawn.step,
      queue: drawn.queue,
      maxAttempts: drawn.maxAttempts,
      leaseHolder: drawn.leaseHolder,
      leaseExpiresAt: drawn.leaseExpiresAt,
      receiptId: 'r-1',
      receiptDeadlineAt: drawn.receiptDeadlineAt,
      eventName: drawn.state === 'waiting' ? 'note.approved' : null,
      eventKey: drawn.eventKey,
      waitSince: drawn.state === 'waiting' ? at(-60_000) : null,
      lastEdge:
        drawn.lastEdge === null
          ? null
          : edge(drawn.lastEdge.reason, {
              at: drawn.lastEdge.at,
              errorCategory: drawn.lastEdge.category,
              errorSummary: drawn.lastEdge.category === null ? null : 'it failed',
              detail: drawn.lastEdge.detail,
              actor: drawn.lastEdge.actor,
            }),
      sending: drawn.sending,
      snapshot: {
        attempt: drawn.attempt,
        effectStarted: drawn.effectStarted,
        evidence: drawn.evidence,
        runAt: drawn.runAt,
        deadlineAt: drawn.deadlineAt,
        waitTimeoutAt: drawn.waitTimeoutAt,
      },
    }),
    upstream: drawn.upstream,
    workflow: drawn.workflow,
    policy:
      drawn.policy === null
        ? null
        : { ...drawn.policy, backoff: defaultBackoff, deadlineMs: null, delayMs: null },
    workers: drawn.workers,
    queue: {
      leasedByHolder: drawn.leased,
      oldestReadyAt: drawn.oldestReadyAt,
      paused: drawn.paused,
    },
    now,
    children: drawn.children,
  }));

/** The oracle's reading of the claim rule: workers that can claim the task, and their free slots. */
function claimers(input: BlockerInput): { able: RegisteredWorker[]; free: number } {
  const needed = input.workflow.steps.length > 0 ? input.workflow.steps : [input.task.step];
  const able = input.workers.filter(
    (worker) =>
      worker.live &&
      worker.queues.some((queue) => queue.name === input.task.queue) &&
      worker.workflows.some(
        (defined) =>
          defined.name === input.workflow.name &&
          needed.every((step) => defined.steps.includes(step)),
      ),
  );
  const free = able.reduce((total, worker) => {
    const slots = worker.queues.find((queue) => queue.name === input.task.queue)?.slots ?? 0;
    return total + Math.max(0, slots - (input.queue.leasedByHolder[worker.holder] ?? 0));
  }, 0);
  return { able, free };
}

describe('decideBlocker over arbitrary facts', () => {
  it(
    'gives exactly the non-terminal tasks one blocker, with a code its state allows and documented, JSON-ready facts',
    () => {
      fc.assert(
        fc.property(facts, (input) => {
          const blocker = decideBlocker(input);
          const { state } = input.task.snapshot;
          if (isTerminalTaskState(state)) {
            expect(blocker).toBeNull();
            return;
          }
          if (blocker === null) throw new Error('a non-terminal task has no blocker');
          expect(codesByState[state as keyof typeof codesByState]).toContain(blocker.code);
          expect(blocker.taskId).toBe(input.task.id);
          expect(blocker.message.startsWith(`${input.task.step}: `)).toBe(true);
          expect(blocker.message).not.toMatch(/undefined|NaN|Invalid Date|\[object/);
          const documented = Object.keys(blockerCodeMeanings[blocker.code].facts);
          for (const key of Object.keys(blocker.facts)) expect(documented).toContain(key);
          expect(JSON.parse(JSON.stringify(blocker.facts))).toEqual(blocker.facts);
          if (blocker.until !== null) expect(Number.isNaN(blocker.until.getTime())).toBe(false);
        }),
        propertyParameters(),
      );
    },
    timeoutForRuns(2),
  );

  it(
    'a queued task of a paused queue is held by the pause; else it is not due until its run_at; a due one is claimable exactly when a worker able to claim it has a free slot',
    () => {
      fc.assert(
        fc.property(facts, (drawn) => {
          const input = {
            ...drawn,
            task: { ...drawn.task, snapshot: { ...drawn.task.snapshot, state: 'queued' as const } },
          };
          const blocker = decideBlocker(input);
          const { runAt, deadlineAt } = input.task.snapshot;
          // A paused queue (R53) holds every queued task, due or not, until a resume.
          const { paused } = input.queue;
          if (paused !== null) {
            expect(blocker?.code).toBe('queue_paused');
            expect(blocker?.until).toBeNull();
            expect(blocker?.facts).toMatchObject({
              operator: paused.operator,
              reason: paused.reason,
              pausedAt: paused.pausedAt.toISOString(),
            });
            return;
          }
          if (runAt !== null && runAt > now) {
            expect(blocker?.code).toBe('not_due');
            const until = deadlineAt !== null && deadlineAt <= runAt ? deadlineAt : runAt;
            expect(blocker?.until).toEqual(until);
            return;
          }
          const { able, free } = claimers(input);
          const expected =
            able.length === 0 ? 'no_worker' : free === 0 ? 'queue_full' : 'claimable';
          expect(blocker?.code).toBe(expected);
          if (expected === 'claimable') expect(blocker?.facts.freeSlots).toBe(free);
          if (expected === 'queue_full') expect(blocker?.facts.workers).toBe(able.length);
        }),
        propertyParameters(),
      );
    },
    timeoutForRuns(2),
  );

  it(
    'a lease is stale unless its holder is live and it has not run out; the sweeper outcome is an edge the table gives the sweeper',
    () => {
      fc.assert(
        fc.property(
          facts,
          fc.constantFrom('leased', 'cancel_requested' as const),
          (drawn, state) => {
            const input = {
              ...drawn,
              task: { ...drawn.task, snapshot: { ...drawn.task.snapshot, state } },
            };
            const blocker = decideBlocker(input);
            const { leaseHolder, leaseExpiresAt } = input.task;
            // A cancel asked of a step awaiting children waits for them, not for a lease (R46).
            if (state === 'cancel_requested' && leaseHolder === null && input.children != null) {
              expect(blocker?.code).toBe('children_pending');
              return;
            }
            const live =
              input.workers.some((worker) => worker.holder === leaseHolder && worker.live) &&
              leaseExpiresAt !== null &&
              leaseExpiresAt > now;
            expect(blocker?.code).toBe(
              live ? (state === 'leased' ? 'running' : 'cancel_pending') : 'lease_stale',
            );
            if (blocker?.code === 'running') return;
            const then = blocker?.facts.then;
            if (input.policy === null) {
              expect(then).toBeNull();
              return;
            }
            const to = { retry: 'queued', dead: 'dead', cancel: 'cancelled' }[then as string];
            expect(to, String(then)).toBeDefined();
            const reason = blocker?.facts.reason as (typeof reasonCodes)[number];
            expect(findEdgeRule(state, to as TaskState, reason, 'sweeper')).toBeDefined();
          },
        ),
        propertyParameters(),
      );
    },
    timeoutForRuns(2),
  );
  it(
    'a step awaiting children, or asked to cancel while it does, is held by them: the documented facts, and a sentence whose counts are the facts',
    () => {
      fc.assert(
        fc.property(
          facts,
          fc.constantFrom('awaiting_children', 'cancel_requested' as const),
          (drawn, state) => {
            // Asked to cancel while awaiting children, a step holds no lease (R46).
            const leaseHolder = state === 'cancel_requested' ? null : drawn.task.leaseHolder;
            const input = {
              ...drawn,
              task: { ...drawn.task, leaseHolder, snapshot: { ...drawn.task.snapshot, state } },
            };
            const blocker = decideBlocker(input);
            const children = input.children ?? null;
            if (state === 'cancel_requested' && children === null) {
              expect(blocker?.code).not.toBe('children_pending');
              return;
            }
            if (blocker === null) throw new Error('a step awaiting children has no blocker');
            expect(blocker.code).toBe('children_pending');
            expect(blocker.until).toBeNull();
            const documented = Object.keys(blockerCodeMeanings.children_pending.facts);
            expect(Object.keys(blocker.facts).sort()).toEqual([...documented].sort());
            const { message } = blocker;
            expect(message).not.toMatch(/undefined|null|NaN|Invalid Date|\[object/);
            const cancelling = state === 'cancel_requested';
            if (children === null) {
              // Without facts about its children, it says only that it awaits them.
              const unknown = documented.map((key) => [
                key,
                key === 'cancelling' ? cancelling : null,
              ]);
              expect(blocker.facts).toEqual(Object.fromEntries(unknown));
              expect(message).not.toMatch(/\d/);
              return;
            }
            const { oldest } = children;
            expect(blocker.facts).toEqual({
              total: children.total,
              succeeded: children.succeeded,
              failed: children.failed,
              open: children.open,
              tolerated: children.allowedFailures,
              cancelling,
              oldest:
                oldest === null
                  ? null
                  : { workflowId: oldest.workflowId, state: oldest.state, blocker: oldest.blocker },
            });
            // The counts the sentence says are the facts: no failure said is none.
            const said = (pattern: RegExp) => message.match(pattern)?.slice(1).map(Number);
            expect(said(/(\d+) child workflows?\b/)).toEqual([blocker.facts.total]);
            expect(said(/(\d+) succeeded/)).toEqual([blocker.facts.succeeded]);
            expect(said(/(\d+) unfinished/)).toEqual([blocker.facts.open]);
            expect(said(/(\d+) failed/) ?? [0]).toEqual([blocker.facts.failed]);
            // R48: "(tolerated 1 of 2)": the failures it tolerates so far, of those it may.
            const allowed = children.allowedFailures;
            expect(said(/tolerated (\d+) of (\d+)/)).toEqual(
              allowed > 0 ? [Math.min(children.failed, allowed), allowed] : undefined,
            );
            // R48: it follows the tree to the oldest unfinished child and what holds it.
            if (oldest !== null) {
              expect(message).toContain(`${oldest.workflowId}, is ${oldest.state}`);
              if (oldest.blocker !== null) expect(message).toContain(oldest.blocker.message);
            }
          },
        ),
        propertyParameters(),
      );
    },
    timeoutForRuns(2),
  );
});
