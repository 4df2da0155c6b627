import { httpChannel } from '@causeway/engine';
import { defineWorkflow, send, step, type Transition } from '@causeway/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Platform, startPlatform } from '../../examples/platform/server';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { edges, waitForWorkflowState } from './fixtures/parent';
import { callPlatform } from './fixtures/platform-client';

/**
 * The platform says no (issue 4, rules R17, R18): a revoked authorization (401) is never
 * retried, neither from a step's own fetch nor from the outbox; a 429 storm is retried no
 * earlier than Retry-After, spread out by jitter, and no attempt is claimed before its run_at.
 */

const database = useTestDatabase();
let platform: Platform | undefined;
afterEach(async () => {
  await platform?.close();
  platform = undefined;
});

const input = z.object({ noteId: z.string(), platformUrl: z.url() });
type Input = z.output<typeof input>;

/** Backoff ceiling of the first retry: below the platform's Retry-After of 1 s. */
const initialIntervalMs = 200;

/** A step that posts with its own fetch; the platform's answer becomes a classified StepError. */
const directPublish = defineWorkflow({
  name: 'direct-publish',
  input,
  steps: {
    publish: step<Input>({
      reentrant: false,
      maxAttempts: 10,
      backoff: { initialIntervalMs, backoffCoefficient: 2, maximumIntervalMs: 2_000 },
      run: async (ctx) => {
        await ctx.boundary();
        const { body } = await callPlatform(`${ctx.input.platformUrl}/posts`, {
          idempotencyKey: ctx.idempotencyKey,
          token: 'secret',
          body: { noteId: ctx.input.noteId, version: 1, title: 'Note', html: '<p>hi</p>' },
        });
        return { postId: body.id };
      },
    }),
  },
});

/** The same publish through the outbox. */
const outboxPublish = defineWorkflow({
  name: 'outbox-publish-401',
  input,
  steps: {
    publish: step<Input>({
      reentrant: false,
      maxAttempts: 5,
      run: (ctx) =>
        send('platform', {
          noteId: ctx.input.noteId,
          version: 1,
          title: 'Note',
          html: '<p>hi</p>',
        }),
    }),
  },
});

async function setup(options: { revoked?: boolean } = {}) {
  platform = await startPlatform({ token: 'secret', revokeToken: options.revoked ?? false });
  const url = database().url;
  const engine = testEngine(url, {
    workflows: [directPublish, outboxPublish],
    pollIntervalMs: 50,
    channels: [
      httpChannel({
        name: 'platform',
        url: `${platform.url}/posts`,
        headers: { authorization: 'Bearer secret' },
        confirm: 'response',
        timeoutMs: 2_000,
        maxAttempts: 5,
      }),
    ],
  });
  await engine.migrate();
  return { engine, url, platform };
}

describe('401 from the platform: the authorization was revoked (R17)', () => {
  it("a step's own fetch gets 401: dead with unauthorized after exactly one attempt", async () => {
    const { engine, url, platform } = await setup({ revoked: true });
    const { workflow } = await engine.submit('direct-publish', {
      noteId: 'n-401',
      platformUrl: platform.url,
    });
    const worker = await engine.startWorker({ concurrency: 1 });
    const task = await waitForWorkflowState(engine, workflow.id, 'dead');
    await worker.stop();

    expect(edges(task)).toEqual([
      { from: null, to: 'queued', reason: 'submitted', actor: 'client', attempt: 0 },
      {
        from: 'queued',
        to: 'leased',
        reason: 'lease_acquired',
        actor: `worker:${engine.holder}`,
        attempt: 1,
      },
      {
        from: 'leased',
        to: 'dead',
        reason: 'non_retryable_error',
        actor: `worker:${engine.holder}`,
        attempt: 1,
      },
    ]);
    expect(task.transitions.at(-1)).toMatchObject({ errorCategory: 'unauthorized' });
    expect(task.transitions.at(-1)?.errorSummary).toContain('HTTP 401');
    expect(task).toMatchObject({ attempt: 1, lastErrorCategory: 'unauthorized' });
    // One request, refused; nothing published, nothing retried.
    expect(platform.stats().requests.publishPost).toEqual({ '401': 1 });
    expect(platform.stats().postsPublished).toBe(0);
    expect((await engine.explain(workflow.id)).text).toContain('not retryable: dead');
    expect(await logMismatches(url)).toEqual([]);
  });

  it('an outbox delivery gets 401: the receipt is rejected as unauthorized after exactly one delivery attempt', async () => {
    const { engine, url, platform } = await setup({ revoked: true });
    const { workflow } = await engine.submit('outbox-publish-401', {
      noteId: 'n-401-outbox',
      platformUrl: platform.url,
    });
    const worker = await engine.startWorker({ concurrency: 1 });
    const task = await waitForWorkflowState(engine, workflow.id, 'dead');
    await worker.stop();

    expect(edges(task).map((edge) => `${edge.from}→${edge.to}:${edge.reason}`)).toEqual([
      'null→queued:submitted',
      'queued→leased:lease_acquired',
      'leased→awaiting_receipt:submitted_awaiting_receipt',
      'awaiting_receipt→dead:receipt_rejected',
    ]);
    expect(task.transitions.at(-1)).toMatchObject({
      errorCategory: 'unauthorized',
      actor: 'receipt:outbox:platform',
    });
    expect(task.attempt).toBe(1);
    const deliveries = await query(
      url,
      `select d.attempt, d.outcome, d.status_code, d.error_category
         from causeway_outbox_deliveries d join causeway_outbox o on o.id = d.outbox_id
        where o.task_id = $1 order by d.id`,
      [task.id],
    );
    expect(deliveries).toEqual([
      { attempt: 1, outcome: 'failed', status_code: 401, error_category: 'unauthorized' },
    ]);
    const outbox = await query(
      url,
      'select state, attempts from causeway_outbox where task_id = $1',
      [task.id],
    );
    expect(outbox).toEqual([{ state: 'failed', attempts: 1 }]);
    expect(platform.stats().requests.publishPost).toEqual({ '401': 1 });
    expect(platform.stats().postsPublished).toBe(0);
    expect(await logMismatches(url)).toEqual([]);
  });
});

