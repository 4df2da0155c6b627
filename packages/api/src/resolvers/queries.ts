import type { TaskRecord } from '@causeway/engine';
import { explain, type Transition } from '@causeway/workflow';
import { definitionAt } from '@causeway/workflow/internal';
import type { ApiResolvers, Models } from '../models';
import { blockerQueryFields, taskBlockerFields, workflowBlockerFields } from './blockers';
import { concurrencyQueryFields, taskConcurrencyFields } from './concurrency';
import { stepEventFields, taskEventFields } from './events';
import { queueQueryFields } from './queues';
import { rateLimitQueryFields } from './rate-limits';
import { scheduleQueryFields } from './schedules';
import { workflowTreeFields } from './tree';
import { versionQueryFields } from './versions';
import { workflowConnection } from './workflow-connection';

/** Query fields and the object types they return. */
export const queryResolvers: Pick<
  ApiResolvers,
  | 'Query'
  | 'Workflow'
  | 'Task'
  | 'Transition'
  | 'OutboxMessage'
  | 'WorkflowConnection'
  | 'WorkflowEdge'
  | 'PageInfo'
  | 'WorkflowDefinition'
  | 'StepDefinition'
  | 'StepEdge'
  | 'RetryPolicy'
> = {
  Query: {
    ...scheduleQueryFields,
    ...queueQueryFields,
    ...concurrencyQueryFields,
    ...rateLimitQueryFields,
    ...blockerQueryFields,
    workflow: (_root, { id }, context) => context.loaders.workflow.load(id),
    task: (_root, { id }, context) => context.loaders.task.load(id),
    workflows: (_root, args, context) => workflowConnection(args, context),
    ...versionQueryFields,
  },
  Workflow: {
    ...workflowBlockerFields,
    ...workflowTreeFields,
    tasks: async (workflow, _args, context) =>
      inStepOrder(
        await context.loaders.tasksByWorkflow.load(workflow.id),
        definitionAt(context.services.definitions, workflow.name, workflow.version)?.steps.map(
          (step) => step.name,
        ) ?? [],
      ),
    transitions: (workflow, _args, context) =>
      context.loaders.transitionsByWorkflow.load(workflow.id),
    explanation: async (workflow, _args, context) => {
      const transitions = await context.loaders.transitionsByWorkflow.load(workflow.id);
      // Only a step waiting for children gets a line of their counts: read them only then.
      const children = mayWaitForChildren(transitions)
        ? await context.loaders.childCountsByWorkflow.load(workflow.id)
        : [];
      // R49: only a workflow with a queued task with a priority gets its places read.
      const tasks = await context.loaders.tasksByWorkflow.load(workflow.id);
      const priorities = tasks.some((task) => task.state === 'queued' && task.priority !== 0)
        ? await context.loaders.priorityPlacesByWorkflow.load(workflow.id)
        : [];
      // R51: a throttled retry of a step that spends a rate limit says it paused the key.
      const rates = tasks.flatMap((task) =>
        task.rate == null ? [] : [{ step: task.step, name: task.rate.name, key: task.rate.key }],
      );
      return explain(transitions, [], children, priorities, rates).text;
    },
  },
  Task: {
    ...taskEventFields,
    ...taskBlockerFields,
    ...taskConcurrencyFields,
    workflow: async (task, _args, context) => {
      const workflow = await context.loaders.workflow.load(task.workflowId);
      if (workflow === null) throw new Error(`task ${task.id} has no workflow row`);
      return workflow;
    },
    transitions: async (task, _args, context) =>
      (await context.loaders.transitionsByWorkflow.load(task.workflowId)).filter(
        (row) => row.taskId === task.id,
      ),
    outbox: (task, _args, context) => context.loaders.outboxByTask.load(task.id),
    sending: async (task, _args, context) =>
      task.state === 'awaiting_receipt' &&
      (await context.loaders.outboxByTask.load(task.id)).some(
        (message) => message.state === 'pending',
      ),
  },
  Transition: {
    // Task or workflow states, spelled like the enums (UPPER_SNAKE).
    from: (row) => row.from?.toUpperCase() ?? null,
    to: (row) => row.to.toUpperCase(),
  },
  WorkflowConnection: {
    totalCount: async (connection) => (await connection.count()).value,
    totalCountCapped: async (connection) => (await connection.count()).capped,
  },
  WorkflowEdge: {},
  OutboxMessage: {},
  PageInfo: {},
  WorkflowDefinition: {
    edges: (definition) =>
      definition.steps.flatMap((step: Models['StepDefinition']) =>
        step.after.map((upstream) => ({ from: upstream, to: step.name })),
      ),
  },
  StepDefinition: {
    ...stepEventFields,
    retryPolicy: (step) => step.policy,
    delayMs: (step) => step.policy.delayMs,
  },
  StepEdge: {},
  RetryPolicy: {
    initialIntervalMs: (policy) => policy.backoff.initialIntervalMs,
    backoffCoefficient: (policy) => policy.backoff.backoffCoefficient,
    maximumIntervalMs: (policy) => policy.backoff.maximumIntervalMs,
  },
};

/** Tasks in the definition's step order (topological); steps it does not know go last. */
function inStepOrder(tasks: readonly TaskRecord[], steps: readonly string[]): TaskRecord[] {
  const order = new Map(steps.map((name, index) => [name, index]));
  return [...tasks].sort(
    (a, b) => (order.get(a.step) ?? steps.length) - (order.get(b.step) ?? steps.length),
  );
}

/** True when some task's latest edge put it where it may wait for child workflows (R48). */
function mayWaitForChildren(transitions: readonly Transition[]): boolean {
  const latest = new Map<string, string>();
  for (const row of transitions) if (row.taskId !== null) latest.set(row.taskId, row.to);
  return [...latest.values()].some(
    (state) => state === 'awaiting_children' || state === 'cancel_requested',
  );
}
