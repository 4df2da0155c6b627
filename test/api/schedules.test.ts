/**
 * Schedules over GraphQL (R41): the `schedules` query shows each schedule with its cron, time
 * zone, catch-up, pause (by whom, why, when), ticks and last workflow; the pause, resume and
 * trigger mutations need an operator token, take the operator from it, keep the reason, answer
 * stable codes, and a repeat with the same clientMutationId gets the first answer.
 */
import { readFileSync } from 'node:fs';
import { scheduleEventKinds } from '@causeway/engine';
import { catchUpModes } from '@causeway/workflow';
import { buildSchema, GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  morningDigest,
  scheduledWorkflows,
  setDatabaseTime,
  tickWorkflow,
} from '../engine/fixtures/schedules';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { aliceToken, bobToken, data, gql, startApi } from './helpers';

const database = useTestDatabase();
const url = () => database().url;

const listing = `query {
  schedules {
    name workflow cron timezone catchUp input
    paused { at by reason }
    nextTickAt lastTickAt
    lastWorkflow { id name state explanation }
    history { kind operator reason at workflow { id } }
  }
}`;

const mutation = (field: string, reason: string, clientMutationId?: string) => `mutation {
  ${field}(name: "morning-digest", reason: ${JSON.stringify(reason)}${
    clientMutationId === undefined ? '' : `, clientMutationId: "${clientMutationId}"`
  }) {
    clientMutationId
    schedule { name paused { by reason } }
    ${field === 'triggerSchedule' ? 'workflow { id state }' : 'changed'}
  }
}`;

interface Listed {
  schedules: {
    name: string;
    paused: { at: string; by: string; reason: string } | null;
    lastWorkflow: { id: string; name: string; state: string; explanation: string } | null;
    history: { kind: string; operator: string; reason: string; workflow: { id: string } | null }[];
    [field: string]: unknown;
  }[];
}

