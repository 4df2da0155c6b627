/**
 * R41: operators pause, resume and trigger a schedule, and the operator's name and reason are
 * kept and shown; a paused schedule submits nothing while time moves, a resume goes on with
 * its catch-up rule, a trigger submits one workflow now. A schedule changed in code is updated
 * when an engine starts: its next tick is recomputed when its cron changed, and a pause
 * survives it.
 */
import { EngineError, scheduleEventKinds } from '@causeway/engine';
import { catchUpModes, DefinitionError, schedule } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import {
  scheduledWorkflows,
  scheduleRow,
  setDatabaseTime,
  submittedTicks,
  tickWorkflow,
} from './fixtures/schedules';

const database = useTestDatabase();
const url = () => database().url;

async function engineError(promise: Promise<unknown>): Promise<EngineError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error('expected an EngineError');
}

describe('pause, resume and trigger', () => {
  it('keep who and why, submit nothing while paused, and go on from the next tick', async () => {
    const nightly = schedule({
      name: 'nightly',
      workflow: tickWorkflow,
      cron: '0 3 * * *',
      input: { report: 'nightly' },
    });
    const engine = testEngine(url(), { workflows: [tickWorkflow], schedules: [nightly] });
    await engine.migrate();
    await setDatabaseTime(url(), new Date('2027-04-01T01:00:00Z'));
    const [fresh] = await engine.schedules();
    expect(fresh).toMatchObject({
      name: 'nightly',
      workflow: 'tick-report',
      cron: '0 3 * * *',
      timezone: 'UTC',
      catchUp: 'latest',
      input: { report: 'nightly' },
      paused: null,
      nextTickAt: new Date('2027-04-01T03:00:00Z'),
      lastTickAt: null,
      lastWorkflow: null,
      history: [],
    });

    const paused = await engine.pauseSchedule('nightly', {
      operator: 'alice',
      reason: 'platform maintenance',
    });
    expect(paused.changed).toBe(true);
    expect(paused.schedule.paused).toMatchObject({ by: 'alice', reason: 'platform maintenance' });
    const again = await engine.pauseSchedule('nightly', { operator: 'bob', reason: 'me too' });
    expect(again.changed).toBe(false);
    expect(again.schedule.paused?.by).toBe('alice');

    // Three ticks pass while paused: nothing is submitted.
    await setDatabaseTime(url(), new Date('2027-04-03T04:00:00Z'));
    expect(await engine.runSchedules()).toEqual([]);
    expect(await scheduledWorkflows(url(), 'nightly')).toEqual([]);

    const triggered = await engine.triggerSchedule('nightly', {
      operator: 'bob',
      reason: 'the editor needs it now',
    });
    expect(triggered.schedule.paused?.by).toBe('alice');
    expect(triggered.schedule.lastWorkflow).toEqual({ id: triggered.workflow.id, state: 'queued' });
    const [manual] = await scheduledWorkflows(url(), 'nightly');
    expect(manual?.id).toBe(triggered.workflow.id);
    expect(manual?.key).toMatch(/^schedule:nightly:manual:[0-9a-f-]{36}$/);
    expect(manual?.actor).toBe('schedule:nightly');
    expect(manual?.detail).toEqual({
      schedule: 'nightly',
      timezone: 'UTC',
      trigger: 'manual',
      operator: 'bob',
      operatorReason: 'the editor needs it now',
    });
    expect((await engine.explain(triggered.workflow.id)).lines[0]).toMatch(
      /submitted by schedule nightly, triggered by bob: "the editor needs it now"$/,
    );
    expect(await engine.runSchedules()).toEqual([]); // still paused

    const resumed = await engine.resumeSchedule('nightly', {
      operator: 'carol',
      reason: 'maintenance done',
    });
    expect(resumed.changed).toBe(true);
    expect(resumed.schedule.paused).toBeNull();
    expect(
      (await engine.resumeSchedule('nightly', { operator: 'carol', reason: 'x' })).changed,
    ).toBe(false);
    // catchUp latest: the most recent tick missed while paused, then the next one.
    const submitted = await engine.runSchedules();
    expect(submitted.map((row) => row.tick.toISOString())).toEqual(['2027-04-03T03:00:00.000Z']);
    const [listed] = await engine.schedules();
    expect(listed?.nextTickAt).toEqual(new Date('2027-04-04T03:00:00Z'));
    expect(listed?.lastTickAt).toEqual(new Date('2027-04-03T03:00:00Z'));
    expect(listed?.lastWorkflow?.id).toBe(submitted[0]?.workflowId);
    expect(
      listed?.history.map(({ kind, operator, reason, workflowId }) => ({
        kind,
        operator,
        reason,
        workflowId,
      })),
    ).toEqual([
      { kind: 'paused', operator: 'alice', reason: 'platform maintenance', workflowId: null },
      {
        kind: 'triggered',
        operator: 'bob',
        reason: 'the editor needs it now',
        workflowId: triggered.workflow.id,
      },
      { kind: 'resumed', operator: 'carol', reason: 'maintenance done', workflowId: null },
    ]);
    expect(listed?.history[0]?.at).toEqual(paused.schedule.paused?.at);
    await expect(
      query(url(), `update causeway_schedule_events set reason = 'edited'`),
    ).rejects.toThrow(/append-only/);
  });

  it('refuses an unknown schedule (not_found) and an empty operator or reason (invalid_request)', async () => {
    const engine = testEngine(url(), { workflows: [tickWorkflow] });
    await engine.migrate();
    const request = { operator: 'alice', reason: 'why not' };
    const before = await scheduleRow(url(), 'nightly');
    expect((await engineError(engine.pauseSchedule('nope', request))).code).toBe('not_found');
    expect((await engineError(engine.resumeSchedule('nope', request))).code).toBe('not_found');
    expect((await engineError(engine.triggerSchedule('nope', request))).code).toBe('not_found');
    for (const bad of [
      { operator: '', reason: 'why' },
      { operator: '  ', reason: 'why' },
      { operator: 'alice', reason: '' },
      { operator: 'alice', reason: ' \n ' },
    ]) {
      expect((await engineError(engine.pauseSchedule('nightly', bad))).code).toBe(
        'invalid_request',
      );
      expect((await engineError(engine.triggerSchedule('nightly', bad))).code).toBe(
        'invalid_request',
      );
    }
    expect(await scheduleRow(url(), 'nightly')).toEqual(before);
  });

  it('refuses at engine creation a schedule of a workflow it does not define, or a bad input', () => {
    const byName = (input: unknown, workflow = 'tick-report') =>
      schedule({ name: 'by-name', workflow, cron: '0 * * * *', input });
    expect(() =>
      testEngine(url(), { workflows: [tickWorkflow], schedules: [byName({}, 'unknown')] }),
    ).toThrow(DefinitionError);
    expect(() =>
      testEngine(url(), { workflows: [tickWorkflow], schedules: [byName({ report: 7 })] }),
    ).toThrow(/input does not match/);
  });
});

