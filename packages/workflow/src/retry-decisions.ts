import { type ErrorCategory, isRetryableCategory } from './error-categories';
import {
  type Choice,
  type ChoiceOrRefusal,
  choose,
  type DecideInput,
  dead,
  deadlinePassed,
  notApplicable,
} from './machine-choice';
import type { ReasonCode } from './machine-table';
import { retryRunAt } from './retry-policy';

/** Retry-or-dead is decided here, before the edge is chosen (category, attempts, deadline). */
export function decideFailure(
  input: DecideInput,
  category: ErrorCategory,
  summary: string,
  retryAfterMs: number | undefined,
): ChoiceOrRefusal {
  const { task } = input;
  if (task.state === 'cancel_requested') {
    if (!isRetryableCategory(category)) return dead('non_retryable_error', category, summary);
    // No further attempt will run, so the cancel is confirmed by the failure itself.
    return choose('cancelled', 'cancel_confirmed', {
      errorCategory: category,
      errorSummary: summary,
    });
  }
  if (task.state !== 'leased') return notApplicable(task, 'fail');
  if (deadlinePassed(task, input.now)) return dead('deadline_exceeded', category, summary);
  if (!isRetryableCategory(category)) return dead('non_retryable_error', category, summary);
  return retryOrDead(input, {
    retryReason: 'retry_scheduled',
    deadReason: 'attempts_exhausted',
    deadlineReason: 'deadline_exceeded',
    category,
    summary,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

export function decideLeaseExpiry(input: DecideInput): ChoiceOrRefusal {
  const { task, policy } = input;
  const summary = 'the lease expired without renewal (worker stopped or stalled)';
  // Evidence turns "maybe sent" into "sent, outcome to be asked": safe to run again.
  const effectUncertain = !policy.reentrant && task.effectStarted && task.evidence === null;
  if (task.state === 'cancel_requested') {
    // `cancelled` promises no effect happened or will; once one started, even a reentrant
    // step cannot promise that, and it may not run again either: a human decides.
    if (task.effectStarted) return dead('lease_expired_effect_uncertain', 'unknown', summary);
    return choose('cancelled', 'lease_expired', {
      errorCategory: 'unknown',
      errorSummary: summary,
    });
  }
  if (task.state !== 'leased') return notApplicable(task, 'lease_expired');
  if (effectUncertain) return dead('lease_expired_effect_uncertain', 'unknown', summary);
  const decided = retryOrDead(input, {
    retryReason: 'lease_expired',
    deadReason: 'attempts_exhausted',
    deadlineReason: 'deadline_exceeded',
    category: 'unknown',
    summary,
  });
  // The log says why a non-reentrant step may run again: its effect has evidence (R21).
  return task.evidence !== null && task.effectStarted && decided.to === 'queued'
    ? { ...decided, detail: { ...decided.detail, evidence: task.evidence } }
    : decided;
}

export interface RetryOrDead {
  readonly retryReason: ReasonCode;
  /** Reason when the category is not retryable or the attempts are used up. */
  readonly deadReason: ReasonCode;
  /** Reason when the next attempt would start after the deadline (defaults to deadReason). */
  readonly deadlineReason?: ReasonCode;
  readonly category: ErrorCategory;
  readonly summary: string;
  /** The wait the step asked for (StepError's `retryAfterMs`, R51): kept on the edge's detail. */
  readonly retryAfterMs?: number;
}

/** Another attempt if the category, attempt budget and deadline allow it; dead otherwise. */
export function retryOrDead(input: DecideInput, choice: RetryOrDead): Choice {
  const { task, policy, now, random } = input;
  const { retryReason, deadReason, category, summary } = choice;
  if (!isRetryableCategory(category)) return dead(deadReason, category, summary);
  if (task.attempt >= policy.maxAttempts) return dead(deadReason, category, summary);
  const { retryAfterMs } = choice;
  const runAt = retryRunAt(task.attempt, policy.backoff, now, random, category, retryAfterMs);
  if (task.deadlineAt !== null && runAt.getTime() >= task.deadlineAt.getTime()) {
    return dead(choice.deadlineReason ?? deadReason, category, summary);
  }
  return choose('queued', retryReason, {
    errorCategory: category,
    errorSummary: summary,
    // The log says why it waits: the asked wait is on the retry edge (R51).
    detail: {
      runAt: runAt.toISOString(),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
    runAt,
  });
}
