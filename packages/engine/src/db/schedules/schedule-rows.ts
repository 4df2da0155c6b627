import type { CatchUp, WorkflowState } from '@causeway/workflow';

/** A schedule row as the database has it (snake_case stays in this folder). */
export interface ScheduleRow {
  readonly name: string;
  readonly workflow_name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly catch_up: string;
  readonly input: unknown;
  readonly next_tick_at: Date | null;
  readonly last_tick_at: Date | null;
  readonly last_workflow_id: string | null;
  readonly paused_at: Date | null;
  readonly paused_by: string | null;
  readonly paused_reason: string | null;
  readonly created_at: Date;
  readonly updated_at: Date;
}

/** An operator's pause (R41): when, by whom, why. */
export interface SchedulePause {
  readonly at: Date;
  readonly by: string;
  readonly reason: string;
}

/** A stored schedule (R40, R41). */
export interface ScheduleRecord {
  readonly name: string;
  /** The name of the workflow it submits. */
  readonly workflow: string;
  readonly cron: string;
  readonly timezone: string;
  readonly catchUp: CatchUp;
  readonly input: unknown;
  /** Null when the cron has no tick left. */
  readonly nextTickAt: Date | null;
  /** The last tick it submitted a workflow for. */
  readonly lastTickAt: Date | null;
  /** The workflow it (or an operator's trigger) submitted last. */
  readonly lastWorkflowId: string | null;
  readonly paused: SchedulePause | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A schedule with the state of the workflow it submitted last. */
export interface ScheduleListRecord extends ScheduleRecord {
  readonly lastWorkflowState: WorkflowState | null;
}

export const scheduleEventKinds = ['paused', 'resumed', 'triggered'] as const;
export type ScheduleEventKind = (typeof scheduleEventKinds)[number];

/** One row of a schedule's operator history (append-only). */
export interface ScheduleEventRecord {
  readonly id: string;
  readonly schedule: string;
  readonly kind: ScheduleEventKind;
  readonly operator: string;
  readonly reason: string;
  /** The workflow a trigger submitted. */
  readonly workflowId: string | null;
  readonly at: Date;
}

export function scheduleFromRow(row: ScheduleRow): ScheduleRecord {
  return {
    name: row.name,
    workflow: row.workflow_name,
    cron: row.cron,
    timezone: row.timezone,
    catchUp: row.catch_up as CatchUp,
    input: row.input,
    nextTickAt: row.next_tick_at,
    lastTickAt: row.last_tick_at,
    lastWorkflowId: row.last_workflow_id,
    paused:
      row.paused_at === null
        ? null
        : { at: row.paused_at, by: row.paused_by ?? '', reason: row.paused_reason ?? '' },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