describe('a schedule changed in code', () => {
  it('is updated at the next engine start: next tick recomputed when its cron changed, pause kept', async () => {
    const version = (cron: string, report: string, catchUp: 'latest' | 'none' = 'latest') =>
      schedule({
        name: 'weekly',
        workflow: tickWorkflow,
        cron,
        timezone: 'Europe/Berlin',
        input: { report },
        catchUp,
      });
    await setDatabaseTime(url(), new Date('2027-05-05T10:00:00Z')); // a Wednesday
    const v1 = testEngine(url(), {
      workflows: [tickWorkflow],
      schedules: [version('0 9 * * 1', 'monday')],
    });
    await v1.migrate();
    await v1.startWorker({ concurrency: 1 });
    expect((await scheduleRow(url(), 'weekly'))?.next_tick_at).toEqual(
      new Date('2027-05-10T07:00:00Z'), // Monday 09:00 CEST
    );
    await v1.pauseSchedule('weekly', { operator: 'alice', reason: 'moving to Fridays' });
    await v1.close();

    const v2 = testEngine(url(), {
      workflows: [tickWorkflow],
      schedules: [version('0 18 * * 5', 'friday')],
    });
    await v2.startWorker({ concurrency: 1 });
    const changed = (await v2.schedules()).find((row) => row.name === 'weekly');
    expect(changed).toMatchObject({
      cron: '0 18 * * 5',
      input: { report: 'friday' },
      nextTickAt: new Date('2027-05-07T16:00:00Z'), // Friday 18:00 CEST, from now
      paused: { by: 'alice', reason: 'moving to Fridays' },
    });
    await v2.close();

    // The cron unchanged, only its catchUp: the next tick is kept, even though it has passed.
    await setDatabaseTime(url(), new Date('2027-05-08T10:00:00Z'));
    const v3 = testEngine(url(), {
      workflows: [tickWorkflow],
      schedules: [version('0 18 * * 5', 'friday', 'none')],
    });
    const kept = (await v3.schedules()).find((row) => row.name === 'weekly');
    expect(kept).toMatchObject({
      catchUp: 'none',
      nextTickAt: new Date('2027-05-07T16:00:00Z'),
      paused: { by: 'alice' },
    });
    expect(await submittedTicks(url(), 'weekly')).toEqual([]);
  });
});

describe('the schedule tables', () => {
  it('CHECK the catch-up modes and history kinds of the TypeScript lists', async () => {
    const engine = testEngine(url(), { workflows: [tickWorkflow] });
    await engine.migrate();
    const checked = async (table: string, column: string) => {
      const rows = await query<{ def: string }>(
        url(),
        `select pg_get_constraintdef(c.oid) as def from pg_constraint c
           join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
          where c.contype = 'c' and c.conrelid = $1::regclass and a.attname = $2`,
        [table, column],
      );
      return [...(rows[0]?.def ?? '').matchAll(/'([^']*)'::text/g)].map((match) => match[1]);
    };
    expect(await checked('causeway_schedules', 'catch_up')).toEqual([...catchUpModes]);
    expect(await checked('causeway_schedule_events', 'kind')).toEqual([...scheduleEventKinds]);
  });
});
