import type { Actor } from './actors';
import type { EdgeRule, ReasonCode, TaskState } from './machine-table';
import { taskEdges } from './machine-table';
import { type Derived, inexpressibleEffects, sameEffects } from './one-statement-derivation';
import { defaultRetryPolicy } from './retry-policy';
import { decideTaskEdge, type TaskEdge } from './task-machine';
import type { TaskSnapshot } from './task-snapshot';

/**
 * What an event does to a task waiting for it, as data, so the engine can write a send in one
 * SQL statement without re-implementing the machine: the edge from the waiting state and the
 * row whose effects it writes. The edge's detail (the event's id and the sender's reason) is
 * per event: `eventReceivedEdge` asks the machine for it.
 */
export interface EventOutcomes {
  readonly from: TaskState;
  readonly to: TaskState;
  readonly reason: ReasonCode;
  readonly rule: EdgeRule;
}

const waitingSamples: readonly TaskSnapshot[] = [
  {
    state: 'waiting',
    attempt: 0,
    effectStarted: false,
    evidence: null,
    replayCount: 0,
    runAt: null,
    deadlineAt: null,
    lastErrorCategory: null,
    lastError: null,
    waitTimeoutAt: new Date(9_000_000),
  },
  {
    state: 'waiting',
    attempt: 3,
    effectStarted: true,
    evidence: 'ev-1',
    replayCount: 2,
    runAt: null,
    deadlineAt: new Date(500_000),
    lastErrorCategory: 'network',
    lastError: 'reset',
    waitTimeoutAt: new Date(400_000),
  },
];

const now = new Date(1_000_000);

/** The machine's edge for an event that reaches a waiting task (R38). */
export function eventReceivedEdge(
  actor: Actor,
  eventId: string,
  reason: string | undefined,
  task: TaskSnapshot = waitingSamples[0] as TaskSnapshot,
): TaskEdge {
  const decision = decideTaskEdge({
    task,
    policy: defaultRetryPolicy,
    event: {
      type: 'event_received',
      actor,
      eventId,
      ...(reason === undefined ? {} : { reason }),
    },
    now,
    random: () => 0,
  });
  if (!decision.ok)
    throw new Error(`an event cannot reach a waiting task: ${decision.refusal.message}`);
  return decision.edge;
}

/**
 * Derives the outcomes, or says why one statement cannot write them: the edge must not depend
 * on the task beyond its state (so one row of constants serves every waiting task), and its
 * row's effects must be constants. `rules` is the edge table whose effects the statement would
 * write (the shipped one unless a test asks otherwise).
 */
export function deriveEventOutcomes(
  rules: readonly EdgeRule[] = taskEdges,
): Derived<EventOutcomes> {
  let found: EventOutcomes | null = null;
  for (const actor of [{ kind: 'client' }, { kind: 'operator', name: 'derive' }] as const) {
    for (const task of waitingSamples) {
      let edge: TaskEdge;
      try {
        edge = eventReceivedEdge(actor, 'e-1', 'why', task);
      } catch (error) {
        return { ok: false, reason: (error as Error).message };
      }
      if (edge.errorCategory !== null || edge.errorSummary !== null) {
        return { ok: false, reason: `${edge.from} → ${edge.to} (${edge.reason}) records an error` };
      }
      if (edge.attempt !== task.attempt) {
        return { ok: false, reason: 'an event changes the attempt the task is on' };
      }
      const rule = rules.find(
        (row) => row.from === edge.from && row.to === edge.to && row.reasons.includes(edge.reason),
      );
      if (rule === undefined) return { ok: false, reason: `no row for ${edge.from} → ${edge.to}` };
      const problem = inexpressibleEffects(rule);
      if (problem !== null) return { ok: false, reason: problem };
      if (rule.lease === 'take') return { ok: false, reason: 'an event takes a lease' };
      if (
        found !== null &&
        (found.to !== edge.to || found.reason !== edge.reason || !sameEffects(found.rule, rule))
      ) {
        return { ok: false, reason: 'an event takes different edges from different waiting tasks' };
      }
      found = { from: task.state, to: edge.to, reason: edge.reason, rule };
    }
  }
  return found === null
    ? { ok: false, reason: 'no waiting task to derive from' }
    : { ok: true, outcomes: found };
}
