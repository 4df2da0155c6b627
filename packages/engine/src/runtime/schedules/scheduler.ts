import {
  catchUpLimit,
  nextTick,
  scheduleTickKey,
  scheduleTickOrigin,
  ticksBetween,
  ticksToSubmit,
} from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { scheduleClaimDue } from '../../db/schedules/schedule-claim-due';
import type { ScheduleRecord } from '../../db/schedules/schedule-rows';
import { scheduleAdvance } from '../../db/schedules/schedule-writes';
import type { CausewayDatabase } from '../../db/schema';
import { submitMany } from '../operations/submit';
import { Backoff } from '../reconnect-backoff';
import { transactionRecordingWaits } from '../tracing/committed-wait-spans';
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
const maxSchedulesPerPass = 2_000;
/** Schedules claimed, submitted and advanced together, in one transaction. */
const batchSize = 200;

/**
 * The scheduler (R40): on the database clock (R11), each pass claims the due schedules in
 * batches, each batch in one transaction that submits the workflows of their ticks (by
 * `catchUp`) and advances their next ticks. A batch that fails is tried again one schedule per
 * transaction, so one bad schedule holds no other up. Any number may run at once (one per
 * worker that sweeps): claims skip locked rows and the tick's idempotency key makes a second
 * submit of it a no-op.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** A failed pass skips the ticks of its backoff: a lost database is not asked every tick. */
  private readonly backoff = new Backoff();

  constructor(private readonly context: ScheduleContext) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running !== null) return;
      this.running = this.backoff.attempt(
        () => runSchedulerPass(this.context),
        this.context.logger,
        'scheduler pass failed; will retry',
      );
      void this.running?.finally(() => {
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
  const claim = (tx: Transaction<CausewayDatabase>, limit: number) =>
    scheduleClaimDue(tx, { names, workflows, skip: done, limit });
  while (done.length < maxSchedulesPerPass) {
    let claimed: readonly string[] = [];
    try {
      const outcome = await transactionRecordingWaits(context.submit, async (tx) => {
        const due = await claim(tx, batchSize);
        claimed = due.schedules.map((schedule) => schedule.name);
        return submitDueTicks(tx, context, due.schedules, due.now);
      });
      if (claimed.length === 0) break;
      submitted.push(...outcome);
      done.push(...claimed);
    } catch (error) {
      if (claimed.length === 0) throw error;
      // One at a time: the schedule that failed is logged and left for the next pass.
      for (let index = 0; index < claimed.length; index++) {
        let one: string | null = null;
        try {
          const outcome = await transactionRecordingWaits(context.submit, async (tx) => {
            const due = await claim(tx, 1);
            one = due.schedules[0]?.name ?? null;
            return submitDueTicks(tx, context, due.schedules, due.now);
          });
          submitted.push(...outcome);
        } catch (failure) {
          if (one === null) throw failure;
          context.logger.warn({ err: failure, schedule: one }, 'schedule tick failed; will retry');
        }
        if (one === null) break;
        done.push(one);
      }
    }
  }
  return submitted;
}

/** Submits the ticks of claimed schedules that their `catchUp` keeps, and advances them. */
async function submitDueTicks(
  tx: Transaction<CausewayDatabase>,
  context: ScheduleContext,
  schedules: readonly ScheduleRecord[],
  now: Date,
): Promise<ScheduledSubmission[]> {
  const planned = schedules.map((schedule) => {
    const { cron, timezone } = schedule;
    const from = schedule.nextTickAt ?? now;
    const due = ticksBetween(cron, timezone, from, now, catchUpLimit);
    const ticks = ticksToSubmit(schedule.catchUp, due, now, onTimeMs(context));
    return { schedule, from, due, ticks };
  });
  const requests = planned.flatMap(({ schedule, ticks }) =>
    ticks.map((tick) => ({ schedule, tick })),
  );
  const results =
    requests.length === 0
      ? []
      : await submitMany(
          context.submit,
          requests.map(({ schedule, tick }) => ({
            name: schedule.workflow,
            input: schedule.input,
            idempotencyKey: scheduleTickKey(schedule.name, tick),
          })),
          { transaction: tx },
          requests.map(({ schedule, tick }) =>
            scheduleSubmitOrigin(scheduleTickOrigin(schedule.name, tick, schedule.timezone)),
          ),
        );
  const submitted = requests.map(({ schedule, tick }, index): ScheduledSubmission => {
    const result = results[index];
    if (result === undefined) throw new Error(`no submit result for tick ${tick.toISOString()}`);
    return {
      schedule: schedule.name,
      tick,
      workflowId: result.workflow.id,
      deduplicated: result.deduplicated,
    };
  });
  await scheduleAdvance(
    tx,
    planned.map(({ schedule, ticks }) => ({
      name: schedule.name,
      nextTickAt: nextTick(schedule.cron, schedule.timezone, now),
      lastTickAt: ticks.at(-1) ?? null,
      lastWorkflowId:
        submitted.findLast((entry) => entry.schedule === schedule.name)?.workflowId ?? null,
    })),
  );
  for (const { schedule, from, due, ticks } of planned) {
    const skipped = due.length - ticks.length;
    if (skipped > 0 || (due.length === catchUpLimit && due[0]?.getTime() !== from.getTime())) {
      context.logger.info(
        {
          schedule: schedule.name,
          catchUp: schedule.catchUp,
          skipped,
          since: from.toISOString(),
        },
        `schedule ${schedule.name}: missed ticks skipped (catchUp ${schedule.catchUp})`,
      );
    }
  }
  for (const entry of submitted) {
    context.logger.info(
      {
        schedule: entry.schedule,
        tick: entry.tick.toISOString(),
        workflowId: entry.workflowId,
        deduplicated: entry.deduplicated,
      },
      `schedule ${entry.schedule}: submitted the ${entry.tick.toISOString()} tick`,
    );
  }
  return submitted;
}
