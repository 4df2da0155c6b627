/**
 * `schedule({...})` (R40) as a definition: refused at definition time when its cron does not
 * parse, its time zone is unknown, its input fails the workflow's schema or its catchUp is not
 * one of the three; otherwise frozen. And the pure parts the scheduler uses: which due ticks a
 * catchUp submits, the tick keys, and how explain words a scheduled submit (R42).
 */
import {
  catchUpLimit,
  DefinitionError,
  defineWorkflow,
  explain,
  nextTick,
  type ScheduleOptions,
  schedule,
  scheduleRegistry,
  scheduleTickKey,
  scheduleTickOrigin,
  scheduleTriggerOrigin,
  step,
  type Transition,
  ticksBetween,
  ticksToSubmit,
} from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const digest = defineWorkflow({
  name: 'morning-digest',
  input: z.object({ edition: z.string().min(1) }),
  steps: { send: step({ run: () => ({}) }) },
});

const valid: ScheduleOptions = {
  name: 'morning-digest',
  workflow: digest,
  cron: '0 7 * * *',
  timezone: 'Europe/Berlin',
  input: { edition: 'daily' },
};

function problemsOf(options: Record<string, unknown>): string[] {
  try {
    schedule({ ...valid, ...options } as ScheduleOptions);
  } catch (error) {
    if (error instanceof DefinitionError) {
      expect(error.code).toBe('invalid_definition');
      return [...error.problems];
    }
    throw error;
  }
  throw new Error('expected a DefinitionError');
}

describe('schedule()', () => {
  it('checks, canonicalizes and freezes a schedule; catchUp defaults to latest', () => {
    const defined = schedule({ ...valid, timezone: 'europe/berlin' });
    expect(defined).toEqual({
      name: 'morning-digest',
      workflow: 'morning-digest',
      cron: '0 7 * * *',
      timezone: 'Europe/Berlin',
      input: { edition: 'daily' },
      catchUp: 'latest',
    });
    expect(Object.isFrozen(defined)).toBe(true);
    expect(Object.isFrozen(defined.input)).toBe(true);
    // By name, the input is only checked as JSON here (the engine checks it against its schema).
    expect(
      schedule({ ...valid, workflow: 'morning-digest', input: { anything: 1 } }).workflow,
    ).toBe('morning-digest');
    expect(schedule({ ...valid, timezone: undefined, catchUp: 'all' })).toMatchObject({
      timezone: 'UTC',
      catchUp: 'all',
    });
  });

  it.each([
    ['a cron that does not parse', { cron: '61 * * * *' }, /cron "61 \* \* \* \*" does not parse/],
    ['a cron of six fields', { cron: '0 0 7 * * *' }, /does not parse/],
    ['a cron that is not text', { cron: 7 }, /cron must be a non-empty string/],
    ['a cron that never fires', { cron: '0 0 30 2 *' }, /never fires/],
    ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, /not an IANA time zone/],
    ['an input the schema refuses', { input: { edition: '' } }, /input: input does not match/],
    ['an input JSONB cannot store', { workflow: 'x', input: { a: 'nul\u0000' } }, /NUL/],
    ['a bad catchUp', { catchUp: 'some' }, /catchUp must be one of latest, all, none/],
    ['a bad name', { name: 'Morning Digest' }, /name must be lowercase/],
    ['no workflow', { workflow: undefined }, /workflow must be a workflow definition/],
  ])('refuses %s with a DefinitionError', (_label, options, problem) => {
    expect(problemsOf(options)).toEqual([expect.stringMatching(problem)]);
  });

  it('refuses two schedules of one name', () => {
    expect(() => scheduleRegistry([schedule(valid), schedule(valid)])).toThrow(
      /two schedules are named "morning-digest"/,
    );
  });
});

describe('ticks (the cron library, in the schedule time zone)', () => {
  it('gives the ticks between two instants, both included, the most recent `max`', () => {
    const from = new Date('2027-01-04T10:00:00Z');
    const to = new Date('2027-01-04T10:05:00Z');
    expect(
      ticksBetween('* * * * *', 'UTC', from, to, 100).map((tick) => tick.toISOString()),
    ).toEqual([0, 1, 2, 3, 4, 5].map((minute) => `2027-01-04T10:0${minute}:00.000Z`));
    expect(ticksBetween('* * * * *', 'UTC', from, to, 2).map((tick) => tick.toISOString())).toEqual(
      ['2027-01-04T10:04:00.000Z', '2027-01-04T10:05:00.000Z'],
    );
    expect(ticksBetween('* * * * *', 'UTC', to, from, 100)).toEqual([]);
    expect(nextTick('0 7 * * *', 'Europe/Berlin', to)?.toISOString()).toBe(
      '2027-01-05T06:00:00.000Z',
    );
  });
});

describe('ticksToSubmit', () => {
  const now = new Date('2027-01-04T12:00:30Z');
  const due = [0, 1, 2].map((hour) => new Date(`2027-01-04T1${hour}:00:00Z`));
  const ticks = (catchUp: 'latest' | 'all' | 'none', onTime = 60_000) =>
    ticksToSubmit(catchUp, due, now, onTime).map((tick) => tick.toISOString());

  it('latest: the most recent due tick only', () => {
    expect(ticks('latest')).toEqual(['2027-01-04T12:00:00.000Z']);
  });
  it('all: every due tick, up to the cap', () => {
    expect(ticks('all')).toHaveLength(3);
    const many = Array.from({ length: catchUpLimit + 5 }, (_, i) => new Date(i * 60_000));
    expect(ticksToSubmit('all', many, new Date(many.length * 60_000), 0)).toEqual(
      many.slice(-catchUpLimit),
    );
  });
  it('none: only a tick found on time', () => {
    expect(ticks('none', 60_000)).toEqual(['2027-01-04T12:00:00.000Z']);
    expect(ticks('none', 10_000)).toEqual([]);
  });
  it('nothing due, nothing submitted', () => {
    expect(ticksToSubmit('all', [], now, 0)).toEqual([]);
  });
});

describe('explain a scheduled submit (R42)', () => {
  const row = (detail: Transition['detail']): Transition => ({
    id: '1',
    workflowId: 'w',
    taskId: null,
    step: null,
    from: null,
    to: 'queued',
    reason: 'submitted',
    errorCategory: null,
    errorSummary: null,
    actor: 'schedule:morning-digest',
    attempt: 0,
    at: new Date('2027-01-04T06:00:01Z'),
    detail,
  });

  it('names the schedule and the tick on the clocks of its time zone', () => {
    const tick = new Date('2027-01-04T06:00:00Z');
    const origin = scheduleTickOrigin('morning-digest', tick, 'Europe/Berlin');
    expect(explain([row({ ...origin })]).lines).toEqual([
      '06:00:01 workflow: accepted (queued), submitted by schedule morning-digest for the 07:00 Europe/Berlin tick',
    ]);
    expect(scheduleTickKey('morning-digest', tick)).toBe(
      'schedule:morning-digest:2027-01-04T06:00:00.000Z',
    );
  });

  it('names the operator of a trigger, and says nothing for a client submit', () => {
    const origin = scheduleTriggerOrigin('morning-digest', 'Europe/Berlin', 'alice', 'rerun');
    expect(explain([row({ ...origin })]).lines[0]).toBe(
      '06:00:01 workflow: accepted (queued), submitted by schedule morning-digest, triggered by alice: "rerun"',
    );
    expect(explain([row(null)]).lines[0]).toBe('06:00:01 workflow: accepted (queued)');
  });
});