describe('schedules over GraphQL', () => {
  it('lists schedules and pauses, triggers and resumes them as the token operator', async () => {
    const api = await startApi(url(), {
      engine: { workflows: [tickWorkflow], schedules: [morningDigest] },
    });
    // Migrated; the schedule is written at its first use, on the moved clock.
    await setDatabaseTime(url(), new Date('2027-06-01T04:00:00Z'));
    const first = await data<Listed>(api.url, listing);
    expect(first.schedules).toEqual([
      {
        name: 'morning-digest',
        workflow: 'tick-report',
        cron: '0 7 * * *',
        timezone: 'Europe/Berlin',
        catchUp: 'LATEST',
        input: { report: 'digest' },
        paused: null,
        nextTickAt: '2027-06-01T05:00:00.000Z',
        lastTickAt: null,
        lastWorkflow: null,
        history: [],
      },
    ]);

    const paused = await data<{ pauseSchedule: Record<string, unknown> }>(
      api.url,
      mutation('pauseSchedule', 'newsletter on hold'),
      { token: aliceToken },
    );
    expect(paused.pauseSchedule).toEqual({
      clientMutationId: null,
      schedule: { name: 'morning-digest', paused: { by: 'alice', reason: 'newsletter on hold' } },
      changed: true,
    });
    const triggered = await data<{ triggerSchedule: { workflow: { id: string; state: string } } }>(
      api.url,
      mutation('triggerSchedule', 'one for the editor'),
      { token: bobToken },
    );
    expect(triggered.triggerSchedule.workflow.state).toBe('QUEUED');
    const listed = (await data<Listed>(api.url, listing)).schedules[0];
    expect(listed?.paused).toMatchObject({ by: 'alice', reason: 'newsletter on hold' });
    expect(listed?.lastWorkflow).toMatchObject({
      id: triggered.triggerSchedule.workflow.id,
      name: 'tick-report',
      state: 'QUEUED',
    });
    expect(listed?.lastWorkflow?.explanation).toContain(
      'submitted by schedule morning-digest, triggered by bob: "one for the editor"',
    );
    const resumed = await data<{ resumeSchedule: Record<string, unknown> }>(
      api.url,
      mutation('resumeSchedule', 'back on'),
      { token: bobToken },
    );
    expect(resumed.resumeSchedule).toMatchObject({ schedule: { paused: null }, changed: true });
    const history = (await data<Listed>(api.url, listing)).schedules[0]?.history;
    expect(history?.map(({ kind, operator, reason }) => [kind, operator, reason])).toEqual([
      ['PAUSED', 'alice', 'newsletter on hold'],
      ['TRIGGERED', 'bob', 'one for the editor'],
      ['RESUMED', 'bob', 'back on'],
    ]);
    expect(history?.[1]?.workflow?.id).toBe(triggered.triggerSchedule.workflow.id);

    // The next tick, 07:00 in Berlin, explains itself in the schedule's words (R42).
    await setDatabaseTime(url(), new Date('2027-06-01T05:00:02Z'));
    await api.engine.runSchedules();
    const ticked = (await data<Listed>(api.url, listing)).schedules[0];
    expect(ticked?.lastTickAt).toBe('2027-06-01T05:00:00.000Z');
    expect(ticked?.lastWorkflow?.explanation).toContain(
      'workflow: accepted (queued), submitted by schedule morning-digest for the 07:00 Europe/Berlin tick',
    );
  });

  it('needs a token, answers stable codes, and remembers a clientMutationId', async () => {
    const api = await startApi(url(), {
      engine: { workflows: [tickWorkflow], schedules: [morningDigest] },
    });
    const workflows = async () => (await scheduledWorkflows(url(), 'morning-digest')).length;
    const events = async () =>
      (await query(url(), 'select count(*)::int as n from causeway_schedule_events'))[0]?.n;
    const before = { workflows: await workflows(), events: await events() };
    for (const field of ['pauseSchedule', 'resumeSchedule', 'triggerSchedule']) {
      const response = await gql(api.url, mutation(field, 'no token'));
      expect(response.status).toBe(401);
      expect(response.body.errors?.map((error) => error.extensions?.code)).toEqual([
        'UNAUTHENTICATED',
      ]);
    }
    const unknown = await gql(
      api.url,
      'mutation { pauseSchedule(name: "nope", reason: "x") { changed } }',
      { token: aliceToken },
    );
    expect(unknown.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const empty = await gql(api.url, mutation('triggerSchedule', '  '), { token: aliceToken });
    expect(empty.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect({ workflows: await workflows(), events: await events() }).toEqual(before);

    // A retried trigger with the same clientMutationId: the first answer, one workflow.
    const once = () =>
      data<{ triggerSchedule: { clientMutationId: string; workflow: { id: string } } }>(
        api.url,
        mutation('triggerSchedule', 'double click', 'click-1'),
        { token: aliceToken },
      );
    const [a, b] = [await once(), await once()];
    expect(a.triggerSchedule.clientMutationId).toBe('click-1');
    expect(b.triggerSchedule.workflow.id).toBe(a.triggerSchedule.workflow.id);
    expect(await workflows()).toBe(before.workflows + 1);
    const reused = await gql(api.url, mutation('triggerSchedule', 'other', 'click-1'), {
      token: aliceToken,
    });
    expect(reused.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    // Another operator's clientMutationId is their own.
    await data(api.url, mutation('triggerSchedule', 'double click', 'click-1'), {
      token: bobToken,
    });
    expect(await workflows()).toBe(before.workflows + 2);
  });
});

describe('the schedule enums of schema.graphql', () => {
  it('are the domain lists in UPPER_SNAKE', () => {
    const schema = buildSchema(
      readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'),
    );
    const values = (name: string) => {
      const type = schema.getType(name);
      if (!(type instanceof GraphQLEnumType)) throw new Error(`${name} is not an enum`);
      return type.getValues().map((value) => value.name);
    };
    expect(values('CatchUp')).toEqual(catchUpModes.map((mode) => mode.toUpperCase()));
    expect(values('ScheduleEventKind')).toEqual(
      scheduleEventKinds.map((kind) => kind.toUpperCase()),
    );
  });
});
