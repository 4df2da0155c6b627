/**
 * The one-statement send (`sendInOneStatement` → `eventSendInOneStatement`) against the
 * transaction path (`sendEventsInFull`, the full decision): the same workflows wait in two
 * databases, the same random batches of events (of one event or several) are sent one way in
 * each, and every row that differs only in ids and times must be the same (steps after one
 * event, after two, and none): workflows, tasks, log rows, events, deliveries and the answers.
 * Then the cases the statement leaves to the transaction path, each of which must write
 * nothing: a locked workflow, a used idempotency key, a completion that makes a delayed step
 * ready, a workflow waiting twice, one (name, key) twice in a batch.
 *
 * The oracle is the engine's own full decision on purpose (a differential test): the engine
 * model test checks that decision against the pure machine.
 */
import { type Engine, EngineError } from '@causeway/engine';
import { workflow } from '@causeway/workflow';
import fc from 'fast-check';
import pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EngineContext } from '../../packages/engine/src/runtime/context';
import { sendInOneStatement } from '../../packages/engine/src/runtime/events/one-statement-send';
import {
  checkedEvents,
  type EventToSend,
  sendEventsInFull,
} from '../../packages/engine/src/runtime/events/send-event';
import { requesterActor } from '../../packages/engine/src/runtime/operations/operations';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';

const verdict = z
  .object({ by: z.string(), ok: z.boolean() })
  .transform((value) => ({ ...value, seen: true }));
const input = z.object({ id: z.string(), key: z.string() });
const timeoutMs = 86_400_000;

/** An event step waiting for `name`, keyed by the input's key, with the verdict payload. */
const keyed = (name: string) => ({
  name,
  key: (ctx: { readonly input: z.infer<typeof input> }) => ctx.input.key,
  payload: verdict,
  timeoutMs,
});

const plain = workflow({ name: 'eo-plain', input }).event('approval', keyed('eo.approved')).build();
const chained = workflow({ name: 'eo-chained', input })
  .event('approval', keyed('eo.approved'))
  .step('publish', { after: ['approval'], queue: 'q-eo', run: () => null })
  .step('side', { queue: 'q-eo', run: () => null })
  .build();
// A step after two events: the first leaves it pending, the second promotes it.
const both = workflow({ name: 'eo-both', input })
  .event('approval', keyed('eo.approved'))
  .event('legal', keyed('eo.legal'))
  .step('publish', { after: ['approval', 'legal'], queue: 'q-eo', run: () => null })
  .build();
const delayed = workflow({ name: 'eo-delayed', input })
  .event('approval', { name: 'eo.delayed', key: (ctx) => ctx.input.key, timeoutMs })
  .step('later', { after: ['approval'], queue: 'q-eo', delayMs: 60_000, run: () => null })
  .build();
const twice = workflow({ name: 'eo-twice', input })
  .event('first', { name: 'eo.twice', key: (ctx) => ctx.input.key, timeoutMs })
  .event('second', { name: 'eo.twice', key: (ctx) => ctx.input.key, timeoutMs })
  .build();
// No step after the event step (the statement without its promotion part), beside a step of
// its own: the parent's state is the tasks' states as the event leaves them.
const signed = workflow({ name: 'eo-signed', input })
  .event('signature', keyed('eo.signed'))
  .step('side', { queue: 'q-eo', run: () => null })
  .build();
const workflows = [plain, chained, both, delayed, twice, signed];

const one = useTestDatabase();
const full = useTestDatabase();
let inOne: Engine;
let inFull: Engine;

beforeAll(async () => {
  await testEngine(one().url, { workflows }).migrate();
  await testEngine(full().url, { workflows }).migrate();
});
// testEngine closes its engines after each test.
beforeEach(() => {
  inOne = testEngine(one().url, { workflows });
  inFull = testEngine(full().url, { workflows });
});

const contextOf = (engine: Engine) =>
  ({
    db: engine.db,
    definitions: engine.definitions,
    apply: { definitions: engine.definitions, leaseMs: 30_000, random: () => 0.5 },
  }) as unknown as EngineContext;

