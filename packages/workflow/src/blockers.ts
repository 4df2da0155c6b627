import { childrenBlocker } from './blocker-children';
import type { Blocker } from './blocker-codes';
import { concurrencyBlocker } from './blocker-concurrency';
import {
  type BlockerInput,
  blockerOf,
  isoOf,
  liveWorkers,
  type RegisteredWorker,
  sweeperAbsence,
} from './blocker-input';
import { leaseBlocker } from './blocker-leases';
import { pausedBlocker } from './blocker-pause';
import { rateBlocker, rateHolds } from './blocker-rate';
import { eventBlocker, notDueBlocker, receiptBlocker, upstreamBlocker } from './blocker-waits';
import { isTerminalTaskState } from './edge-lookup';
import { elapsed, moment } from './time-phrases';

/**
 * What blocks a task right now (issue 18), decided from facts the engine read in one snapshot:
 * one blocker per non-terminal task, null for a terminal one. Pure: the registry's liveness,
 * the queue's load and database time are inputs. What happens when the sweeper acts (a lease
 * runs out, a receipt or wait times out) is asked of the machine itself (`sweeperOutcome`).
 */
export function decideBlocker(input: BlockerInput): Blocker | null {
  const { task, now } = input;
  const { state } = task.snapshot;
  if (isTerminalTaskState(state)) return null;
  switch (state) {
    case 'pending':
      return upstreamBlocker(input);
    case 'waiting':
      return eventBlocker(input);
    case 'awaiting_receipt':
      return receiptBlocker(input);
    case 'awaiting_children':
      return childrenBlocker(input);
    case 'leased':
      return leaseBlocker(input);
    case 'cancel_requested':
      // A cancel asked of a step awaiting children waits for them, not for a lease.
      return input.task.leaseHolder === null && input.children != null
        ? childrenBlocker(input)
        : leaseBlocker(input);
    case 'queued': {
      if (input.queue.paused !== null) return pausedBlocker(input, input.queue.paused);
      const runAt = task.snapshot.runAt;
      if (runAt !== null && runAt.getTime() > now.getTime()) return notDueBlocker(input, runAt);
      const dueSince = runAt ?? task.lastEdge?.at ?? now;
      const key = input.concurrency;
      if (key != null && key.holders.length >= key.limit) {
        return concurrencyBlocker(input, key, dueSince);
      }
      // A free concurrency slot first: a claim takes a task's slot and its rate grant at once.
      const rate = input.rate;
      if (rate != null && rateHolds(rate, now)) return rateBlocker(input, rate, dueSince);
      return dueBlocker(input, dueSince);
    }
  }
}

/** Workers listed by name in a sentence, at most this many (the facts list them all). */
const namedWorkers = 5;

/** A claimable task waiting longer than this hints at claims that fail or skip it. */
const slowClaimMs = 10_000;

/**
 * A due `queued` task: whether some live worker can claim it (it serves the queue and defines
 * the workflow with every step, as the claim requires), and whether one has a free slot.
 */
