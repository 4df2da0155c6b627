import type { Blocker } from './blocker-codes';
import { type BlockerInput, blockerOf, earliest, isoOf, sweeperAbsence } from './blocker-input';
import { sweeperOutcome } from './blocker-outcomes';
import type { ReasonCode } from './machine-table';
import { duration, elapsed, moment } from './time-phrases';

/** Blockers of tasks that wait for something other than a worker: upstream steps, time, the outside world. */

/** A `pending` task: which of the steps it runs after have not succeeded, and in which state. */
export function upstreamBlocker(input: BlockerInput): Blocker {
  if (input.upstream === null) {
    return blockerOf(
      input,
      'upstream_pending',
      `waiting for upstream steps (this process does not define workflow ${input.workflow.name}, so it cannot say which)`,
      null,
      { upstream: [] },
    );
  }
  const open = input.upstream.filter((upstream) => upstream.state !== 'succeeded');
  const dead = open.filter((upstream) => upstream.state === 'dead').map((up) => up.step);
  const list = open.map((upstream) => `${upstream.step} (${upstream.state})`).join(', ');
  const replay =
    dead.length === 0
      ? ''
      : `; ${dead.join(', ')} ${dead.length === 1 ? 'is' : 'are'} dead, so it runs only after an operator replays ${dead.length === 1 ? 'it' : 'them'}`;
  return blockerOf(
    input,
    'upstream_pending',
    open.length === 0
      ? 'its upstream steps all succeeded; it is promoted by the edge that settles the last of them'
      : `waiting for upstream ${open.length === 1 ? 'step' : 'steps'} ${list}${replay}`,
    null,
    { upstream: open.map(({ step, state }) => ({ step, state })) },
  );
}

const backoffReasons: readonly ReasonCode[] = [
  'retry_scheduled',
  'lease_expired',
  'receipt_rejected',
  'receipt_timeout',
];

/** A `queued` task whose `run_at` is still ahead: a backoff, a delay, a snooze or a start time. */
export function notDueBlocker(input: BlockerInput, runAt: Date): Blocker {
  const { task, now } = input;
  const edge = task.lastEdge;
  const due = `due ${moment(runAt, now)} (in ${elapsed(runAt.getTime() - now.getTime())})`;
  const attempt = task.snapshot.attempt;
  const deadlineAt = task.snapshot.deadlineAt;
  const deadlineFirst = deadlineAt !== null && deadlineAt.getTime() <= runAt.getTime();
  const deadline = deadlineFirst
    ? `; its deadline ${moment(deadlineAt, now)} comes first: then it ends dead (deadline_exceeded_before_start)${sweeperAbsence(input)}`
    : '';
  const facts: Record<string, unknown> = {
    runAt: isoOf(runAt),
    attempt,
    ...(deadlineFirst ? { deadlineAt: isoOf(deadlineAt) } : {}),
  };
  const until = earliest(runAt, deadlineFirst ? deadlineAt : null);
  if (edge !== null && edge.reason === 'snoozed') {
    const reason = typeof edge.detail?.reason === 'string' ? edge.detail.reason : null;
    return blockerOf(
      input,
      'not_due',
      `snoozed until ${moment(runAt, now)} (in ${elapsed(runAt.getTime() - now.getTime())})${reason === null ? '' : `: ${reason}`} (the attempt is not counted)${deadline}`,
      until,
      { ...facts, cause: 'snooze', reason },
    );
  }
  if (edge !== null && backoffReasons.includes(edge.reason)) {
    const error =
      edge.errorCategory === null
        ? ''
        : ` (${edge.errorCategory}${edge.errorSummary ? `: ${edge.errorSummary}` : ''})`;
    const after =
      edge.reason === 'lease_expired'
        ? `attempt ${attempt}'s lease expired without renewal`
        : edge.reason === 'receipt_timeout'
          ? `no receipt came in time for attempt ${attempt}`
          : edge.reason === 'receipt_rejected'
            ? `attempt ${attempt}'s receipt was rejected${error}`
            : `attempt ${attempt} of ${task.maxAttempts} failed${error}`;
    // R51: the wait the step asked for; a throttled retry is due exactly then, no backoff.
    const asked = typeof edge.detail?.retryAfterMs === 'number' ? edge.detail.retryAfterMs : null;
    const wait =
      asked === null
        ? `retry backoff after ${after}`
        : edge.errorCategory === 'throttled'
          ? `retry when the step asked, ${duration(asked)} after ${after}`
          : `retry backoff after ${after}, on top of the ${duration(asked)} the step asked to wait`;
    return blockerOf(input, 'not_due', `queued, ${due}: ${wait}${deadline}`, until, {
      ...facts,
      cause: 'backoff',
      errorCategory: edge.errorCategory,
      errorSummary: edge.errorSummary,
      retryAfterMs: asked,
    });
  }
  const delayMs = typeof edge?.detail?.delayMs === 'number' ? edge.detail.delayMs : null;
  if (delayMs !== null) {
    const after =
      edge?.reason === 'upstream_succeeded' ? 'after its upstream steps' : 'after acceptance';
    return blockerOf(
      input,
      'not_due',
      `queued, ${due}: delayed ${duration(delayMs)} ${after}${deadline}`,
      until,
      { ...facts, cause: 'delay' },
    );
  }
  return blockerOf(input, 'not_due', `queued, ${due}: submitted to start then${deadline}`, until, {
    ...facts,
    cause: 'scheduled',
  });
}

