/**
 * R53: an operator pauses a queue with who and why; claims take nothing from it (the
 * one-statement claim, the full claim and the settle statement's chained claims) while other
 * queues run; a resume makes its tasks claimable again. Bad input changes nothing.
 */
import { EngineError } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { chainedLeases, logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();
const url = () => database().url;

const input = z.object({ n: z.number().int() });

/** One step on queue `held`. */
const heldWork = defineWorkflow({
  name: 'held-work',
  input,
  steps: { only: step<{ n: number }>({ queue: 'held', run: (ctx) => ({ n: ctx.input.n }) }) },
});

/** One step on queue `default`. */
const freeWork = defineWorkflow({
  name: 'free-work',
  input,
  steps: { only: step<{ n: number }>({ run: (ctx) => ({ n: ctx.input.n }) }) },
});

/** A step on `default`, then one on `held` (which the settle statement would chain). */
const twoQueues = defineWorkflow({
  name: 'two-queues',
  input,
  steps: {
    first: step<{ n: number }>({ run: (ctx) => ({ n: ctx.input.n }) }),
    second: step<{ n: number }>({ queue: 'held', after: ['first'], run: () => ({ done: true }) }),
  },
});

const workflows = [heldWork, freeWork, twoQueues];

async function engineError(promise: Promise<unknown>): Promise<EngineError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error('expected an EngineError');
}

async function pauseRows(): Promise<{ pauses: number; events: number }> {
  const [row] = await query<{ pauses: number; events: number }>(
    url(),
    `select (select count(*)::int from causeway_queue_pauses) as pauses,
       (select count(*)::int from causeway_queue_pause_events) as events`,
  );
  return row ?? { pauses: -1, events: -1 };
}

async function statesOf(ids: readonly string[]): Promise<Record<string, number>> {
  const rows = await query<{ state: string; n: number }>(
    url(),
    `select state, count(*)::int as n from causeway_tasks where workflow_id = any($1::uuid[])
     group by state`,
    [ids],
  );
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}

