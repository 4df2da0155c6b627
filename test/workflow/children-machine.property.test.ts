/**
 * Model-based property tests of steps with child workflows (R43–R47), in the pure
 * machine and its reducer. The model (children-model.ts) is the test's own record of a run,
 * written from the contract; commands start children from `leased` and under a cancel request,
 * promote map steps (lists of any length, empty included, and lists that fail), end children
 * one at a time (monotonically growing tallies, tolerances 0..n), cancel steps and workflows
 * while they await children, let the deadline pass, and replay dead steps one by one or in
 * bulk. After every command: only edges of the edge table, R25, the parent by the aggregation
 * table and by `aggregateWorkflowState`, and no step awaiting children that decided it. Plus:
 * `decideTaskEdge`, for the children's events from any snapshot, takes exactly the edge the edge
 * table and R43–R47 give, or refuses.
 *
 * A failure prints a seed, a path and a replayPath; replay it with
 *   CAUSEWAY_FC_SEED=<seed> CAUSEWAY_FC_PATH=<path> CAUSEWAY_FC_REPLAY_PATH=<replayPath> \
 *     pnpm exec vitest run test/workflow/children-machine.property.test.ts
 */
import {
  type ChildTally,
  decideTaskEdge,
  defaultRetryPolicy,
  type PlannedTransition,
  type ReasonCode,
  type RetryPolicy,
  type TaskEvent,
  type TaskState,
  taskStates,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  specActorKind,
  specAllowsEdge,
  specCancellers,
  specChildrenEdgeRows,
} from '../helpers/contract-tables';
import {
  actorKindArbitrary,
  actorOf,
  commandsReplayPath,
  isReplaying,
  numRuns,
  propertyParameters,
  timeoutForRuns,
} from './arbitraries';
import { childrenWorkflowSpecArbitrary, childTallyArbitrary } from './children-arbitraries';
import {
  cancelTaskCommand,
  cancelWorkflowCommand,
  childEndsCommand,
  claimCommand,
  completeCommand,
  failCommand,
  startChildrenCommand,
} from './children-commands';
import { type ChildOutcome, specChildrenVerdict } from './children-contract';
import {
  advanceClockCommand,
  bulkRequeueCommand,
  deadlineCheckCommand,
  deadlinePassesCommand,
  replayCommand,
} from './children-deadline-and-replay-commands';
import { acceptedAtMs, listProblem } from './children-model';
import { setupChildren } from './children-setup';
import { taskSnapshot } from './task-snapshots';

const commandArbitrary = fc.oneof(
  { arbitrary: claimCommand, weight: 6 },
  { arbitrary: completeCommand, weight: 3 },
  { arbitrary: failCommand, weight: 2 },
  { arbitrary: startChildrenCommand, weight: 6 },
  { arbitrary: childEndsCommand, weight: 12 },
  { arbitrary: cancelTaskCommand, weight: 2 },
  { arbitrary: cancelWorkflowCommand, weight: 1 },
  { arbitrary: deadlinePassesCommand, weight: 1 },
  { arbitrary: deadlineCheckCommand, weight: 1 },
  { arbitrary: replayCommand, weight: 3 },
  { arbitrary: bulkRequeueCommand, weight: 1 },
  { arbitrary: advanceClockCommand, weight: 2 },
);

const edgeKey = (from: TaskState | null, to: TaskState, reason: ReasonCode) =>
  `${from ?? '∅'} → ${to} (${reason})`;

describe('steps with child workflows: model-based', () => {
  it(
    'every command sequence keeps R43–R47 (start, settle, tolerate, cancel, deadline, replay), R25 and the aggregation table',
    () => {
      const seen = new Set<string>();
      fc.assert(
        fc.property(
          childrenWorkflowSpecArbitrary,
          fc.commands([commandArbitrary], {
            maxCommands: 60,
            size: 'max',
            ...(commandsReplayPath === undefined ? {} : { replayPath: commandsReplayPath }),
          }),
          (spec, commands) => {
            let log: readonly PlannedTransition[] = [];
            fc.modelRun(() => {
              const setup = setupChildren(spec);
              log = setup.model.log;
              return setup;
            }, commands);
            for (const row of log) {
              if (row.kind !== 'task') continue;
              const { from, to, reason, actor } = row.edge;
              seen.add(edgeKey(from, to, reason));
              seen.add(`${edgeKey(from, to, reason)} by ${specActorKind(actor)}`);
            }
          },
        ),
        propertyParameters(),
      );
      // With 1,000+ fresh runs every children edge of the edge table must have been taken, by
      // its actor where the row names one (the system's cancel_after_submit is R46's, not R14's).
      const missing = specChildrenEdgeRows.flatMap((row) =>
        row.to.flatMap((to) =>
          row.reasons
            .map((reason) => edgeKey(row.from, to, reason))
            .map((key) => (row.actors.length === 1 ? `${key} by ${row.actors[0]}` : key))
            .filter((key) => !seen.has(key)),
        ),
      );
      if (!isReplaying && numRuns >= 1_000) expect(missing).toEqual([]);
    },
    timeoutForRuns(40),
  );
});

// =============================================================================================
// decideTaskEdge for the children's events, from any snapshot

/** The children a tally counts, as a list (`specChildrenVerdict` reads the list). */
function outcomesOf(tally: ChildTally): ChildOutcome[] {
  const repeat = (outcome: ChildOutcome, times: number) =>
    Array.from({ length: times }, () => outcome);
  return [
    ...repeat('succeeded', tally.succeeded),
    ...repeat('failed', tally.failed),
    ...repeat('open', tally.open),
  ];
}