/** An `awaiting_receipt` task: since when, until when, what then, and what is still being sent. */
export function receiptBlocker(input: BlockerInput): Blocker {
  const { task, now } = input;
  const since = task.lastEdge?.at ?? null;
  const timeoutAt = task.snapshot.state === 'awaiting_receipt' ? task.receiptDeadlineAt : null;
  const outcome = timeoutAt === null ? null : sweeperOutcome(input, 'receipt_timeout', timeoutAt);
  const sending = task.sending
    .map(
      (message) =>
        `${message.channel} (${message.attempts} ${message.attempts === 1 ? 'attempt' : 'attempts'}${message.lastError === null ? '' : `, last error: ${message.lastError}`})`,
    )
    .join(', ');
  const sendingPhrase =
    sending === '' ? '' : `; the outbox is still delivering its message on ${sending}`;
  const deadline =
    timeoutAt === null
      ? ''
      : `; if none comes by ${moment(timeoutAt, now)}, the sweeper ${outcome?.phrase ?? "settles it by the step's policy (this process does not define the step)"}${sweeperAbsence(input)}`;
  return blockerOf(
    input,
    'awaiting_receipt',
    `effect submitted${since === null ? '' : ` at ${moment(since, now)} (${elapsed(now.getTime() - since.getTime())} ago)`}, awaiting its receipt${task.receiptId === null ? '' : ` ${task.receiptId}`}${sendingPhrase}${deadline}`,
    timeoutAt,
    {
      since: isoOf(since),
      timeoutAt: isoOf(timeoutAt),
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: outcome?.result ?? null,
      sending: task.sending.map(({ channel, attempts, lastError }) => ({
        channel,
        attempts,
        lastError,
      })),
    },
  );
}

/** A `waiting` event step: for which event, since when, and how the wait ends (R37, R39, R42). */
export function eventBlocker(input: BlockerInput): Blocker {
  const { task, now } = input;
  const timeoutAt = task.snapshot.waitTimeoutAt;
  const name = task.eventName ?? 'its event';
  const key =
    task.eventKey === null
      ? ' (its key could not be computed, so no event can match; the edge says why)'
      : ` (key ${task.eventKey})`;
  const since = task.waitSince;
  const deadlineAt = task.snapshot.deadlineAt;
  const deadlineFirst =
    deadlineAt !== null && (timeoutAt === null || deadlineAt.getTime() < timeoutAt.getTime());
  const outcome = timeoutAt === null ? null : sweeperOutcome(input, 'wait_timeout', timeoutAt);
  const ends = deadlineFirst
    ? `; the workflow's deadline ${moment(deadlineAt, now)} comes first: then it ends dead (deadline_exceeded)`
    : timeoutAt === null
      ? ''
      : `, gives up ${moment(timeoutAt, now)}: then it ${outcome?.result === 'succeed' ? 'succeeds with its declared onTimeout output' : outcome?.result === 'dead' ? 'ends dead (event_timeout)' : "ends by the step's policy (this process does not define the step)"}`;
  return blockerOf(
    input,
    'waiting_for_event',
    `waiting for ${name}${key}${since === null ? '' : ` since ${moment(since, now)} (${elapsed(now.getTime() - since.getTime())})`}${ends}${sweeperAbsence(input)}`,
    earliest(timeoutAt, deadlineFirst ? deadlineAt : null),
    {
      name: task.eventName,
      key: task.eventKey,
      since: isoOf(since),
      timeoutAt: isoOf(timeoutAt),
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: deadlineFirst ? 'dead' : (outcome?.result ?? null),
    },
  );
}
