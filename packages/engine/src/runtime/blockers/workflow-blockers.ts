import {
  type Blocker,
  type BlockerInput,
  type ChildrenFacts,
  type ConcurrencyFacts,
  childLimits,
  decideBlocker,
  definitionAt,
  eventWaitingState,
  isTerminalTaskState,
  leaseHoldingStates,
  type QueueLoad,
  type RateFacts,
  type RateLimit,
  type RegisteredWorker,
  receiptAwaitingState,
  type TaskState,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Kysely, Transaction } from 'kysely';
import {
  type BlockerWorkflow,
  blockerTaskRead,
  type TaskWithLastEdge,
} from '../../db/blockers/blocker-tasks';
import { firstOpenChildList, type OpenChild } from '../../db/blockers/first-open-children';
import { queueLoadList } from '../../db/blockers/queue-loads';
import { rateSpendKey, rateWindowList } from '../../db/blockers/rate-windows';
import { slotHolderList, slotKey } from '../../db/blockers/slot-holders';
import { outboxListByTasks } from '../../db/outbox/outbox-queries';
import { inOneSnapshot } from '../../db/read-snapshot';
import { snapshotOf, type TaskRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import { workerList } from '../../db/workers/worker-list';

const noLoad: QueueLoad = Object.freeze({ leasedByHolder: {}, oldestReadyAt: null, paused: null });

/**
 * The blockers of each workflow of `ids` that exists (issue 18): one per non-terminal task, in
 * step order. The facts are read in one snapshot with database time: the tasks with their
 * latest edges, the live workers (and the registry rows of lease holders), the load of every
 * queue a due task waits in, and the outbox of tasks awaiting a receipt. Each read goes
 * through an index, so the cost does not grow with finished workflows. The decision is the
 * domain's (`decideBlocker`), with the step policies of `definitions`; a queued task that
 * spends a rate limit (R51) gets its key's window, with the limits of `rateLimits` (the
 * engine's; a reader without them still sees a key's pause).
 *
 * A step waiting for its child workflows (R48) gets its tally and its first unfinished child
 * with that child's own blocker, decided the same way one level down, and so on to the leaf
 * (at most the tree's depth limit): the same few statements per level, for every parent of
 * that level at once.
 */
export async function readBlockers(
  db: Kysely<CausewayDatabase>,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  ids: readonly string[],
  rateLimits: readonly RateLimit[] = [],
): Promise<Map<string, Blocker[]>> {
  if (ids.length === 0) return new Map();
  return inOneSnapshot(db, (tx) => blockersAtLevel(tx, { definitions, rateLimits }, ids, 0));
}

/** What the engine declares that the blockers read: step policies and order, rate limits. */
interface Declared {
  readonly definitions: ReadonlyMap<string, WorkflowDefinition>;
  readonly rateLimits: readonly RateLimit[];
}

async function blockersAtLevel(
  tx: Transaction<CausewayDatabase>,
  declared: Declared,
  ids: readonly string[],
  level: number,
): Promise<Map<string, Blocker[]>> {
  const { definitions } = declared;
  const { workflows, tasks, now } = await blockerTaskRead(tx, ids);
  if (now === null) return new Map();
  const open = tasks.filter(({ task }) => !isTerminalTaskState(task.state));
  // Every queued task's queue, due or not: a paused queue (R53) holds both.
  const queuedQueues = open
    .filter(({ task }) => task.state === 'queued')
    .map(({ task }) => task.queue);
  const holders = open.flatMap(({ task }) =>
    leaseHoldingStates.includes(task.state) && task.leaseHolder !== null ? [task.leaseHolder] : [],
  );
  const awaiting = open.filter(({ task }) => task.state === receiptAwaitingState);
  const loads = await queueLoadList(tx, queuedQueues);
  const slots = await slotHolderList(
    tx,
    open.flatMap(({ task }) =>
      task.state === 'queued' && task.concurrency != null ? [task.concurrency] : [],
    ),
  );
  const rates = await rateWindowList(
    tx,
    open.flatMap(({ task }) =>
      task.state === 'queued' && task.rate != null
        ? [{ name: task.rate.name, key: task.rate.key ?? '', cost: task.rate.cost }]
        : [],
    ),
    declared.rateLimits,
    now,
  );
  const workers = open.length === 0 ? [] : await workerList(tx, { includeStale: false, holders });
  const outbox = await outboxListByTasks(
    tx,
    awaiting.map(({ task }) => task.id),
  );
  const parents = open.filter(({ task }) => waitsForChildren(task));
  const firstOpen = await firstOpenChildList(
    tx,
    parents.map(({ task }) => task.id),
  );
  const below =
    firstOpen.size === 0 || level >= childLimits.maxDepth
      ? new Map<string, Blocker[]>()
      : await blockersAtLevel(
          tx,
          declared,
          [...firstOpen.values()].map((child) => child.workflowId),
          level + 1,
        );
  const read = { now, loads, outbox, firstOpen, below, slots, rates };
  const registered: RegisteredWorker[] = workers.map((worker) => ({
    holder: worker.holder,
    queues: worker.queues,
    workflows: worker.workflows,
    sweeper: worker.sweeper,
    heartbeatAt: worker.heartbeatAt,
    live: worker.live,
  }));
  const blockers = new Map<string, Blocker[]>([...workflows.keys()].map((id) => [id, []]));
  for (const [id, workflow] of workflows) {
    const all = tasks.filter(({ task }) => task.workflowId === id);
    const states = new Map(all.map(({ task }) => [task.step, task.state]));
    const definition = definitionAt(definitions, workflow.name, workflow.version);
    const order = stepOrder(workflow, definition);
    const mine = open
      .filter(({ task }) => task.workflowId === id)
      .sort(
        (a, b) => (order.get(a.task.step) ?? order.size) - (order.get(b.task.step) ?? order.size),
      );
    for (const entry of mine) {
      const input = blockerInput(entry, workflow, definition, states, read);
      const blocker = decideBlocker({ ...input, workers: registered });
      if (blocker !== null) blockers.get(id)?.push(blocker);
    }
  }
  return blockers;
}

/** A step whose children decide it: awaiting them, or asked to cancel while they stop. */
function waitsForChildren(task: TaskRecord): boolean {
  return (
    task.children !== null &&
    (task.state === 'awaiting_children' ||
      (task.state === 'cancel_requested' && task.leaseHolder === null))
  );
}

/** The tally of a step waiting for its children, and its first open child's blocker. */
function childrenFacts(
  task: TaskRecord,
  read: {
    readonly firstOpen: ReadonlyMap<string, OpenChild>;
    readonly below: ReadonlyMap<string, readonly Blocker[]>;
  },
): ChildrenFacts | null {
  const tally = task.children;
  if (tally === null || !waitsForChildren(task)) return null;
  const child = read.firstOpen.get(task.id);
  return {
    total: tally.total,
    succeeded: tally.succeeded,
    failed: tally.failed,
    open: tally.total - tally.succeeded - tally.failed,
    allowedFailures: tally.allowedFailures,
    oldest:
      child === undefined
        ? null
        : {
            workflowId: child.workflowId,
            name: child.name,
            state: child.state,
            blocker: holdingBlocker(read.below.get(child.workflowId) ?? []),
          },
  };
}

/**
 * The blocker that holds a workflow: its first in step order that is not just waiting for an
 * upstream step (that one waits for the holder), else its first.
 */
function holdingBlocker(blockers: readonly Blocker[]): Blocker | null {
  return blockers.find((blocker) => blocker.code !== 'upstream_pending') ?? blockers[0] ?? null;
}

function blockerInput(
  { task, lastEdge }: TaskWithLastEdge,
  workflow: BlockerWorkflow,
  definition: WorkflowDefinition | undefined,
  states: ReadonlyMap<string, TaskState>,
  read: Parameters<typeof childrenFacts>[1] & {
    readonly now: Date;
    readonly loads: ReadonlyMap<string, QueueLoad>;
    readonly slots: ReadonlyMap<string, ConcurrencyFacts['holders']>;
    readonly rates: ReadonlyMap<string, RateFacts>;
    readonly outbox: readonly {
      taskId: string;
      channel: string;
      state: string;
      attempts: number;
      lastError: string | null;
    }[];
  },
): Omit<BlockerInput, 'workers'> {
  const step = definition?.steps.find((candidate) => candidate.name === task.step);
  return {
    task: {
      id: task.id,
      step: task.step,
      queue: task.queue,
      snapshot: snapshotOf(task),
      maxAttempts: task.maxAttempts,
      leaseHolder: task.leaseHolder,
      leaseExpiresAt: task.leaseExpiresAt,
      receiptId: task.receiptId,
      receiptDeadlineAt: task.receiptDeadlineAt,
      eventName: task.state === eventWaitingState ? task.eventName : null,
      eventKey: task.state === eventWaitingState ? task.eventKey : null,
      waitSince: task.waitSince,
      lastEdge,
      sending: read.outbox
        .filter((message) => message.taskId === task.id && message.state === 'pending')
        .map(({ channel, attempts, lastError }) => ({ channel, attempts, lastError })),
    },
    upstream:
      step === undefined
        ? null
        : step.after.flatMap((name) => {
            const state = states.get(name);
            return state === undefined ? [] : [{ step: name, state }];
          }),
    workflow: { name: workflow.name, version: workflow.version, steps: workflow.steps },
    policy: step?.policy ?? null,
    queue: read.loads.get(task.queue) ?? noLoad,
    now: read.now,
    children: childrenFacts(task, read),
    concurrency:
      task.state === 'queued' && task.concurrency != null
        ? {
            ...task.concurrency,
            holders: read.slots.get(slotKey(task.concurrency.group, task.concurrency.key)) ?? [],
          }
        : null,
    rate:
      task.state === 'queued' && task.rate != null
        ? (read.rates.get(
            rateSpendKey({ name: task.rate.name, key: task.rate.key ?? '', cost: task.rate.cost }),
          ) ?? null)
        : null,
  };
}

/** Step order: the definition's, else the order the workflow was submitted with. */
function stepOrder(
  workflow: BlockerWorkflow,
  definition: WorkflowDefinition | undefined,
): Map<string, number> {
  const steps = definition?.steps.map((step) => step.name) ?? workflow.steps;
  return new Map(steps.map((name, index) => [name, index]));
}