/** The children's events, mostly from the actor the edge table expects, sometimes from anyone. */
const childrenEventArbitrary: fc.Arbitrary<TaskEvent> = fc.oneof(
  fc.constant({ type: 'promote' } as const),
  actorKindArbitrary('sweeper').map(
    (kind) => ({ type: 'deadline_passed', actor: actorOf(kind) }) as const,
  ),
  actorKindArbitrary(...specCancellers).map(
    (kind) => ({ type: 'cancel', actor: actorOf(kind) }) as const,
  ),
  fc.record({
    type: fc.constant('start_children' as const),
    actor: actorKindArbitrary('worker').map(actorOf),
    count: fc.integer({ min: 0, max: 5 }),
  }),
  fc.record({
    type: fc.constant('children_changed' as const),
    actor: actorKindArbitrary('system').map(actorOf),
    tally: childTallyArbitrary,
  }),
  fc.record({
    type: fc.constant('replay' as const),
    actor: actorKindArbitrary('operator').map(actorOf),
    reason: fc.constantFrom('children fixed', ''),
    bulk: fc.boolean(),
  }),
);

/** Mostly the states the children's events mean something in, sometimes any. */
const childrenStateArbitrary: fc.Arbitrary<TaskState> = fc.oneof(
  { arbitrary: fc.constantFrom<TaskState>('awaiting_children', 'cancel_requested'), weight: 3 },
  { arbitrary: fc.constantFrom<TaskState>('pending', 'leased', 'dead'), weight: 2 },
  { arbitrary: fc.constantFrom(...taskStates), weight: 1 },
);

/**
 * The edge R43–R47 mean for a children event, whoever sends it; null: it means none. The edge
 * table's actor column then says whether the sender may take it.
 */
function intendedEdge(
  state: TaskState,
  policy: RetryPolicy,
  event: TaskEvent,
  facts: { deadlinePassed: boolean; hasChildren: boolean; listFails: boolean },
): { to: TaskState; reason: ReasonCode } | null | 'not judged' {
  switch (event.type) {
    case 'promote':
      if (state !== 'pending' || !policy.map) return 'not judged';
      // R44, R58: a map step starts its children, or ends dead if its list failed.
      return facts.listFails
        ? { to: 'dead', reason: 'step_input_failed' }
        : { to: 'awaiting_children', reason: 'children_started' };
    case 'start_children':
      if (state === 'leased') return { to: 'awaiting_children', reason: 'children_started' };
      // R46: a step that returns startChildren after a cancel was requested starts none. A step
      // asked to cancel while it awaits its children holds no lease: no worker's result applies.
      if (state === 'cancel_requested') {
        return facts.hasChildren ? null : { to: 'cancelled', reason: 'cancel_confirmed' };
      }
      return null;
    case 'children_changed': {
      if (state !== 'awaiting_children' && state !== 'cancel_requested') return null;
      const { tally } = event;
      const children = { outcomes: outcomesOf(tally), allowedFailures: tally.allowedFailures };
      return specChildrenVerdict(children, state === 'cancel_requested');
    }
    case 'deadline_passed':
      if (state !== 'awaiting_children') return 'not judged';
      return facts.deadlinePassed ? { to: 'dead', reason: 'deadline_exceeded' } : null;
    case 'cancel':
      if (state !== 'awaiting_children') return 'not judged';
      return { to: 'cancel_requested', reason: 'cancel_requested' };
    case 'replay':
      if (state !== 'dead' || !(policy.map || facts.hasChildren)) return 'not judged';
      if (event.reason.trim() === '') return null;
      // R47 replays a step's children; R58: a map step whose list still fails starts none.
      if (policy.map && facts.listFails) return null;
      return { to: 'awaiting_children', reason: event.bulk ? 'bulk_requeue' : 'manual_replay' };
    default:
      return 'not judged';
  }
}

describe('decideTaskEdge: the children events from any snapshot', () => {
  it(
    'takes exactly the edge the edge table and R43–R47 give (start, settle by tally and tolerance, map promotion, deadline, cancel, replay), or refuses',
    () => {
      fc.assert(
        fc.property(
          childrenStateArbitrary,
          fc.boolean(),
          childrenEventArbitrary,
          fc.record({
            deadlinePassed: fc.boolean(),
            hasChildren: fc.boolean(),
            listFails: fc.boolean(),
          }),
          (state, map, event, facts) => {
            const now = new Date(acceptedAtMs);
            const policy: RetryPolicy = {
              ...defaultRetryPolicy,
              ...(map ? { maxAttempts: 1, map } : {}),
            };
            const task = taskSnapshot(now, {
              state,
              attempt: state === 'leased' || state === 'cancel_requested' ? 1 : 0,
              deadlineAt: new Date(acceptedAtMs + (facts.deadlinePassed ? 0 : 1)),
            });
            const decision = decideTaskEdge({
              task,
              policy,
              event,
              now,
              random: () => 0.5,
              hasChildren: facts.hasChildren,
              inputProblem: facts.listFails ? listProblem : null,
            });
            const intended = intendedEdge(state, policy, event, facts);
            if (intended === 'not judged') return;
            const actor = 'actor' in event ? event.actor.kind : 'system';
            if (intended === null || !specAllowsEdge(state, intended.to, intended.reason, actor)) {
              expect(decision.ok, JSON.stringify(decision)).toBe(false);
              return;
            }
            if (!decision.ok) throw new Error(`refused: ${decision.refusal.message}`);
            expect(edgeKey(decision.edge.from, decision.edge.to, decision.edge.reason)).toBe(
              edgeKey(state, intended.to, intended.reason),
            );
            expect(specActorKind(decision.edge.actor)).toBe(actor);
            if (intended.to === 'dead') expect(decision.edge.errorCategory).not.toBeNull();
          },
        ),
        propertyParameters(),
      );
    },
    timeoutForRuns(5),
  );
});
