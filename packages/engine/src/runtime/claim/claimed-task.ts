import {
  deepFreeze,
  type WorkflowDefinition,
  type WorkflowStep,
} from '@causeway/workflow/internal';
import type { LeasedTaskWithInputs } from '../../db/claim/claim-statement';
import type { LeasedTask } from '../../db/rows';
import type { TaskTraceParent } from '../../db/tracing/trace-contexts';
import type { ApplyContext } from '../decision/event-request';
import { upstreamSteps } from '../step-table';

/** What a claim took: tasks ready to run, and how many it left because their workflow was busy. */
export interface ClaimResult {
  readonly claimed: readonly ClaimedTask[];
  readonly skipped: number;
  /** Milliseconds until a rate limit key the claim spent has room again (R51), if known. */
  readonly nextSlotInMs?: number | null;
}

export interface ClaimRequest {
  readonly queue: string;
  readonly limit: number;
  readonly holder: string;
}

/** A task this worker claimed, with what its step needs to run. */
export interface ClaimedTask {
  readonly task: LeasedTask;
  readonly definition: WorkflowDefinition;
  readonly step: WorkflowStep;
  readonly input: unknown;
  readonly results: Readonly<Record<string, unknown>>;
  /** Milliseconds until the absolute deadline by the database clock, or null. */
  readonly deadlineInMs: number | null;
  /** Its workflow is a child its parent step awaits (R45): its end may move that step. */
  readonly awaitedChild: boolean;
  /**
   * Its workflow's stored trace context (R57) when the claim returned it (null: none stored);
   * undefined when the claim did not, and the attempt reads it if a tracer is registered.
   */
  readonly traceParent?: TaskTraceParent | null;
}

/** A leased task with its definition, its input and the outputs of its upstream steps. */
export function prepareClaimed(
  context: ApplyContext,
  task: LeasedTask,
  workflow: { readonly name: string; readonly version: string | null; readonly input: unknown },
  outputs: Readonly<Record<string, unknown>>,
  now: Date,
  awaitedChild: boolean,
): ClaimedTask {
  const definition = context.definitions.at(workflow.name, workflow.version);
  if (definition === undefined) throw new Error(`claimed task ${task.id} of unknown workflow`);
  const step = definition.steps.find((candidate) => candidate.name === task.step);
  if (step === undefined) throw new Error(`workflow "${workflow.name}" has no step "${task.step}"`);
  // Outputs of every upstream step, direct or not (they all succeeded, or this would not run).
  const results: Record<string, unknown> = {};
  for (const upstream of upstreamSteps(definition, step.name)) {
    if (upstream in outputs) results[upstream] = outputs[upstream];
  }
  return {
    task,
    definition,
    step,
    input: deepFreeze(workflow.input), // ctx.input is read-only at every depth (R30)
    results,
    deadlineInMs: task.deadlineAt === null ? null : task.deadlineAt.getTime() - now.getTime(),
    awaitedChild,
  };
}

/** `prepareClaimed` for a task a one-statement claim or settle leased. */
export function claimedFromStatement(
  context: ApplyContext,
  row: LeasedTaskWithInputs,
  now: Date,
): ClaimedTask {
  const claimed = prepareClaimed(
    context,
    row.task,
    { name: row.workflowName, version: row.workflowVersion, input: row.input },
    row.outputs,
    now,
    row.awaitedChild,
  );
  return { ...claimed, traceParent: row.traceParent };
}