/** Everything a run wrote, without ids and times, by workflow input id. */
async function written(url: string, prefix: string) {
  const like = [`${prefix}-%`];
  const workflowRows = await query(
    url,
    `select input->>'id' as id, name, state from causeway_workflows
     where input->>'id' like $1 order by 1`,
    like,
  );
  const taskRows = await query(
    url,
    `select w.input->>'id' as id, t.step, t.state, t.attempt, t.output, t.run_at is null as no_run_at,
       t.lease_holder, t.event_name, t.event_key, t.wait_since is null as no_wait_since,
       t.wait_timeout_at is null as no_timeout, t.updated_at = w.updated_at as same_update
     from causeway_tasks as t join causeway_workflows as w on w.id = t.workflow_id
     where w.input->>'id' like $1 order by 1, 2`,
    like,
  );
  const logRows = await query(
    url,
    `select w.input->>'id' as id, tr.step, tr.from_state, tr.to_state, tr.reason, tr.actor,
       tr.attempt, tr.detail - 'eventId' as detail, e.key as event_key, e.payload as event_payload,
       tr.error_category, tr.error_summary
     from causeway_transitions as tr join causeway_workflows as w on w.id = tr.workflow_id
     left join causeway_events as e on e.id::text = tr.detail->>'eventId'
     where w.input->>'id' like $1 order by 1, tr.id`,
    like,
  );
  const eventRows = await query(
    url,
    `select name, key, payload, idempotency_key, sent_by, reason from causeway_events
     where key like $1 order by key, name`,
    like,
  );
  const deliveryRows = await query(
    url,
    `select w.input->>'id' as id, t.step, e.key
     from causeway_event_deliveries as d join causeway_tasks as t on t.id = d.task_id
     join causeway_workflows as w on w.id = d.workflow_id join causeway_events as e on e.id = d.event_id
     where w.input->>'id' like $1 order by 1, 2`,
    like,
  );
  return { workflowRows, taskRows, logRows, eventRows, deliveryRows };
}