const retryAfterSeconds = 1;
const retryAfterMs = retryAfterSeconds * 1_000;

/**
 * Submits `count` direct publishes at once against a platform answering the first `refused`
 * posts with 429 (`rate_limited`) or 503 (`unavailable`), each with `Retry-After`.
 */
async function storm(
  count: number,
  refused: number,
  kind: 'rate_limited' | 'unavailable' = 'rate_limited',
) {
  const { engine, url, platform } = await setup();
  platform.configure({
    endpoints: {
      publishPost: {
        sequence: [{ kind, retryAfterSeconds, times: refused }],
      },
    },
  });
  const submitted = await engine.submitMany(
    Array.from({ length: count }, (_, index) => ({
      name: 'direct-publish',
      input: { noteId: `storm-${index}`, platformUrl: platform.url },
    })),
  );
  const worker = await engine.startWorker({ concurrency: count });
  const workflows = await waitFor(
    async () => {
      const all = await Promise.all(submitted.map((s) => engine.getWorkflow(s.workflow.id)));
      return all.every((workflow) => workflow?.state === 'succeeded') ? all : undefined;
    },
    { timeoutMs: 15_000, description: 'every storm workflow succeeded' },
  );
  await worker.stop();
  const tasks = workflows.map((workflow) => workflow?.tasks[0]).filter((task) => !!task);
  return { engine, url, platform, tasks };
}

function retries(transitions: readonly Transition[]): Transition[] {
  return transitions.filter((row) => row.reason === 'retry_scheduled');
}

function runAtOf(row: Transition): number {
  return new Date(String(row.detail?.runAt)).getTime();
}

describe('429 storms (R17, R18, R4)', () => {
  it('every retry respects Retry-After, and no attempt is claimed before its run_at', async () => {
    const count = 6;
    const { tasks, platform, url } = await storm(count, 2 * count);
    const stats = platform.stats();
    expect(stats.requests.publishPost).toEqual({ '429': 2 * count, '201': count });
    expect(stats.postsPublished).toBe(count);

    let retried = 0;
    for (const task of tasks) {
      const rows = task.transitions;
      for (const [index, row] of rows.entries()) {
        if (row.reason !== 'retry_scheduled') continue;
        retried += 1;
        expect(row).toMatchObject({ errorCategory: 'throttled', to: 'queued' });
        // R51: the next run is due exactly when the platform said, not a backoff later.
        expect(runAtOf(row) - row.at.getTime()).toBe(retryAfterMs);
        expect(row.detail?.retryAfterMs).toBe(retryAfterMs);
        const next = rows[index + 1];
        expect(next?.reason).toBe('lease_acquired');
        // R4: the claim happened at or after run_at (database time), so after Retry-After too.
        expect(next?.at.getTime()).toBeGreaterThanOrEqual(runAtOf(row));
        expect((next?.at.getTime() ?? 0) - row.at.getTime()).toBeGreaterThanOrEqual(retryAfterMs);
      }
      expect(rows.at(-1)?.reason).toBe('completed');
    }
    expect(retried).toBe(2 * count);

    // The platform's own log agrees: after a 429, the same key comes back no earlier than
    // Retry-After after the 429 was answered.
    for (const task of tasks) {
      const requests = stats.log.filter((entry) => entry.idempotencyKey === `causeway:${task.id}`);
      expect(requests.at(-1)?.status).toBe(201);
      for (let index = 1; index < requests.length; index += 1) {
        const previous = requests[index - 1];
        const current = requests[index];
        expect(previous?.status).toBe(429);
        expect((current?.receivedAt ?? 0) - (previous?.answeredAt ?? 0)).toBeGreaterThanOrEqual(
          retryAfterMs,
        );
      }
      // One request per attempt: the worker never ran an attempt it did not log.
      expect(requests).toHaveLength(task.attempt);
    }
    expect(await logMismatches(url)).toEqual([]);
  });

  it('a 503 storm told the same Retry-After does not come back all at once: the retries are spread by jitter', async () => {
    // Only `throttled` is retried exactly at Retry-After (R51); for `unavailable` it is a floor.
    const count = 8;
    const { tasks } = await storm(count, count, 'unavailable');
    const delays = tasks.flatMap((task) =>
      retries(task.transitions).map((row) => runAtOf(row) - row.at.getTime()),
    );
    expect(delays).toHaveLength(count);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(retryAfterMs);
    // Full jitter on top of Retry-After: the delays differ (all equal would be a second storm
    // exactly Retry-After later). Random, but eight equal draws of the jitter are not plausible.
    expect(new Set(delays).size, `delays after Retry-After: ${delays.join(', ')}`).toBeGreaterThan(
      count / 2,
    );
  });
});
