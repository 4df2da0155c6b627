import { parseActor } from './actors';
import { claimRule, leaseHoldingStates } from './edge-lookup';
import type { ExplanationNote } from './explain';
import type { ReasonCode } from './machine-table';
import type { Transition } from './transition';

/**
 * How an attempt ended (R56): `settled` (its holder, or the outbox or a caller, wrote the edge
 * that ended it), `lease_lost` (the sweeper took the task from it), `stale` (its result came
 * after its lease was lost and was refused), or `running` (no edge has ended it yet).
 */
export const attemptOutcomes = ['settled', 'lease_lost', 'stale', 'running'] as const;
export type AttemptOutcome = (typeof attemptOutcomes)[number];

/**
 * A worker's result that came after its claim's lease was lost and was refused (R7): the one
 * part of an attempt the transition log does not hold, so the engine stores it beside it.
 */
export interface StaleResult {
  readonly taskId: string;
  /** The lease epoch of the claim the result was fenced on. */
  readonly epoch: number;
  readonly holder: string;
  /** Database time of the refusal. */
  readonly refusedAt: Date;
}

/** One claim of a task (R56), read off the log: its claim edge and the edge that ended it. */
export interface TaskAttempt {
  readonly taskId: string;
  readonly step: string;
  /** The task's attempt counter as the claim set it (a replay starts it again from 1). */
  readonly attempt: number;
  /** The claim's lease epoch: 1 for the task's first claim, one more for each claim after. */
  readonly epoch: number;
  readonly holder: string;
  readonly leasedAt: Date;
  /** When the edge that released the lease was written; null while it runs. */
  readonly endedAt: Date | null;
  readonly outcome: AttemptOutcome;
  /** The reason of the edge that ended it; null while it runs. */
  readonly reason: ReasonCode | null;
  /** When its late result was refused; null unless `stale`. */
  readonly refusedAt: Date | null;
}

/**
 * The attempts of task `taskId`, oldest first, from log rows in log order (rows of other tasks
 * and workflow rows are skipped) and the stale results stored for it. The claim edge is the
 * only edge that takes a lease and every claim appends one, so the n-th claim row of a task is
 * its claim with lease epoch n, replays included. An attempt ends at the first edge after its
 * claim into a state that holds no lease.
 */
export function taskAttempts(
  taskId: string,
  transitions: readonly Transition[],
  stale: readonly StaleResult[],
): TaskAttempt[] {
  const rows = transitions.filter((row) => row.taskId === taskId);
  const attempts: TaskAttempt[] = [];
  let epoch = 0;
  rows.forEach((row, index) => {
    if (row.to !== claimRule.to || !claimRule.reasons.includes(row.reason)) return;
    epoch += 1;
    const holder = actorName(row.actor);
    const ending = rows
      .slice(index + 1)
      .find((later) => !(leaseHoldingStates as readonly string[]).includes(later.to));
    const refused = stale.find(
      (result) => result.taskId === taskId && result.epoch === epoch && result.holder === holder,
    );
    attempts.push({
      taskId,
      step: row.step ?? '',
      attempt: row.attempt,
      epoch,
      holder,
      leasedAt: row.at,
      endedAt: ending?.at ?? null,
      outcome:
        refused !== undefined
          ? 'stale'
          : ending === undefined
            ? 'running'
            : actorKind(ending.actor) === 'sweeper'
              ? 'lease_lost'
              : 'settled',
      reason: ending?.reason ?? null,
      refusedAt: refused?.refusedAt ?? null,
    });
  });
  return attempts;
}

/**
 * Whether the log leaves room for a stale result (R56) of task `taskId`, or of any task when
 * `taskId` is null: a result is refused only after its lease was lost, so only a claim the
 * sweeper ended, or one nothing has ended yet, can have one. Readers skip reading the stored
 * stale results otherwise.
 */
export function mayHaveStaleResults(
  transitions: readonly Transition[],
  taskId: string | null = null,
): boolean {
  const claimed = new Set(
    transitions.flatMap((row) =>
      row.taskId !== null &&
      (taskId === null || row.taskId === taskId) &&
      row.to === claimRule.to &&
      claimRule.reasons.includes(row.reason)
        ? [row.taskId]
        : [],
    ),
  );
  return [...claimed].some((id) =>
    taskAttempts(id, transitions, []).some((attempt) => attempt.outcome !== 'settled'),
  );
}

/**
 * What `explain` says of each stale attempt of a workflow's tasks (R56), at its refusal: "attempt 2
 * by w7 finished after its lease was lost; its result was refused; check the platform for its
 * effect".
 */
export function staleAttemptNotes(
  transitions: readonly Transition[],
  stale: readonly StaleResult[],
): ExplanationNote[] {
  const taskIds = [...new Set(stale.map((result) => result.taskId))];
  return taskIds.flatMap((taskId) =>
    taskAttempts(taskId, transitions, stale).flatMap((attempt) =>
      attempt.outcome === 'stale' && attempt.refusedAt !== null
        ? [
            {
              at: attempt.refusedAt,
              step: attempt.step,
              text: `attempt ${attempt.attempt} by ${attempt.holder} finished after its lease was lost; its result was refused; check the platform for its effect`,
            },
          ]
        : [],
    ),
  );
}

/** The holder of a `worker:<holder>` actor (the actor as written when it has no name). */
function actorName(actor: string): string {
  try {
    return parseActor(actor).name ?? actor;
  } catch {
    return actor;
  }
}

function actorKind(actor: string): string {
  try {
    return parseActor(actor).kind;
  } catch {
    return actor;
  }
}
