import {
  findEdgeRule,
  formatActor,
  type ScheduleOrigin,
  type TaskState,
} from '@causeway/workflow/internal';
import type { NewTransitionRow } from '../../db/transition-row';

/**
 * Who submitted a workflow when it was not a client: a schedule (R40) or a parent step (R43),
 * with what its creation edges say. Internal to the engine: the public submit never takes one,
 * so no caller can write another actor into the log.
 */
export interface SubmitOrigin {
  readonly actor: { readonly kind: 'schedule' | 'parent'; readonly name: string };
  readonly detail: ScheduleOrigin | Readonly<Record<string, unknown>>;
}

export function scheduleSubmitOrigin(origin: ScheduleOrigin): SubmitOrigin {
  return { actor: { kind: 'schedule', name: origin.schedule }, detail: origin };
}

/**
 * The log rows of one submitted workflow with its creation edges (`∅ → …`, `submitted`, the
 * workflow's and each task's) taken by `origin` instead of the client, their detail naming it.
 * The edge table must allow the actor on each task's creation edge.
 */
export function rowsWithOrigin(
  rows: readonly NewTransitionRow[],
  origin: SubmitOrigin | undefined,
): NewTransitionRow[] {
  if (origin === undefined) return [...rows];
  return rows.map((row) => {
    if (row.from !== null || row.reason !== 'submitted') return row;
    if (
      row.taskId !== null &&
      findEdgeRule(null, row.to as TaskState, 'submitted', origin.actor.kind) === undefined
    ) {
      throw new Error(`the edge table does not let a ${origin.actor.kind} create a task ${row.to}`);
    }
    return {
      ...row,
      actor: formatActor(origin.actor),
      detail: { ...row.detail, ...origin.detail },
    };
  });
}
