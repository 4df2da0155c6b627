import {
  type CatchUp,
  scheduleManualKey,
  scheduleTriggerOrigin,
  type WorkflowState,
} from '@causeway/workflow/internal';
import { scheduleEventList, scheduleList } from '../../db/schedules/schedule-reads';
import type { ScheduleEventRecord, SchedulePause } from '../../db/schedules/schedule-rows';
import {
  scheduleLock,
  schedulePauseOrResume,
  scheduleRecordTrigger,
} from '../../db/schedules/schedule-writes';
import { EngineError } from '../../errors';
import { newId } from '../../ids';
import { submitMany } from '../operations/submit';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
import type { ScheduleContext } from './schedule-context';
import { scheduleSubmitOrigin } from './submit-origin';

/** What an operator gives for a pause, resume or trigger (R41): both are kept and shown. */
export interface ScheduleRequest {
  readonly operator: string;
  readonly reason: string;
}

/** A schedule as operators see it (R41). */
export interface ScheduleView {
  readonly name: string;
  /** The name of the workflow it submits. */
  readonly workflow: string;
  readonly cron: string;
  readonly timezone: string;
  readonly catchUp: CatchUp;
  readonly input: unknown;
  /** Who paused it, why and when; null while it runs. */
  readonly paused: SchedulePause | null;
  /** Null when the cron has no tick left. */
  readonly nextTickAt: Date | null;
  readonly lastTickAt: Date | null;
  /** The workflow it (or a trigger) submitted last, with its state now. */
  readonly lastWorkflow: { readonly id: string; readonly state: WorkflowState } | null;
  /** Pauses, resumes and triggers, oldest first. */
  readonly history: readonly ScheduleEventRecord[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface ScheduleAnswer {
  readonly schedule: ScheduleView;
  /** True when this call paused or resumed it; a repeat answers the same with false. */
  readonly changed: boolean;
}

export interface ScheduleTriggerAnswer {
  readonly schedule: ScheduleView;
  /** The workflow the trigger submitted. */
  readonly workflow: { readonly id: string; readonly state: WorkflowState };
}

/** Every stored schedule (or the one named), by name. */
export async function listSchedules(
  context: ScheduleContext,
  name: string | null = null,
): Promise<ScheduleView[]> {
  await context.ready();
  const rows = await scheduleList(context.submit.db, name);
  const events = await scheduleEventList(
    context.submit.db,
    rows.map((row) => row.name),
  );
  return rows.map(({ lastWorkflowId, lastWorkflowState, ...row }) => ({
    ...row,
    lastWorkflow:
      lastWorkflowId === null || lastWorkflowState === null
        ? null
        : { id: lastWorkflowId, state: lastWorkflowState },
    history: events.filter((event) => event.schedule === row.name),
  }));
}

/** Pauses (`pause`) or resumes a schedule (R41); a repeat changes nothing. */
export async function pauseOrResumeSchedule(
  context: ScheduleContext,
  name: string,
  request: ScheduleRequest,
  pause: boolean,
): Promise<ScheduleAnswer> {
  const { operator, reason } = checkRequest(name, request);
  await context.ready();
  const { found, changed } = await schedulePauseOrResume(context.submit.db, {
    name,
    pause,
    operator,
    reason,
  });
  if (!found) throw notFound(name);
  return { schedule: await viewOf(context, name), changed };
}

/**
 * Submits one workflow now (R41), with its own idempotency key and the schedule as its actor;
 * the operator and reason go to the schedule's history and the creation edges' detail. Paused
 * or not; the schedule's ticks go on as they were.
 */
export async function triggerSchedule(
  context: ScheduleContext,
  name: string,
  request: ScheduleRequest,
): Promise<ScheduleTriggerAnswer> {
  const { operator, reason } = checkRequest(name, request);
  await context.ready();
  const workflow = await transactionRecordingWaits(context.submit, async (tx) => {
    const locked = await scheduleLock(tx, name);
    if (locked === undefined) throw notFound(name);
    const { schedule } = locked;
    if (!context.submit.definitions.has(schedule.workflow)) {
      throw new EngineError(
        'conflict',
        `schedule "${name}" submits "${schedule.workflow}", which this engine does not define`,
        { schedule: name, workflow: schedule.workflow },
      );
    }
    const origin = scheduleTriggerOrigin(name, schedule.timezone, operator, reason);
    const [result] = await submitMany(
      context.submit,
      [
        {
          name: schedule.workflow,
          input: schedule.input,
          idempotencyKey: scheduleManualKey(name, newId()),
        },
      ],
      { transaction: tx },
      [scheduleSubmitOrigin(origin)],
    );
    if (result === undefined) throw new Error('the trigger submitted nothing');
    await scheduleRecordTrigger(tx, { name, operator, reason, workflowId: result.workflow.id });
    return result.workflow;
  });
  return { schedule: await viewOf(context, name), workflow };
}

async function viewOf(context: ScheduleContext, name: string): Promise<ScheduleView> {
  const [view] = await listSchedules(context, name);
  if (view === undefined) throw notFound(name);
  return view;
}

function checkRequest(name: unknown, request: ScheduleRequest | undefined): ScheduleRequest {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    throw new EngineError('invalid_request', 'the schedule name must be 1 to 200 characters');
  }
  const operator = typeof request?.operator === 'string' ? request.operator.trim() : '';
  if (operator.length === 0 || operator.length > 200) {
    throw new EngineError('invalid_request', 'the operator name must be 1 to 200 characters');
  }
  const reason = typeof request?.reason === 'string' ? request.reason.trim() : '';
  if (reason.length === 0 || reason.length > 1_000) {
    throw new EngineError('invalid_request', 'the reason must be 1 to 1,000 characters');
  }
  return { operator, reason };
}

function notFound(name: string): EngineError {
  return new EngineError('not_found', `no schedule is named ${JSON.stringify(name)}`, {
    schedule: name,
  });
}
