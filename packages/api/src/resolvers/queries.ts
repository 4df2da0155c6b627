import { explainWithFacts, type TaskRecord } from '@causeway/engine';
import { definitionAt, mayHaveStaleResults } from '@causeway/workflow/internal';
import type { ApiResolvers, Models } from '../models';
import { taskAttemptFields } from './attempts';
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
    // The engine's explain (`explainWithFacts`) from the page's loaded rows and facts.
    explanation: async (workflow, _args, context) => {
      const [transitions, tasks, facts] = await Promise.all([
        context.loaders.transitionsByWorkflow.load(workflow.id),
        context.loaders.tasksByWorkflow.load(workflow.id),
        context.loaders.explanationFactsByWorkflow.load(workflow.id),
      ]);
      // R56: an attempt whose result came after its lease was lost says so (read only when
      // some lease was lost or is still held).
      const stale = mayHaveStaleResults(transitions)
        ? await context.loaders.staleResultsByWorkflow.load(workflow.id)
        : [];
      return explainWithFacts(transitions, tasks, facts ?? undefined, stale).text;
    },
  },
  Task: {
    ...taskAttemptFields,
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
