import {
  type Blocker,
  type BlockerInput,
  decideBlocker,
  eventWaitingState,
  isTerminalTaskState,
  leaseHoldingStates,
  type QueueLoad,
  type RegisteredWorker,
  receiptAwaitingState,
  type TaskState,
  type WorkflowDefinition,
} from '@causeway/workflow/internal';
import type { Kysely } from 'kysely';
import {
  type BlockerWorkflow,
  blockerTaskRead,
  type TaskWithLastEdge,
} from '../../db/blockers/blocker-tasks';
import { queueLoadList } from '../../db/blockers/queue-loads';
import { outboxListByTasks } from '../../db/outbox/outbox-queries';
import { inOneSnapshot } from '../../db/read-snapshot';
import { snapshotOf } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import { workerList } from '../../db/workers/worker-list';

const noLoad: QueueLoad = Object.freeze({ leasedByHolder: {}, oldestReadyAt: null });

/**
 * The blockers of each workflow of `ids` that exists (issue 18): one per non-terminal task, in
 * step order. The facts are read in one snapshot with database time: the tasks with their
 * latest edges, the live workers (and the registry rows of lease holders), the load of every
 * queue a due task waits in, and the outbox of tasks awaiting a receipt. Each read goes
 * through an index, so the cost does not grow with finished workflows. The decision is the
 * domain's (`decideBlocker`), with the step policies of `definitions`.
 */
export async function readBlockers(
  db: Kysely<CausewayDatabase>,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  ids: readonly string[],
): Promise<Map<string, Blocker[]>> {
  if (ids.length === 0) return new Map();
  const read = await inOneSnapshot(db, async (tx) => {
    const { workflows, tasks, now } = await blockerTaskRead(tx, ids);
    if (now === null) return null;
    const open = tasks.filter(({ task }) => !isTerminalTaskState(task.state));
    const dueQueues = open
      .filter(
        ({ task }) => task.state === 'queued' && (task.runAt?.getTime() ?? 0) <= now.getTime(),
      )
      .map(({ task }) => task.queue);
    const holders = open.flatMap(({ task }) =>
      leaseHoldingStates.includes(task.state) && task.leaseHolder !== null
        ? [task.leaseHolder]
        : [],
    );
    const awaiting = open.filter(({ task }) => task.state === receiptAwaitingState);
    const loads = await queueLoadList(tx, dueQueues);
    const workers = open.length === 0 ? [] : await workerList(tx, { includeStale: false, holders });
    const outbox = await outboxListByTasks(
      tx,
      awaiting.map(({ task }) => task.id),
    );
    return { workflows, tasks, open, now, loads, workers, outbox };
  });
  if (read === null) return new Map();
  const registered: RegisteredWorker[] = read.workers.map((worker) => ({
    holder: worker.holder,
    queues: worker.queues,
    workflows: worker.workflows,
    sweeper: worker.sweeper,
    heartbeatAt: worker.heartbeatAt,
    live: worker.live,
  }));
  const blockers = new Map<string, Blocker[]>(
    [...read.workflows.keys()].map((id) => [id, [] as Blocker[]]),
  );
  for (const [id, workflow] of read.workflows) {
    const all = read.tasks.filter(({ task }) => task.workflowId === id);
    const states = new Map(all.map(({ task }) => [task.step, task.state]));
    const definition = definitions.get(workflow.name);
    const order = stepOrder(workflow, definition);
    const open = read.open
      .filter(({ task }) => task.workflowId === id)
      .sort(
        (a, b) => (order.get(a.task.step) ?? order.size) - (order.get(b.task.step) ?? order.size),
      );
    for (const entry of open) {
      const input = blockerInput(entry, workflow, definition, states, read);
      const blocker = decideBlocker({ ...input, workers: registered });
      if (blocker !== null) blockers.get(id)?.push(blocker);
    }
  }
  return blockers;
}

function blockerInput(
  { task, lastEdge }: TaskWithLastEdge,
  workflow: BlockerWorkflow,
  definition: WorkflowDefinition | undefined,
  states: ReadonlyMap<string, TaskState>,
  read: {
    readonly now: Date;
    readonly loads: ReadonlyMap<string, QueueLoad>;
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
    workflow: { name: workflow.name, steps: workflow.steps },
    policy: step?.policy ?? null,
    queue: read.loads.get(task.queue) ?? noLoad,
    now: read.now,
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
