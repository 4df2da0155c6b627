/**
 * R40: one workflow per tick however many engines run. Two engines declare the same schedule;
 * each runs the scheduler in its worker, and the test runs passes of both at the same moment
 * too. Ten minutes of database time give exactly ten workflows, each keyed and described by
 * its tick, taken by `schedule:<name>`, and no submit had to be deduplicated: the claim
 * (FOR UPDATE SKIP LOCKED) kept the second engine off the tick, not the key. A schedule row
 * another engine holds locked holds no other schedule up.
 */
import type { ScheduledSubmission } from '@causeway/engine';
import { defineWorkflow, schedule, step } from '@causeway/workflow';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import {
  scheduledWorkflows,
  scheduleRow,
  setDatabaseTime,
  submittedTicks,
  tickWorkflow,
} from './fixtures/schedules';

const database = useTestDatabase();
const url = () => database().url;
const minute = 60_000;

describe('a schedule run by two engines', () => {
  it('submits exactly one workflow per tick: ten ticks, ten workflows', async () => {
    const everyMinute = schedule({
      name: 'every-minute',
      workflow: tickWorkflow,
      cron: '* * * * *',
      input: { report: 'minutely' },
    });
    const options = { workflows: [tickWorkflow], schedules: [everyMinute] };
    const a = testEngine(url(), options);
    const b = testEngine(url(), options);
    await a.migrate();
    const start = new Date('2027-02-01T09:00:30Z');
    await setDatabaseTime(url(), start);
    await a.startWorker({ concurrency: 2 });
    await b.startWorker({ concurrency: 2 });
    expect((await scheduleRow(url(), 'every-minute'))?.next_tick_at?.toISOString()).toBe(
      '2027-02-01T09:01:00.000Z',
    );

    const passes: ScheduledSubmission[] = [];
    for (let k = 1; k <= 10; k++) {
      await setDatabaseTime(url(), new Date(start.getTime() + k * minute));
      // Both engines' passes at once, beside their workers' own scheduler loops.
      const [fromA, fromB] = await Promise.all([a.runSchedules(), b.runSchedules()]);
      passes.push(...fromA, ...fromB);
      await waitFor(async () => (await submittedTicks(url(), 'every-minute')).length >= k, {
        description: `the workflow of tick ${k}`,
      });
    }

    const expected = Array.from({ length: 10 }, (_, i) =>
      new Date(Date.parse('2027-02-01T09:01:00Z') + i * minute).toISOString(),
    );
    const rows = await scheduledWorkflows(url(), 'every-minute');
    expect(rows.map((row) => row.key)).toEqual(
      expected.map((tick) => `schedule:every-minute:${tick}`),
    );
    for (const [index, row] of rows.entries()) {
      const detail = { schedule: 'every-minute', tick: expected[index], timezone: 'UTC' };
      expect(row.actor).toBe('schedule:every-minute');
      expect(row.detail).toEqual(detail);
      expect(row.taskActors).toEqual(['schedule:every-minute']);
      expect(row.taskDetails).toEqual([detail]);
    }
    expect(passes.every((submission) => !submission.deduplicated)).toBe(true);
    const stored = await scheduleRow(url(), 'every-minute');
    expect(stored?.last_tick_at?.toISOString()).toBe(expected[9]);
    expect(stored?.last_workflow_id).toBe(rows[9]?.id);
    expect(stored?.next_tick_at?.toISOString()).toBe('2027-02-01T09:11:00.000Z');
    const explanation = await a.explain(rows[0]?.id as string);
    expect(explanation.lines[0]).toMatch(
      /workflow: accepted \(queued\), submitted by schedule every-minute for the 09:01 UTC tick$/,
    );
    expect(await logMismatches(url())).toEqual([]);
  });

  it('passes over a schedule another engine holds locked, and takes it once released', async () => {
    const make = (name: string) =>
      schedule({ name, workflow: tickWorkflow, cron: '*/5 * * * *', input: { report: name } });
    const engine = testEngine(url(), {
      workflows: [tickWorkflow],
      schedules: [make('held-elsewhere'), make('not-held')],
    });
    await engine.migrate();
    await setDatabaseTime(url(), new Date('2027-02-02T08:02:00Z'));
    expect(await engine.runSchedules()).toEqual([]); // written at 08:02, first tick 08:05
    await setDatabaseTime(url(), new Date('2027-02-02T08:05:01Z'));

    const holder = new pg.Client({ connectionString: url() });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(
        `select 1 from causeway_schedules where name = 'held-elsewhere' for update`,
      );
      // Both are due; 'held-elsewhere' sorts first. The pass must not wait for the lock.
      const pass = engine.runSchedules();
      const timeout = new Promise<'waited'>((resolve) => setTimeout(resolve, 3_000, 'waited'));
      const first = await Promise.race([pass, timeout]);
      expect(first).not.toBe('waited');
      expect((first as ScheduledSubmission[]).map((row) => row.schedule)).toEqual(['not-held']);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const second = await engine.runSchedules();
    expect(second.map((row) => [row.schedule, row.tick.toISOString()])).toEqual([
      ['held-elsewhere', '2027-02-02T08:05:00.000Z'],
    ]);
    expect(await submittedTicks(url(), 'not-held')).toEqual(['2027-02-02T08:05:00.000Z']);
  });

  it('a schedule whose submit is refused holds none of the others in its batch up', async () => {
    const capped = defineWorkflow({
      name: 'tick-capped',
      input: z.object({ report: z.string() }),
      steps: { only: step({ queue: 'q-capped', run: () => null }) },
    });
    const make = (name: string, target = tickWorkflow) =>
      schedule({ name, workflow: target, cron: '*/5 * * * *', input: { report: name } });
    const engine = testEngine(url(), {
      workflows: [tickWorkflow, capped],
      schedules: [make('batch-a'), make('batch-capped', capped), make('batch-z')],
      queues: { 'q-capped': { maxBacklog: 1 } },
    });
    await engine.migrate();
    await setDatabaseTime(url(), new Date('2027-02-04T08:02:00Z'));
    expect(await engine.runSchedules()).toEqual([]);
    await engine.submit('tick-capped', { report: 'fills the queue' });
    await setDatabaseTime(url(), new Date('2027-02-04T08:05:01Z'));
    const pass = await engine.runSchedules();
    expect(pass.map((row) => row.schedule).sort()).toEqual(['batch-a', 'batch-z']);
    expect(await submittedTicks(url(), 'batch-capped')).toEqual([]);
    // It stays due, and goes once its queue has room.
    expect((await scheduleRow(url(), 'batch-capped'))?.next_tick_at?.toISOString()).toBe(
      '2027-02-04T08:05:00.000Z',
    );
  });

  it('runs in a worker that sweeps, unless the worker says scheduler: false', async () => {
    const make = (name: string) =>
      schedule({ name, workflow: tickWorkflow, cron: '0 * * * *', input: { report: name } });
    const options = (name: string) => ({ workflows: [tickWorkflow], schedules: [make(name)] });
    const running = testEngine(url(), options('loop-on'));
    const off = testEngine(url(), options('loop-off'));
    const noSweeper = testEngine(url(), options('loop-no-sweeper'));
    await running.migrate();
    await setDatabaseTime(url(), new Date('2027-02-03T10:59:00Z'));
    await running.startWorker({ concurrency: 1 });
    await off.startWorker({ concurrency: 1, scheduler: false });
    await noSweeper.startWorker({ concurrency: 1, sweeper: false });
    await setDatabaseTime(url(), new Date('2027-02-03T11:00:01Z'));
    // No pass by hand: the worker's own loop (every sweep interval) submits the tick.
    await waitFor(async () => (await submittedTicks(url(), 'loop-on')).length === 1, {
      description: 'the tick submitted by the worker loop',
    });
    await new Promise((resolve) => setTimeout(resolve, 500)); // five sweep intervals
    expect(await submittedTicks(url(), 'loop-off')).toEqual([]);
    expect(await submittedTicks(url(), 'loop-no-sweeper')).toEqual([]);
    // Their schedules were still written when their workers started (R41).
    expect((await scheduleRow(url(), 'loop-off'))?.next_tick_at?.toISOString()).toBe(
      '2027-02-03T11:00:00.000Z',
    );
  });
});
