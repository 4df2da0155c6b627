import { parseActor } from './actors';
import type { Blocker } from './blocker-codes';
import { type BlockerInput, blockerOf, isoOf, sweeperAbsence } from './blocker-input';
import { sweeperOutcome } from './blocker-outcomes';
import { duration, elapsed, moment } from './time-phrases';

/**
 * Blockers of a task that holds a lease (`leased`, `cancel_requested`). A lease is stale when
 * its holder has no live registry row (it stopped heartbeating) or the lease ran out: the
 * sweeper settles it when it expires. Otherwise it runs (or waits for its cancel to be
 * confirmed at the worker's next boundary).
 */
export function leaseBlocker(input: BlockerInput): Blocker {
  const { task, now } = input;
  const holder = task.leaseHolder ?? '(no holder)';
  const expiresAt = task.leaseExpiresAt;
  const registered = input.workers.find((worker) => worker.holder === task.leaseHolder);
  const expired = expiresAt === null || expiresAt.getTime() <= now.getTime();
  if (registered?.live !== true || expired) return staleBlocker(input, holder, expired);
  const since = task.lastEdge?.at ?? null;
  if (task.snapshot.state === 'cancel_requested') return cancelPending(input, holder);
  const attempt = task.snapshot.attempt;
  const timeout =
    input.policy === null
      ? ''
      : `; the attempt times out ${duration(input.policy.timeoutMs)} after it started`;
  return blockerOf(
    input,
    'running',
    `running on ${holder}${since === null ? '' : ` since ${moment(since, now)} (${elapsed(now.getTime() - since.getTime())})`}, attempt ${attempt} of ${task.maxAttempts}; the worker renews its lease (next expiry ${moment(expiresAt, now)})${timeout}`,
    null,
    {
      holder,
      since: isoOf(since),
      leaseExpiresAt: isoOf(expiresAt),
      attempt,
      maxAttempts: task.maxAttempts,
    },
  );
}

function staleBlocker(input: BlockerInput, holder: string, expired: boolean): Blocker {
  const { task, now } = input;
  const expiresAt = task.leaseExpiresAt ?? now;
  const registered = input.workers.find((worker) => worker.holder === task.leaseHolder);
  const why =
    registered === undefined
      ? `${holder}, which has no row in the worker registry`
      : registered.live
        ? `${holder}, which still heartbeats but did not renew the lease`
        : `${holder}, whose worker stopped heartbeating at ${moment(registered.heartbeatAt, now)} (${elapsed(now.getTime() - registered.heartbeatAt.getTime())} ago)`;
  const cancel =
    task.snapshot.state === 'cancel_requested' ? `cancel requested (${requester(input)}), ` : '';
  const when = expired
    ? `the lease expired at ${moment(expiresAt, now)}, so the sweeper's next pass`
    : `the lease expires at ${moment(expiresAt, now)}, then the sweeper`;
  const outcome = sweeperOutcome(input, 'lease_expired', expiresAt);
  const then =
    outcome === null
      ? "settles it by the step's policy (this process does not define the step)"
      : outcome.phrase;
  return blockerOf(
    input,
    'lease_stale',
    `${cancel}leased by ${why} (attempt ${task.snapshot.attempt}); ${when} ${then}${sweeperAbsence(input)}`,
    expiresAt,
    {
      holder,
      heartbeatAt: isoOf(registered?.heartbeatAt ?? null),
      leaseExpiresAt: isoOf(task.leaseExpiresAt),
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: outcome?.result ?? null,
      reason: outcome?.edge.reason ?? null,
      attempt: task.snapshot.attempt,
    },
  );
}

function cancelPending(input: BlockerInput, holder: string): Blocker {
  const { task, now } = input;
  const requestedAt = task.lastEdge?.at ?? null;
  const expiresAt = task.leaseExpiresAt ?? now;
  const outcome = sweeperOutcome(input, 'lease_expired', expiresAt);
  const then =
    outcome === null
      ? "the sweeper settles it by the step's policy (this process does not define the step)"
      : `the sweeper ${outcome.phrase}`;
  const at =
    requestedAt === null
      ? ''
      : ` at ${moment(requestedAt, now)} (${elapsed(now.getTime() - requestedAt.getTime())} ago)`;
  return blockerOf(
    input,
    'cancel_pending',
    `cancel requested (${requester(input)})${at}; ${holder} has not reached a boundary yet (attempt ${task.snapshot.attempt}); the lease is no longer renewed: unless the step confirms the cancel or finishes first, at ${moment(expiresAt, now)} ${then}${sweeperAbsence(input)}`,
    expiresAt,
    {
      holder,
      requestedAt: isoOf(requestedAt),
      requestedBy: task.lastEdge?.actor ?? null,
      leaseExpiresAt: isoOf(task.leaseExpiresAt),
      // biome-ignore lint/suspicious/noThenProperty: a fact named by the contract; a string, never callable, so never a thenable.
      then: outcome?.result ?? null,
      reason: outcome?.edge.reason ?? null,
    },
  );
}

/** "by alice: "wrong version"", "by client". */
function requester(input: BlockerInput): string {
  const edge = input.task.lastEdge;
  if (edge === null || edge.reason !== 'cancel_requested') return 'by an earlier request';
  let who = edge.actor;
  try {
    who = parseActor(edge.actor).name ?? parseActor(edge.actor).kind;
  } catch {
    // An actor string the parser does not know is shown as stored.
  }
  const reason = edge.detail?.operatorReason;
  return `by ${who}${typeof reason === 'string' ? `: "${reason}"` : ''}`;
}
