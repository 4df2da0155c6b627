/**
 * A schedule tick in the engine model test (R40): time passes, one scheduler pass runs
 * (`engine.runSchedules()`), and the model says what it submits.
 *
 * The model of `modelSchedule` (model-workflows.ts), written from R40 by hand, not with the
 * cron library: `* * * * *` ticks on every whole minute (in Europe/Berlin as in UTC). A pass
 * at `now` finds the schedule due when its next tick is at or before `now`; with `catchUp:
 * 'latest'` it submits one workflow, for the most recent tick at or before `now`, keyed by
 * the schedule's name and the tick, with the creation edges (the workflow's and each task's,
 * here a first step created `waiting`, R37) taken by `schedule:<name>` and their detail naming
 * the schedule, the tick and the time zone; the next tick is the first whole minute after
 * `now`. A schedule not due submits nothing and stays as it was.
 *
 * Runs share the database and the schedule row: a run starts from the row as earlier runs left
 * it (read once, the model's starting point; absent before the first pass ever, which writes it
 * with the first tick after its now, R41). A pass is only compared when no whole minute falls
 * within `sweepGuardMs` after the time read before it (the clock is moved past it first), so
 * the pass's own `now` is in the same minute as that time.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { clockOf, expectRows, ModelCommand, tally } from './model-harness';
import type { EngineModel } from './model-state';
import { type RealSystem, sweepGuardMs } from './model-system';
import { modelSchedule, modelWorkflows } from './model-workflows';

const minuteMs = 60_000;
/** The latest tick at or before `ms`, and the first one strictly after it. */
const tickAtOrBefore = (ms: number) => Math.floor(ms / minuteMs) * minuteMs;
const tickAfter = (ms: number) => tickAtOrBefore(ms) + minuteMs;

interface ScheduleState {
  readonly next_tick_at: Date | null;
  readonly last_tick_at: Date | null;
  readonly last_workflow_id: string | null;
}

/** The schedule as each run's model knows it (per model, so per run). */
const known = new WeakMap<EngineModel, ScheduleState | null>();

async function readSchedule(system: RealSystem): Promise<ScheduleState | null> {
  const { rows } = await sql<ScheduleState>`
    select next_tick_at, last_tick_at, last_workflow_id from causeway_schedules
    where name = ${modelSchedule.name}`.execute(system.db);
  return rows[0] ?? null;
}

export class ScheduleTickCommand extends ModelCommand {
  /** `again`: a second pass right after the first (it finds the schedule not due). */
  constructor(
    readonly advanceMs: number,
    readonly again: boolean,
  ) {
    super(0);
  }

  toString() {
    return `scheduleTick(+${this.advanceMs} ms${this.again ? ', twice' : ''})`;
  }

  protected async execute(model: EngineModel, system: RealSystem, label: string) {
    await this.pass(model, system, label);
    if (this.again) await new ScheduleTickCommand(0, false).run(model, system);
  }

  private async pass(model: EngineModel, system: RealSystem, label: string) {
    if (!known.has(model)) known.set(model, await readSchedule(system));
    const state = known.get(model) ?? null;
    await system.advanceTo((await system.now()).getTime() + this.advanceMs);
    let before = (await system.now()).getTime();
    if (tickAfter(before) - before <= sweepGuardMs) {
      await system.advanceTo(tickAfter(before) + 1);
      before = (await system.now()).getTime();
    }
    const submitted = await system.engine.runSchedules();
    for (const submission of submitted) system.workflowIds.add(submission.workflowId);
    const rows = await system.takeRows();

    if (state === null || state.next_tick_at === null) {
      // The first pass ever writes the schedule (R41): its first tick is after the pass.
      expect(submitted, `${label}: submitted`).toEqual([]);
      expectRows(label, rows, []);
      const written = await readSchedule(system);
      expect(written?.next_tick_at, `${label}: first tick`).toEqual(new Date(tickAfter(before)));
      known.set(model, written);
      tally('schedule: written');
      return;
    }
    if (state.next_tick_at.getTime() > before) {
      expect(submitted, `${label}: submitted`).toEqual([]);
      expectRows(label, rows, []);
      expect(await readSchedule(system), `${label}: schedule`).toEqual(state);
      tally('schedule: not due');
      return;
    }
    // Due (maybe after missed ticks): one workflow, for the latest tick (catchUp latest).
    const tick = new Date(tickAtOrBefore(before));
    const workflowId = submitted[0]?.workflowId ?? 'none';
    expect(submitted, `${label}: submitted`).toEqual([
      { schedule: modelSchedule.name, tick, workflowId, deduplicated: false },
    ]);
    tally(
      `schedule: submitted${state.next_tick_at.getTime() < tick.getTime() ? ' (caught up)' : ''}`,
    );
    const now = rows[0]?.at ?? new Date(before);
    expect(tickAtOrBefore(now.getTime()), `${label}: the pass's minute`).toBe(tick.getTime());
    const definition = modelWorkflows.find(
      (candidate) => candidate.name === modelSchedule.workflow,
    );
    if (definition === undefined) throw new Error(`no workflow ${modelSchedule.workflow}`);
    const { rows: created } = await sql<{ id: string; step: string; key: string | null }>`
      select t.id, t.step, w.idempotency_key as key from causeway_tasks as t
      join causeway_workflows as w on w.id = t.workflow_id
      where t.workflow_id = ${workflowId}`.execute(system.db);
    // R40: keyed by the schedule's name and the tick, so a second scheduler's submit is a repeat.
    const key = `schedule:${modelSchedule.name}:${tick.toISOString()}`;
    for (const row of created) expect(row.key, `${label}: idempotency key`).toBe(key);
    const taskIds = definition.steps.map(
      (step) => created.find((row) => row.step === step.name)?.id ?? `missing ${step.name}`,
    );
    const expected = model.submit(
      definition,
      key,
      { workflowId, taskIds },
      now,
      modelSchedule.input,
      {
        origin: {
          actor: `schedule:${modelSchedule.name}`,
          detail: {
            schedule: modelSchedule.name,
            tick: tick.toISOString(),
            timezone: modelSchedule.timezone,
          },
        },
      },
    );
    const clock = clockOf(now, 0);
    expected.push(...model.followUp(clock, rows, system));
    expectRows(label, rows, expected, now);
    const advanced: ScheduleState = {
      next_tick_at: new Date(tickAfter(now.getTime())),
      last_tick_at: tick,
      last_workflow_id: workflowId,
    };
    expect(await readSchedule(system), `${label}: schedule`).toEqual(advanced);
    known.set(model, advanced);
  }
}

export const scheduleTickCommand = fc
  .record({ advanceMs: fc.constantFrom(0, 30_000, 61_000, 150_000), again: fc.boolean() })
  .map(({ advanceMs, again }) => new ScheduleTickCommand(advanceMs, again));
