import {
  type AdmissionError,
  admitAttributes,
  allowedFailures,
  attributesProblem,
  checkAdmission,
  childLimits,
  mapConcurrencyGroup,
  type TaskConcurrency,
  type Tolerance,
  type WorkflowAttributes,
  type WorkflowDefinition,
  type WorkflowRegistry,
  workflowVersion,
} from '@causeway/workflow/internal';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import type { TraceCarrier } from '../../db/schema';
import type { SubmissionInsertStatement } from '../../db/submission/submission-insert';
import { newId } from '../../ids';
import type { Prepared } from '../operations/prepared';
import type { Plan } from '../operations/submission-plan';

/** What a step's children will be written as, once its edge is decided (R43). */
export interface ChildStart {
  readonly parentWorkflowId: string;
  readonly parentTaskId: string;
  readonly definition: WorkflowDefinition;
  readonly children: readonly Prepared[];
  readonly allowedFailures: number;
  readonly output: 'result' | 'outcome' | 'single';
  readonly detached: boolean;
  /** Children started again by a replay (R47): the step's tally is recounted, not set. */
  readonly restart?: boolean;
  /**
   * Children the engine starts for a map step (R44): no attempt starts them, so they store
   * their parent workflow's trace context (R57), read as they are written.
   */
  readonly parentTrace?: boolean;
  /** Their rows and insert, when they were planned before the transaction that writes them. */
  readonly planned?: { readonly plan: Plan; readonly insert: SubmissionInsertStatement };
}

/**
 * Children admitted and planned before the transaction that writes them (`children-ahead.ts`),
 * and what they were admitted under: they stand while the step still holds that lease in that
 * replay round and has no deadline (a deadline caps the children's from the time of the write).
 */
export interface ChildrenAhead {
  readonly start: ChildStart;
  readonly leaseEpoch: number;
  readonly replayCount: number;
}

export type ChildAdmission =
  | { readonly ok: true; readonly start: ChildStart }
  | { readonly ok: false; readonly summary: string };

/** What to start: from `startChildren(...)` or from a map step's list (R43, R44). */
export interface ChildRequest {
  /** A definition (its name and version are read, R54) or the name (its latest version). */
  readonly workflow: WorkflowDefinition | string;
  readonly inputs: readonly unknown[];
  readonly tolerate: Tolerance | null;
  readonly single: boolean;
  readonly detached: boolean;
  readonly maxChildren: number;
  /** The children's indexes when not 0..n-1: a replay starts some again in their places. */
  readonly indexes?: readonly number[];
  /** Each child's detail on its creation edges (a replay's `replaces`). */
  readonly details?: readonly Readonly<Record<string, unknown>>[];
  readonly ahead?: ChildrenAhead;
  /** The trace context of the attempt that starts them (R57), stored on each child. */
  readonly traceContext?: TraceCarrier | null;
  /**
   * Attributes every child takes besides its parent's and its definition's (R55): the call's
   * (`startChildren(..., { attributes })`), or a replaced child's own; as given, checked here.
   */
  readonly attributes?: WorkflowAttributes | null;
  /** Whose they are, in a conflict's message; absent: "the startChildren call's attributes". */
  readonly attributesLabel?: string;
}

/**
 * Checks every child before anything is written (R34, R48): the child workflow is one this
 * engine defines, there are not too many, the tree is not too deep, and each input passes its
 * schema. Ids and idempotency keys (the parent task, its replay round and the index: a re-run
 * never starts a second set) are chosen here.
 */
