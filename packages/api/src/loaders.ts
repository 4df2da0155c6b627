import type {
  ExplanationFacts,
  OutboxMessageRecord,
  ReadModel,
  StepChildCounts,
  StoredEvent,
  TaskRecord,
  WorkflowRecord,
} from '@causeway/engine';
import type {
  Blocker,
  RateLimit,
  StaleResult,
  Transition,
  WorkflowDefinition,
} from '@causeway/workflow';
import DataLoader from 'dataloader';

/**
 * Per-request batch loaders: every `load` in one tick becomes one SQL query, so a page of
 * workflows with tasks and transitions costs a fixed number of queries (no N+1).
 */
export interface Loaders {
  readonly workflow: DataLoader<string, WorkflowRecord | null>;
  readonly task: DataLoader<string, TaskRecord | null>;
  readonly tasksByWorkflow: DataLoader<string, readonly TaskRecord[]>;
  readonly transitionsByWorkflow: DataLoader<string, readonly Transition[]>;
  /** Each workflow's refused late results (R56): with its log, its tasks' attempts. */
  readonly staleResultsByWorkflow: DataLoader<string, readonly StaleResult[]>;
  readonly outboxByTask: DataLoader<string, readonly OutboxMessageRecord[]>;
  readonly eventsByTask: DataLoader<string, readonly StoredEvent[]>;
  /** Each workflow's blockers: one read for every workflow of a page. */
  readonly blockersByWorkflow: DataLoader<string, readonly Blocker[]>;
  /** Each workflow's steps that started children, counted (R48): one read for a page. */
  readonly childCountsByWorkflow: DataLoader<string, readonly StepChildCounts[]>;
  /**
   * What each workflow's explanation says beside its log (pauses, spent rate keys, priorities,
   * children), from the tasks `tasksByWorkflow` loaded: one read per kind a page needs.
   */
  readonly explanationFactsByWorkflow: DataLoader<string, ExplanationFacts | null>;
}

const maxBatchSize = 1_000;

export function createLoaders(
  readModel: ReadModel,
  definitions: ReadonlyMap<string, WorkflowDefinition>,
  /** The engine's rate limits (R51), which blockers of a spent key name. */
  rateLimits: readonly RateLimit[] = [],
): Loaders {
  const loaders: Loaders = {
    workflow: new DataLoader(
      async (ids) => {
        const found = await readModel.workflowsByIds(ids);
        return ids.map((id) => found.get(id) ?? null);
      },
      { maxBatchSize },
    ),
    task: new DataLoader(
      async (ids) => {
        const found = await readModel.tasksByIds(ids);
        return ids.map((id) => found.get(id) ?? null);
      },
      { maxBatchSize },
    ),
    tasksByWorkflow: new DataLoader(
      async (ids) => {
        const found = await readModel.tasksByWorkflowIds(ids);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    transitionsByWorkflow: new DataLoader(
      async (ids) => {
        const found = await readModel.transitionsByWorkflowIds(ids);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    staleResultsByWorkflow: new DataLoader(
      async (ids) => {
        const found = await readModel.staleResultsByWorkflowIds(ids);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    outboxByTask: new DataLoader(
      async (ids) => {
        const found = await readModel.outboxByTaskIds(ids);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    eventsByTask: new DataLoader(
      async (ids) => {
        const found = await readModel.eventsByTaskIds(ids);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    blockersByWorkflow: new DataLoader(
      async (ids) => {
        const found = await readModel.blockersByWorkflowIds(ids, definitions, rateLimits);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    childCountsByWorkflow: new DataLoader(
      async (ids) => {
        const found = await readModel.childCountsByWorkflowIds(ids);
        return ids.map((id) => found.get(id) ?? []);
      },
      { maxBatchSize },
    ),
    explanationFactsByWorkflow: new DataLoader(
      async (ids) => {
        const tasks = await loaders.tasksByWorkflow.loadMany(ids);
        const byWorkflow = new Map(
          ids.flatMap((id, index) => {
            const found = tasks[index];
            return found === undefined || found instanceof Error ? [] : [[id, found] as const];
          }),
        );
        const found = await readModel.explanationFactsByWorkflowIds(byWorkflow, rateLimits);
        return ids.map((id) => found.get(id) ?? null);
      },
      { maxBatchSize },
    ),
  };
  return loaders;
}

/** Forgets everything loaded so far (after a mutation, later fields must see its effect). */
export function clearLoaders(loaders: Loaders): void {
  loaders.workflow.clearAll();
  loaders.task.clearAll();
  loaders.tasksByWorkflow.clearAll();
  loaders.transitionsByWorkflow.clearAll();
  loaders.staleResultsByWorkflow.clearAll();
  loaders.outboxByTask.clearAll();
  loaders.eventsByTask.clearAll();
  loaders.blockersByWorkflow.clearAll();
  loaders.childCountsByWorkflow.clearAll();
  loaders.explanationFactsByWorkflow.clearAll();
}
