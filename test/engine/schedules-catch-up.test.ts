/**
 * R40: after downtime, `catchUp` decides what the missed ticks become (latest, all up to the
 * cap, none), and across a daylight-saving change the ticks are the cron library's, computed in
 * the schedule's time zone: the scheduler submits exactly the ticks croner gives for those
 * dates, whatever they are (a fixed-time job in the spring gap, both occurrences of a repeated
 * time for an interval job…).
 */
import { catchUpLimit, schedule } from '@causeway/workflow/internal';
import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { scheduleRow, setDatabaseTime, submittedTicks, tickWorkflow } from './fixtures/schedules';

const database = useTestDatabase();
const url = () => database().url;
const minute = 60_000;
const iso = (at: Date) => at.toISOString();

describe('catch-up after downtime', () => {
  it('latest submits the most recent missed tick, all every one up to the cap, none none', async () => {
    const make = (name: string, catchUp: 'latest' | 'all' | 'none') =>
      schedule({
        name,
        workflow: tickWorkflow,
        cron: '* * * * *',
        input: { report: name },
        catchUp,
      });
    const engine = testEngine(url(), {
      workflows: [tickWorkflow],
      schedules: [make('up-latest', 'latest'), make('up-all', 'all'), make('up-none', 'none')],
    });
    await engine.migrate();
    await setDatabaseTime(url(), new Date('2027-03-01T09:00:30Z'));
    expect(await engine.runSchedules()).toEqual([]);

    // Three hours pass with no scheduler running: 180 ticks missed, the last one 30 s ago.
    await setDatabaseTime(url(), new Date('2027-03-01T12:00:30Z'));
    await engine.runSchedules();
    expect(await submittedTicks(url(), 'up-latest')).toEqual(['2027-03-01T12:00:00.000Z']);
    const all = await submittedTicks(url(), 'up-all');
    expect(all).toHaveLength(catchUpLimit);
    expect(all).toEqual(
      Array.from({ length: catchUpLimit }, (_, i) =>
        iso(new Date(Date.parse('2027-03-01T12:00:00Z') - (catchUpLimit - 1 - i) * minute)),
      ),
    );
    expect(await submittedTicks(url(), 'up-none')).toEqual([]);
    for (const name of ['up-latest', 'up-all', 'up-none']) {
      expect((await scheduleRow(url(), name))?.next_tick_at?.toISOString()).toBe(
        '2027-03-01T12:01:00.000Z',
      );
    }

    // Back to normal: the next tick, found on time, is submitted by all three.
    await setDatabaseTime(url(), new Date('2027-03-01T12:01:05Z'));
    await engine.runSchedules();
    expect((await submittedTicks(url(), 'up-latest')).at(-1)).toBe('2027-03-01T12:01:00.000Z');
    expect((await submittedTicks(url(), 'up-all')).at(-1)).toBe('2027-03-01T12:01:00.000Z');
    expect(await submittedTicks(url(), 'up-none')).toEqual(['2027-03-01T12:01:00.000Z']);
    expect(await logMismatches(url())).toEqual([]);
  });
});

/** Walks database time from `from` to `to` in `stepMs` steps, one scheduler pass per step. */
async function walk(engine: ReturnType<typeof testEngine>, from: Date, to: Date, stepMs: number) {
  for (let at = from.getTime(); at <= to.getTime(); at += stepMs) {
    await setDatabaseTime(url(), new Date(at));
    await engine.runSchedules();
  }
}

/** Croner's own ticks of `cron` in `timezone` in (from, to]. */
function libraryTicks(cron: string, timezone: string, from: Date, to: Date): string[] {
  const job = new Cron(cron, { timezone, mode: '5-part', paused: true });
  const ticks: string[] = [];
  for (let tick = job.nextRun(from); tick !== null && tick <= to; tick = job.nextRun(tick)) {
    ticks.push(iso(tick));
  }
  return ticks;
}

describe('a schedule across a daylight-saving change (Europe/Berlin)', () => {
  const cases = [
    // Clocks go from 02:00 to 03:00 on Sunday 28 March 2027: 02:30 does not exist that day.
    ['spring-forward', '2027-03-27T22:00:00Z', '2027-03-29T02:00:00Z'],
    // Clocks go from 03:00 back to 02:00 on Sunday 31 October 2027: 02:30 happens twice.
    ['fall-back', '2027-10-30T22:00:00Z', '2027-11-01T02:00:00Z'],
  ] as const;

  it.each(cases)(
    '%s: the scheduler submits exactly the ticks croner gives',
    async (label, from, to) => {
      const fixed = schedule({
        name: `berlin-fixed-${label}`,
        workflow: tickWorkflow,
        cron: '30 2 * * *',
        timezone: 'Europe/Berlin',
        input: { report: 'fixed' },
      });
      const interval = schedule({
        name: `berlin-interval-${label}`,
        workflow: tickWorkflow,
        cron: '*/30 2 * * *',
        timezone: 'Europe/Berlin',
        input: { report: 'interval' },
      });
      const engine = testEngine(url(), { workflows: [tickWorkflow], schedules: [fixed, interval] });
      await engine.migrate();
      const start = new Date(from);
      const end = new Date(to);
      await setDatabaseTime(url(), start);
      await walk(engine, start, end, 20 * minute);

      const expectedFixed = libraryTicks('30 2 * * *', 'Europe/Berlin', start, end);
      const expectedInterval = libraryTicks('*/30 2 * * *', 'Europe/Berlin', start, end);
      expect(await submittedTicks(url(), fixed.name)).toEqual(expectedFixed);
      expect(await submittedTicks(url(), interval.name)).toEqual(expectedInterval);
      // The walk crossed the change: one 02:30 tick a day for the fixed-time job, and the
      // interval job's ticks differ from a plain day's two (none in the gap, four in the repeat).
      expect(expectedFixed).toHaveLength(2);
      expect(expectedInterval).toHaveLength(label === 'spring-forward' ? 2 : 6);
    },
  );
});