const shape = fc.record({
  waits: fc.array(
    fc.record({
      kind: fc.constantFrom('eo-plain', 'eo-chained', 'eo-both', 'eo-signed'),
      key: fc.nat(5),
    }),
    {
      minLength: 1,
      maxLength: 6,
    },
  ),
  batches: fc.array(
    fc.record({
      name: fc.constantFrom('eo.approved', 'eo.legal', 'eo.signed'),
      keys: fc.uniqueArray(fc.nat(7), { minLength: 1, maxLength: 5 }),
      reason: fc.option(fc.constantFrom('looks good', '  trimmed  '), { nil: undefined }),
      operator: fc.option(fc.constant('alice'), { nil: undefined }),
      ok: fc.boolean(),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

let run = 0;

describe('the one-statement send', () => {
  it('writes what the full decision writes, row for row, and answers the same', async () => {
    await fc.assert(
      fc.asyncProperty(shape, async ({ waits, batches }) => {
        run += 1;
        const prefix = `r${run}`;
        const requests = waits.map((wait, i) => ({
          name: wait.kind,
          input: { id: `${prefix}-${i}`, key: `${prefix}-k${wait.key}` },
        }));
        await inOne.submitMany(requests);
        await inFull.submitMany(requests);
        for (const batch of batches) {
          const events: EventToSend[] = batch.keys.map((key) => ({
            name: batch.name,
            key: `${prefix}-k${key}`,
            payload: { by: 'editor', ok: batch.ok },
            ...(batch.reason === undefined ? {} : { reason: batch.reason }),
          }));
          const actor = requesterActor(
            batch.operator === undefined ? {} : { operator: batch.operator },
          );
          const checked = checkedEvents(contextOf(inOne), events);
          const answered = await sendInOneStatement(inOne.db, inOne.definitions, checked, actor);
          expect(answered).not.toBeNull();
          const expected = await sendEventsInFull(contextOf(inFull), checked, actor);
          const tasksOf = async (url: string, answers: NonNullable<typeof answered>) =>
            Promise.all(
              answers.map(async (answer) => ({
                deduplicated: answer.deduplicated,
                tasks: await query(
                  url,
                  `select w.input->>'id' as id, t.step, t.state from causeway_tasks as t
                   join causeway_workflows as w on w.id = t.workflow_id
                   where t.id = any($1::uuid[]) order by 1, 2`,
                  [answer.tasks.map((task) => task.taskId)],
                ),
                states: answer.tasks.map((task) => task.state).sort(),
              })),
            );
          expect(await tasksOf(one().url, answered ?? [])).toEqual(
            await tasksOf(full().url, expected),
          );
        }
        expect(await written(one().url, prefix)).toEqual(await written(full().url, prefix));
        // One statement, one time: the event is received, delivered and logged at once.
        expect(
          await query(
            one().url,
            `select 1 from causeway_event_deliveries as d
             join causeway_events as e on e.id = d.event_id
             join causeway_transitions as tr on tr.task_id = d.task_id and tr.reason = 'event_received'
             where e.key like $1 and (d.delivered_at <> e.received_at or tr.at <> e.received_at)`,
            [`${prefix}-%`],
          ),
        ).toEqual([]);
      }),
      { numRuns: 25 },
    );
    expect(await logMismatches(one().url)).toEqual([]);
  });
});

describe('what the one statement leaves to the transaction path, writing nothing', () => {
  const actor = requesterActor({});
  const eventCount = async () =>
    Number(
      (await query<{ n: string }>(one().url, 'select count(*) as n from causeway_events'))[0]?.n,
    );

  async function leftAlone(events: EventToSend[]) {
    const before = await eventCount();
    const checked = checkedEvents(contextOf(inOne), events);
    expect(await sendInOneStatement(inOne.db, inOne.definitions, checked, actor)).toBeNull();
    expect(await eventCount()).toBe(before);
  }

  it('a waiting workflow locked by another transaction (never awaited while holding key locks)', async () => {
    await inOne.submit('eo-plain', { id: 'lock-1', key: 'lock-k' });
    const client = new pg.Client({ connectionString: one().url });
    await client.connect();
    try {
      await client.query('begin');
      await client.query(
        `select 1 from causeway_workflows where input->>'id' = 'lock-1' for update`,
      );
      await leftAlone([{ name: 'eo.approved', key: 'lock-k', payload: { by: 'a', ok: true } }]);
      // The public send takes the transaction path and waits for the lock.
      const sent = inOne.sendEvent('eo.approved', 'lock-k', { by: 'a', ok: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await client.query('commit');
      expect((await sent).tasks.map((task) => task.state)).toEqual(['succeeded']);
    } finally {
      await client.end();
    }
  });

  it('an idempotency key used before: the transaction path answers the repeat', async () => {
    await inOne.submit('eo-plain', { id: 'idem-1', key: 'idem-k' });
    const event = { name: 'eo.approved', key: 'idem-k', payload: { by: 'a', ok: true } };
    const first = await inOne.sendEvent(event.name, event.key, event.payload, {
      idempotencyKey: 'once',
    });
    await leftAlone([{ ...event, idempotencyKey: 'once' }]);
    const repeat = await inOne.sendEvent(event.name, event.key, event.payload, {
      idempotencyKey: 'once',
    });
    expect(repeat).toMatchObject({ eventId: first.eventId, deduplicated: true });
    await expect(
      inOne.sendEvent(event.name, 'other-k', event.payload, { idempotencyKey: 'once' }),
    ).rejects.toThrow(EngineError);
  });

  it('a completion that makes a delayed step ready (its run_at is per step)', async () => {
    await inOne.submit('eo-delayed', { id: 'delay-1', key: 'delay-k' });
    await leftAlone([{ name: 'eo.delayed', key: 'delay-k', payload: null }]);
    const answer = await inOne.sendEvent('eo.delayed', 'delay-k', null);
    expect(answer.tasks).toHaveLength(1);
  });

  it('a workflow waiting twice for one (name, key), and one (name, key) twice in a batch', async () => {
    await inOne.submit('eo-twice', { id: 'twice-1', key: 'twice-k' });
    await leftAlone([{ name: 'eo.twice', key: 'twice-k', payload: 1 }]);
    expect((await inOne.sendEvent('eo.twice', 'twice-k', 1)).tasks).toHaveLength(2);
    await inOne.submit('eo-plain', { id: 'pair-1', key: 'pair-k' });
    const event = { name: 'eo.approved', key: 'pair-k', payload: { by: 'a', ok: true } };
    await leftAlone([event, event]);
    const answers = await inOne.sendEvents([event, event]);
    expect(answers.map((answer) => answer.tasks.length)).toEqual([1, 0]);
    expect(await logMismatches(one().url)).toEqual([]);
  });
});