function dueBlocker(input: BlockerInput, readySince: Date): Blocker {
  const { task, now, workflow } = input;
  const { queue } = task;
  const live = liveWorkers(input);
  const serving = live.filter((worker) => slotsOf(worker, queue) > 0);
  const able = serving.filter((worker) => missingSteps(worker, input).length === 0);
  const waitedMs = now.getTime() - readySince.getTime();
  const due = `due since ${moment(readySince, now)} (waiting ${elapsed(waitedMs)})`;
  const deadlineAt = task.snapshot.deadlineAt;
  const deadline =
    deadlineAt !== null && deadlineAt.getTime() <= now.getTime()
      ? `; its deadline passed at ${moment(deadlineAt, now)}: the sweeper ends it dead (deadline_exceeded_before_start)${sweeperAbsence(input)}`
      : '';
  if (able.length === 0) {
    const why =
      serving.length === 0
        ? `no live worker serves queue "${queue}" (${workersPhrase(live)})`
        : `no live worker serving queue "${queue}" defines ${workflowPhrase(input)} (${serving
            .slice(0, namedWorkers)
            .map((worker) => `${worker.holder} ${lackPhrase(worker, input)}`)
            .join('; ')}${more(serving.length)})`;
    return blockerOf(input, 'no_worker', `${due}, but ${why}${deadline}`, null, {
      queue,
      workflow: workflow.name,
      version: workflow.version ?? null,
      step: task.step,
      workers: live.map((worker) => ({
        holder: worker.holder,
        queues: worker.queues.map((served) => served.name),
        workflows: worker.workflows.map((defined) => defined.name),
        versions: worker.workflows.map(definedPhrase),
      })),
      readySince: isoOf(readySince),
    });
  }
  const slots = sum(able.map((worker) => slotsOf(worker, queue)));
  const leased = sum(able.map((worker) => input.queue.leasedByHolder[worker.holder] ?? 0));
  const freeSlots = sum(
    able.map((worker) =>
      Math.max(0, slotsOf(worker, queue) - (input.queue.leasedByHolder[worker.holder] ?? 0)),
    ),
  );
  if (freeSlots === 0) {
    const oldest = input.queue.oldestReadyAt ?? readySince;
    const count = able.length === 1 ? '1 live worker' : `${able.length} live workers`;
    return blockerOf(
      input,
      'queue_full',
      `${due}, but all ${slots} ${slots === 1 ? 'slot' : 'slots'} of queue "${queue}" on the ${count} that can run it are busy (${leased} leased); the queue's oldest due task has waited ${elapsed(now.getTime() - oldest.getTime())}${deadline}`,
      null,
      {
        queue,
        workers: able.length,
        slots,
        leased,
        oldestReadyAt: isoOf(oldest),
        readySince: isoOf(readySince),
      },
    );
  }
  const free = able.filter(
    (worker) => slotsOf(worker, queue) > (input.queue.leasedByHolder[worker.holder] ?? 0),
  );
  const slow =
    waitedMs > slowClaimMs
      ? "; it has waited longer than a claim takes: look for failing claims in the worker's logs, or a long transaction holding its workflow row (claims skip a locked workflow)"
      : '';
  return blockerOf(
    input,
    'claimable',
    `${due}; ${free
      .slice(0, namedWorkers)
      .map((worker) => worker.holder)
      .join(
        ', ',
      )}${more(free.length)} ${free.length === 1 ? 'serves' : 'serve'} queue "${queue}" with ${freeSlots} free ${freeSlots === 1 ? 'slot' : 'slots'}: the next claim takes it${slow}${deadline}`,
    null,
    { queue, readySince: isoOf(readySince), freeSlots },
  );
}

function slotsOf(worker: RegisteredWorker, queue: string): number {
  return worker.queues.find((served) => served.name === queue)?.slots ?? 0;
}

/**
 * The steps of the task's workflow the worker does not define (all of them when it does not
 * define the workflow, or not its version, R54): a worker claims a task only when it defines
 * the version its workflow records, or, for a workflow stored before versions (or a worker
 * registered before them), when it knows every step of its workflow.
 */
function missingSteps(worker: RegisteredWorker, input: BlockerInput): readonly string[] {
  const needed = input.workflow.steps.length > 0 ? input.workflow.steps : [input.task.step];
  const { name, version } = input.workflow;
  const named = worker.workflows.filter((known) => known.name === name);
  if (version != null && named.some((known) => known.version !== undefined)) {
    return named.some((known) => known.version === version) ? [] : needed;
  }
  // A workflow stored before versions is claimed by its name's latest (last listed) version.
  const defined = named[named.length - 1];
  if (defined === undefined) return needed;
  return needed.filter((step) => !defined.steps.includes(step));
}

/** The workflow a task needs, as a sentence names it: with its version when it records one. */
function workflowPhrase(input: BlockerInput): string {
  const { name, version } = input.workflow;
  return version == null
    ? `workflow ${name} with all of its steps`
    : `version "${version}" of workflow ${name}`;
}

function definedPhrase(known: RegisteredWorker['workflows'][number]): string {
  return known.version === undefined ? known.name : `${known.name}@${known.version}`;
}

function lackPhrase(worker: RegisteredWorker, input: BlockerInput): string {
  const { name, version } = input.workflow;
  const named = worker.workflows.filter((known) => known.name === name);
  if (
    named.length === 0 ||
    (version != null && named.some((known) => known.version !== undefined))
  ) {
    return worker.workflows.length === 0
      ? 'defines no workflow'
      : `defines ${worker.workflows.map(definedPhrase).join(', ')}`;
  }
  const missing = missingSteps(worker, input);
  return `lacks ${missing.length === 1 ? 'step' : 'steps'} ${missing.join(', ')}`;
}

function workersPhrase(live: readonly RegisteredWorker[]): string {
  if (live.length === 0) return 'no live worker is registered';
  const named = live
    .slice(0, namedWorkers)
    .map((worker) => `${worker.holder} serves ${worker.queues.map((q) => q.name).join(', ')}`)
    .join('; ');
  return `live workers: ${named}${more(live.length)}`;
}

function more(count: number): string {
  return count > namedWorkers ? ` and ${count - namedWorkers} more` : '';
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
