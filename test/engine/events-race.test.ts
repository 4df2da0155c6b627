import { setTimeout as sleep } from 'node:timers/promises';
import { workflow } from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound } from './semantics-support';

/**
 * The race users hit (R37, R38): an event sent while the step before its event step is
 * finishing. The send and the settle that starts the wait run at the same moment, on different
 * connections, 500 times; the event must never be lost and never complete a step twice.
 */
const database = useTestDatabase();
const url = () => database().url;

const runs = 500;
/** Resolvers of "the upstream step of workflow <id> is returning now", by input id. */
const started = new Map<string, () => void>();
const startedSignal = new Map<string, Promise<void>>();
/** For every fourth workflow the send completes before its upstream step returns. */
const sentFirst = new Map<string, { done: Promise<void>; resolve: () => void }>();

const raced = workflow({ name: 'events-race', input: z.object({ id: z.string() }) })
  .step('upstream', {
    queue: 'q-race',
    run: async (ctx) => {
      // The step returns now: its settle (which starts the wait) races the send it triggers.
      started.get(ctx.input.id)?.();
      await sentFirst.get(ctx.input.id)?.done;
      return { done: ctx.input.id };
    },
  })
  .event('approval', {
    after: ['upstream'],
    name: 'race.approved',
    key: (ctx) => ctx.input.id,
    timeoutMs: 3_600_000,
  })
  .step('after', { after: ['approval'], queue: 'q-race', run: (ctx) => ctx.results.approval })
  .build();

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [raced] });
  await setup.migrate();
  await setup.close();
});

describe('an event sent while its upstream step finishes', () => {
  it(`is never lost and never completes the step twice (${runs} races)`, async () => {
    const workers = testEngine(url(), { workflows: [raced], pollIntervalMs: 50 });
    // The sender has its own pool: its transactions race the worker's on other connections.
    const sender = testEngine(url(), { workflows: [raced] });
    const ids = Array.from({ length: runs }, (_, index) => `race-${index}`);
    for (const [index, id] of ids.entries()) {
      startedSignal.set(id, new Promise<void>((resolve) => started.set(id, resolve)));
      if (index % 4 === 0) {
        let resolve = () => {};
        const done = new Promise<void>((settle) => {
          resolve = settle;
        });
        sentFirst.set(id, { done, resolve });
      }
    }
    const submitted = await workers.submitMany(
      ids.map((id) => ({ name: 'events-race', input: { id } })),
    );
    const worker = await workers.startWorker({ concurrency: 8 });
    const answers = await Promise.all(
      ids.map(async (id, index) => {
        await startedSignal.get(id);
        if (index % 4 === 0) {
          const sent = await sender.sendEvent('race.approved', id, { for: id });
          sentFirst.get(id)?.resolve();
          return sent;
        }
        // A random head start for the settle, from none to a few of its round trips.
        await sleep(Math.floor(Math.random() * 4));
        return sender.sendEvent('race.approved', id, { for: id });
      }),
    );
    const workflowIds = submitted.map((result) => result.workflow.id);
    await waitFor(
      async () => {
        const rows = await query<{ n: number }>(
          url(),
          `select count(*)::int as n from causeway_workflows
            where id = any($1::uuid[]) and state = 'succeeded'`,
          [workflowIds],
        );
        return rows[0]?.n === runs;
      },
      { timeoutMs: 60_000, description: 'every raced workflow succeeded' },
    );
    await worker.stop();
    // Exactly one event_received per approval, and one delivery per event.
    const received = await query<{ task_id: string; n: number }>(
      url(),
      `select task_id, count(*)::int as n from causeway_transitions
        where workflow_id = any($1::uuid[]) and task_id is not null and reason = 'event_received'
        group by task_id`,
      [workflowIds],
    );
    expect(received).toHaveLength(runs);
    expect(received.every((row) => row.n === 1)).toBe(true);
    const deliveries = await query<{ n: number; events: number }>(
      url(),
      `select count(*)::int as n, count(distinct event_id)::int as events
         from causeway_event_deliveries where workflow_id = any($1::uuid[])`,
      [workflowIds],
    );
    expect(deliveries[0]).toEqual({ n: runs, events: runs });
    // The downstream step read the event's payload.
    const outputs = await query<{ output: { for: string }; id: string }>(
      url(),
      `select t.output, w.input->>'id' as id from causeway_tasks as t
         join causeway_workflows as w on w.id = t.workflow_id
        where t.workflow_id = any($1::uuid[]) and t.step = 'after'`,
      [workflowIds],
    );
    expect(outputs.every((row) => row.output.for === row.id)).toBe(true);
    // Each send completed its wait, or found none and left its event for the wait to find; the
    // sends that completed before their upstream step returned all left it.
    expect(answers.every((answer) => answer.tasks.length <= 1)).toBe(true);
    expect(answers.filter((_, index) => index % 4 === 0).every((a) => a.tasks.length === 0)).toBe(
      true,
    );
    const atSend = answers.filter((answer) => answer.tasks.length === 1).length;
    expect(atSend, 'sends that found their wait').toBeGreaterThan(0);
    await expectLogIsSound(url());
  }, 120_000);
});