export function admitChildren(
  definitions: WorkflowRegistry,
  request: ChildRequest,
  parent: { readonly workflow: WorkflowRecord; readonly task: TaskRecord },
  now: Date,
): ChildAdmission {
  const name = typeof request.workflow === 'string' ? request.workflow : request.workflow.name;
  // The child records the version it starts under (R54): the one the step named, if this
  // engine defines it, else the latest version of the name.
  const definition =
    typeof request.workflow === 'string' ||
    definitions.at(name, workflowVersion(request.workflow)) === undefined
      ? definitions.get(name)
      : definitions.at(name, workflowVersion(request.workflow));
  if (definition === undefined) {
    return {
      ok: false,
      summary: `the child workflow "${name}" is not defined in this engine: give it in createEngine({ workflows })`,
    };
  }
  if (!Array.isArray(request.inputs)) {
    return { ok: false, summary: 'the children must be given as an array of inputs' };
  }
  const count = request.inputs.length;
  if (count > request.maxChildren) {
    return {
      ok: false,
      summary: `${count} child workflows is over the step's limit of ${request.maxChildren} (maxChildren, at most ${childLimits.maxChildren})`,
    };
  }
  const depth = (parent.workflow.parent?.depth ?? 0) + 1;
  if (depth > childLimits.maxDepth) {
    return {
      ok: false,
      summary: `a child workflow here would be at depth ${depth}, over the limit of ${childLimits.maxDepth}`,
    };
  }
  // The call's attributes are checked once, not once per child.
  const given = request.attributes ?? null;
  const givenProblem = given === null ? null : attributesProblem(given);
  if (givenProblem !== null) {
    return { ok: false, summary: `invalid_attributes: ${givenProblem}` };
  }
  const rootId = parent.workflow.parent?.rootId ?? parent.workflow.id;
  const deadlineAt = parent.task.deadlineAt;
  const deadlineCapMs = deadlineAt === null ? null : deadlineAt.getTime() - now.getTime();
  const mapSlot = mapConcurrencyOf(definitions, parent.workflow, parent.task);
  const children: Prepared[] = [];
  for (const [position, input] of request.inputs.entries()) {
    const index = request.indexes?.[position] ?? position;
    const key = `${parent.task.id}:${parent.task.replayCount}:${index}`;
    const admission = checkAdmission(definition, input, key);
    if (!admission.ok) return childRefused(index, admission.error);
    // A child inherits its parent's attributes; the call's and its definition's may add keys,
    // never change one.
    const attributed = admitAttributes(definition, admission.input, {
      parent: parent.workflow.attributes,
      ...(given === null ? {} : { caller: given, callerLabel: attributesLabelOf(request) }),
    });
    if (!attributed.ok) return childRefused(index, attributed.error);
    children.push({
      definition,
      input: admission.input,
      inputJson: admission.inputJson,
      idempotencyKey: admission.idempotencyKey,
      concurrency: mapSlot === null ? admission.concurrency : definition.steps.map(() => mapSlot),
      rate: admission.rate,
      attributes: attributed.attributes,
      deadlineCapMs,
      traceContext: request.traceContext ?? null,
      origin: {
        actor: { kind: 'parent', name: parent.task.id },
        detail: {
          parentWorkflowId: parent.workflow.id,
          step: parent.task.step,
          index,
          ...request.details?.[position],
        },
      },
      child: {
        id: newId(),
        link: {
          workflowId: parent.workflow.id,
          taskId: parent.task.id,
          index,
          rootId,
          depth,
          detached: request.detached,
        },
      },
    });
  }
  return {
    ok: true,
    start: {
      parentWorkflowId: parent.workflow.id,
      parentTaskId: parent.task.id,
      definition,
      children,
      allowedFailures: allowedFailures(request.tolerate, count),
      output: request.single ? 'single' : request.tolerate === null ? 'result' : 'outcome',
      detached: request.detached,
    },
  };
}

function attributesLabelOf(request: ChildRequest): string {
  return (
    request.attributesLabel ??
    `the ${request.single ? 'startChild' : 'startChildren'} call's attributes`
  );
}

function childRefused(index: number, error: AdmissionError): ChildAdmission {
  return { ok: false, summary: `child ${index}: ${error.code}: ${error.message}` };
}

/**
 * The slot every task of a map step's children takes when the step has `concurrency` (R44,
 * R50): group `map:<workflow>/<step>`, the step's task as key. Read from the parent's
 * definition, so children started again by a replay take it too.
 */
function mapConcurrencyOf(
  definitions: WorkflowRegistry,
  workflow: WorkflowRecord,
  task: TaskRecord,
): TaskConcurrency | null {
  const step = definitions
    .at(workflow.name, workflow.version)
    ?.steps.find((each) => each.name === task.step);
  const limit = step?.map?.concurrency ?? null;
  if (limit === null) return null;
  return { group: mapConcurrencyGroup(workflow.name, task.step), key: task.id, limit };
}