describe('pausing a queue', () => {
  it('keeps who, why and when; a repeat says it changed nothing; resume clears it', async () => {
    const engine = testEngine(url(), { workflows });
    await engine.migrate();
    expect((await engine.queues()).map((queue) => [queue.name, queue.paused])).toEqual([
      ['default', null],
      ['held', null],
    ]);
    const first = await engine.pauseQueue('held', { operator: 'ana', reason: 'partner outage' });
    expect(first.changed).toBe(true);
    expect(first.queue.paused).toMatchObject({ operator: 'ana', reason: 'partner outage' });
    const pausedAt = first.queue.paused?.pausedAt;
    expect(pausedAt).toBeInstanceOf(Date);
    const again = await engine.pauseQueue('held', { operator: 'bo', reason: 'other reason' });
    expect(again.changed).toBe(false);
    expect(again.queue.paused).toEqual({ operator: 'ana', reason: 'partner outage', pausedAt });
    // A queue no step uses can be paused ahead of a deploy, and is listed while paused.
    await engine.pauseQueue('later', { operator: 'ana', reason: 'not yet' });
    expect((await engine.queues()).map((queue) => queue.name)).toEqual([
      'default',
      'held',
      'later',
    ]);
    const resumed = await engine.resumeQueue('held', { operator: 'bo' });
    expect(resumed).toMatchObject({ changed: true, queue: { name: 'held', paused: null } });
    expect(
      resumed.queue.history.map((event) => [event.kind, event.operator, event.reason]),
    ).toEqual([
      ['paused', 'ana', 'partner outage'],
      ['resumed', 'bo', null],
    ]);
    expect((await engine.resumeQueue('held', { operator: 'bo', reason: 'twice' })).changed).toBe(
      false,
    );
    expect(await pauseRows()).toEqual({ pauses: 1, events: 3 });
  });

  it('refuses bad input with invalid_request and writes nothing', async () => {
    const engine = testEngine(url(), { workflows });
    await engine.migrate();
    const ok = { operator: 'ana', reason: 'outage' };
    const before = await pauseRows();
    const refused = [
      engine.pauseQueue('', ok),
      engine.pauseQueue('q'.repeat(201), ok),
      engine.pauseQueue(42 as unknown as string, ok),
      engine.pauseQueue('held', { operator: '  ', reason: 'outage' }),
      engine.pauseQueue('held', { operator: 'o'.repeat(201), reason: 'outage' }),
      engine.pauseQueue('held', { operator: 'ana', reason: '' }),
      engine.pauseQueue('held', { operator: 'ana', reason: 'r'.repeat(1_001) }),
      engine.pauseQueue('held', undefined as unknown as typeof ok),
      engine.resumeQueue('', { operator: 'ana' }),
      engine.resumeQueue('held', { operator: '' }),
      engine.resumeQueue('held', { operator: 'ana', reason: ' ' }),
    ];
    for (const attempt of refused) {
      expect((await engineError(attempt)).code).toBe('invalid_request');
    }
    expect(await pauseRows()).toEqual(before);
  });

  it('racing workers take nothing from a paused queue while others run, and all after resume', async () => {
    const a = testEngine(url(), { workflows, pollIntervalMs: 50 });
    const b = testEngine(url(), { workflows, pollIntervalMs: 50 });
    await a.migrate();
    await a.pauseQueue('held', { operator: 'ana', reason: 'partner outage' });
    await a.startWorker({ concurrency: 4 });
    await b.startWorker({ concurrency: 4 });
    const held: string[] = [];
    const free: string[] = [];
    for (let n = 0; n < 20; n += 1) {
      held.push((await a.submit('held-work', { n })).workflow.id);
      free.push((await b.submit('free-work', { n })).workflow.id);
    }
    const chained = (await a.submit('two-queues', { n: 0 })).workflow.id;
    await waitFor(async () => (await statesOf(free)).succeeded === 20, {
      timeoutMs: 20_000,
      description: 'the free queue drained',
    });
    await waitFor(async () => (await statesOf([chained])).succeeded === 1, {
      timeoutMs: 20_000,
      description: 'the first step of two-queues succeeded',
    });
    // Several polls of both workers after the other queue drained.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await statesOf(held)).toEqual({ queued: 20 });
    expect(await statesOf([chained])).toEqual({ succeeded: 1, queued: 1 });

    await b.resumeQueue('held', { operator: 'bo' });
    await waitFor(async () => (await statesOf([...held, chained])).succeeded === 22, {
      timeoutMs: 20_000,
      description: 'the held queue drained after the resume',
    });
    expect(await logMismatches(url())).toEqual([]);
  }, 60_000);

  it('the settle statement chains no step of a paused queue', async () => {
    const engine = testEngine(url(), { workflows: [twoQueues], pollIntervalMs: 50 });
    await engine.migrate();
    await engine.startWorker({ concurrency: 2 });
    const runs = async (from: number) => {
      const ids: string[] = [];
      for (let n = from; n < from + 5; n += 1) {
        const id = (await engine.submit('two-queues', { n })).workflow.id;
        ids.push(id);
        await waitFor(async () => (await statesOf([id])).succeeded !== undefined, {
          timeoutMs: 20_000,
          description: `two-queues ${n} moved`,
        });
      }
      return ids;
    };
    const before = await runs(0);
    await waitFor(async () => (await statesOf(before)).succeeded === 10, {
      timeoutMs: 20_000,
      description: 'the workflows ran while nothing was paused',
    });
    // The settle statement chains steps of this shape when nothing is paused (not every
    // time: the worker holds a slot for the next step only while one is free).
    const chainedBefore = await chainedLeases(url(), before);
    expect(chainedBefore.reduce((sum, row) => sum + row.n, 0)).toBeGreaterThan(0);
    await engine.pauseQueue('held', { operator: 'ana', reason: 'outage' });
    const during = await runs(10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await statesOf(during)).toEqual({ succeeded: 5, queued: 5 });
    expect(await chainedLeases(url(), during)).toEqual([]);
    await engine.resumeQueue('held', { operator: 'ana' });
    await waitFor(async () => (await statesOf(during)).succeeded === 10, {
      timeoutMs: 20_000,
      description: 'the held steps ran after the resume',
    });
  }, 60_000);

  it('blockers and explain name who paused the queue, why and since when', async () => {
    const engine = testEngine(url(), { workflows, pollIntervalMs: 50 });
    await engine.migrate();
    await engine.startWorker({ concurrency: 2 });
    const { queue } = await engine.pauseQueue('held', {
      operator: 'ana',
      reason: 'partner API down',
    });
    const id = (await engine.submit('held-work', { n: 7 })).workflow.id;
    const later = (await engine.submit('held-work', { n: 8 }, { delayMs: 3_600_000 })).workflow.id;
    for (const workflowId of [id, later]) {
      const [blocker] = (await engine.blockers(workflowId)) ?? [];
      expect(blocker).toMatchObject({
        code: 'queue_paused',
        until: null,
        facts: {
          queue: 'held',
          operator: 'ana',
          reason: 'partner API down',
          pausedAt: queue.paused?.pausedAt.toISOString(),
        },
      });
      expect(blocker?.message).toContain('queue "held" is paused: ana paused it');
    }
    const explained = await engine.explain(id);
    expect(explained.text).toContain(
      'only: queue "held" paused by ana ("partner API down"): no claim takes it',
    );
    await engine.resumeQueue('held', { operator: 'ana' });
    expect((await engine.blockers(later))?.[0]?.code).toBe('not_due');
    expect((await engine.explain(later)).text).not.toContain('paused by');
  });
});
