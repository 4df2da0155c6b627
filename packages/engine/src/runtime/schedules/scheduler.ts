import {
  catchUpLimit,
  nextTick,
  scheduleTickKey,
  scheduleTickOrigin,
  ticksBetween,
  ticksToSubmit,
} from '@causeway/workflow';
import type { Transaction } from 'kysely';
import { scheduleClaimDue } from '../../db/schedules/schedule-claim-due';
import type { ScheduleRecord } from '../../db/schedules/schedule-rows';
import { scheduleAdvance } from '../../db/schedules/schedule-writes';
import type { CausewayDatabase } from '../../db/schema';
import { submitMany } from '../operations/submit';
import { onTimeMs, type ScheduleContext } from './schedule-context';
import { scheduleSubmitOrigin } from './submit-origin';

/** A workflow a scheduler submitted for a tick. */
export interface ScheduledSubmission {
  readonly schedule: string;
  readonly tick: Date;
  readonly workflowId: string;
  /** True when a workflow with the tick's key already existed (nothing was written for it). */
  readonly deduplicated: boolean;
}

/** Most schedules one pass takes on; the rest wait for the next pass. */
const maxSchedulesPerPass = 100;

/**
 * The scheduler (R40): on the database clock (R11), each pass claims the due schedules one at
 * a time, each in its own transaction that submits the workflows of its ticks (by `catchUp`)
 * and advances its next tick. Any number may run at once (one per worker that sweeps): claims
 * skip locked rows and the tick's idempotency key makes a second submit of it a no-op.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly context: ScheduleContext) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= runSchedulerPass(this.context)
        .then(() => undefined)
        .catch((error: unknown) =>
          this.context.logger.warn({ err: error }, 'scheduler pass failed; will retry'),
        )
        .finally(() => {
          this.running = null;
        });
    }, this.context.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.running;
  }
}

/** One pass over every due schedule this engine declares; returns what it submitted. */
export async function runSchedulerPass(context: ScheduleContext): Promise<ScheduledSubmission[]> {
  await context.ready();
  const names = [...context.schedules.keys()];
  if (names.length === 0) return [];
  const workflows = [...context.submit.definitions.keys()];
  // Each schedule once per pass; one that fails waits for the next pass and holds no other up.
  const done: string[] = [];
  const submitted: ScheduledSubmission[] = [];
  for (let count = 0; count < maxSchedulesPerPass; count++) {
    let claimed: string | null = null;
    try {
      const outcome = await context.submit.db.transaction().execute(async (tx) => {
        const due = await scheduleClaimDue(tx, { names, workflows, skip: done });
        if (due === undefined) return null;
        claimed = due.schedule.name;
        return submitDueTicks(tx, context, due.schedule, due.now);
      });
      if (outcome === null) break;
      submitted.push(...outcome);
    } catch (error) {
      if (claimed === null) throw error;
      context.logger.warn({ err: error, schedule: claimed }, 'schedule tick failed; will retry');
    }
    if (claimed !== null) done.push(claimed);
  }
  return submitted;
}

/** Submits the ticks of a claimed schedule that `catchUp` keeps, and advances it. */
async function submitDueTicks(
  tx: Transaction<CausewayDatabase>,
  context: ScheduleContext,
  schedule: ScheduleRecord,
  now: Date,
): Promise<ScheduledSubmission[]> {
  const { name, cron, timezone } = schedule;
  const from = schedule.nextTickAt ?? now;
  const due = ticksBetween(cron, timezone, from, now, catchUpLimit);
  const ticks = ticksToSubmit(schedule.catchUp, due, now, onTimeMs(context));
  const results =
    ticks.length === 0
      ? []
      : await submitMany(
          context.submit,
          ticks.map((tick) => ({
            name: schedule.workflow,
            input: schedule.input,
            idempotencyKey: scheduleTickKey(name, tick),
          })),
          { transaction: tx },
          ticks.map((tick) => scheduleSubmitOrigin(scheduleTickOrigin(name, tick, timezone))),
        );
  await scheduleAdvance(tx, {
    name,
    nextTickAt: nextTick(cron, timezone, now),
    lastTickAt: ticks.at(-1) ?? null,
    lastWorkflowId: results.at(-1)?.workflow.id ?? null,
  });
  const skipped = due.length - ticks.length;
  if (skipped > 0 || (due.length === catchUpLimit && due[0]?.getTime() !== from.getTime())) {
    context.logger.info(
      { schedule: name, catchUp: schedule.catchUp, skipped, since: from.toISOString() },
      `schedule ${name}: missed ticks skipped (catchUp ${schedule.catchUp})`,
    );
  }
  return ticks.map((tick, index) => {
    const result = results[index];
    if (result === undefined) throw new Error(`no submit result for tick ${tick.toISOString()}`);
    context.logger.info(
      {
        schedule: name,
        tick: tick.toISOString(),
        workflowId: result.workflow.id,
        deduplicated: result.deduplicated,
      },
      `schedule ${name}: submitted the ${tick.toISOString()} tick`,
    );
    return {
      schedule: name,
      tick,
      workflowId: result.workflow.id,
      deduplicated: result.deduplicated,
    };
  });
}
