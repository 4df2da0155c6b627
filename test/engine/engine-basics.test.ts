import { defineWorkflow, StepError, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { publishNote } from '../../examples/publish-note/workflow';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

const flaky = defineWorkflow({
  name: 'flaky',
  input: z.object({ failures: z.number().int(), category: z.string() }),
  steps: {
    only: step<{ failures: number; category: string }>({
      maxAttempts: 3,
      backoff: { initialIntervalMs: 10, maximumIntervalMs: 20 },
      run: (ctx) => {
        if (ctx.attempt <= ctx.input.failures) {
          throw new StepError(ctx.input.category as 'timeout', `failure ${ctx.attempt}`);
        }
        return { attempt: ctx.attempt };
      },
    }),
  },
});

describe('engine basics', () => {
  it('runs publish-note end to end and logs every edge (R25)', async () => {
    const engine = testEngine(database().url, { workflows: [publishNote, flaky] });
    await engine.migrate();
    const submitted = await engine.submit('publish-note', {
      noteId: 'n1',
      version: 1,
      title: 'Hi',
    });
    expect(submitted).toMatchObject({ workflow: { state: 'queued' }, deduplicated: false });
    const again = await engine.submit('publish-note', { noteId: 'n1', version: 1, title: 'Hi' });
    expect(again).toEqual({
      workflow: { id: submitted.workflow.id, state: 'queued' },
      deduplicated: true,
    });

    const worker = await engine.startWorker({ concurrency: 2 });
    const done = await waitFor(async () => {
      const workflow = await engine.getWorkflow(submitted.workflow.id);
      return workflow?.state === 'succeeded' ? workflow : undefined;
    });
    await worker.stop();
    expect(done.tasks.map((task) => [task.step, task.state])).toEqual([
      ['render', 'succeeded'],
      ['review', 'succeeded'],
      ['publish', 'succeeded'],
    ]);
    expect(done.tasks[2]?.output).toMatchObject({ publishedAt: '/notes/n1/v1' });
    expect(done.tasks[0]?.checkpoints).toHaveProperty('rendered');
    const explanation = await engine.explain(submitted.workflow.id);
    expect(explanation.summary).toBe('publish succeeded, review succeeded, render succeeded');
    expect(await logMismatches(database().url)).toEqual([]);
  });

  it('retries transient errors with backoff and never retries unauthorized', async () => {
    const engine = testEngine(database().url, { workflows: [publishNote, flaky] });
    await engine.migrate();
    const retried = await engine.submit('flaky', { failures: 2, category: 'throttled' });
    const refused = await engine.submit('flaky', { failures: 5, category: 'unauthorized' });
    const worker = await engine.startWorker({ concurrency: 4 });
    await waitFor(async () => {
      const [a, b] = await Promise.all([
        engine.getWorkflow(retried.workflow.id),
        engine.getWorkflow(refused.workflow.id),
      ]);
      return a?.state === 'succeeded' && b?.state === 'dead';
    });
    await worker.stop();
    const retriedTask = (await engine.getWorkflow(retried.workflow.id))?.tasks[0];
    expect(retriedTask?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'retry_scheduled',
      'lease_acquired',
      'retry_scheduled',
      'lease_acquired',
      'completed',
    ]);
    const deadTask = (await engine.getWorkflow(refused.workflow.id))?.tasks[0];
    expect(deadTask).toMatchObject({
      state: 'dead',
      attempt: 1,
      lastErrorCategory: 'unauthorized',
    });
    expect(deadTask?.transitions.at(-1)).toMatchObject({
      reason: 'non_retryable_error',
      errorCategory: 'unauthorized',
    });
    expect(await logMismatches(database().url)).toEqual([]);
  });

  it('leaves workflows it does not define alone (another version of the service owns them)', async () => {
    const newer = testEngine(database().url, { workflows: [publishNote, flaky] });
    await newer.migrate();
    const older = testEngine(database().url, { workflows: [flaky] });
    const unknownToOlder = await newer.submit('publish-note', { noteId: 'rolling', version: 1 });
    const known = await newer.submit('flaky', { failures: 0, category: 'timeout' });
    // The older worker serves every queue the newer service uses, so it does see the
    // publish-note task; it must neither run it nor fail its claims because of it.
    const worker = await older.startWorker({
      queues: ['cpu', 'default', 'network'],
      concurrency: 2,
    });
    await waitFor(async () => (await older.getWorkflow(known.workflow.id))?.state === 'succeeded');
    await expect(older.sweep()).resolves.toBeGreaterThanOrEqual(0);
    await expect(older.cancelWorkflow(unknownToOlder.workflow.id)).rejects.toMatchObject({
      code: 'conflict',
    });
    await worker.stop();
    expect((await newer.getWorkflow(unknownToOlder.workflow.id))?.state).toBe('queued');
  });

  it("keeps claiming its own tasks behind a backlog of another version's tasks", async () => {
    // A rolling deploy: the newer version defines a workflow, and a step of another, that the
    // older one does not, on the queue they share. Their tasks are older than the older
    // version's own, and more than one claim takes: they must not fill every claim of the
    // older worker. Nor may it run the step it knows of the grown workflow: had it finished
    // that step after the added one, nobody would promote the step that waits for both.
    const added = defineWorkflow({
      name: 'rolling-added',
      input: z.object({ i: z.number().int() }),
      steps: { only: step({ run: () => 'newer' }) },
    });
    const grownNewer = defineWorkflow({
      name: 'rolling-grown',
      input: z.object({ i: z.number().int() }),
      steps: {
        first: step({ run: () => 'first' }),
        added: step({ run: () => 'added' }),
        both: step({ after: ['first', 'added'], run: () => 'both' }),
      },
    });
    const grownOlder = defineWorkflow({
      name: 'rolling-grown',
      input: z.object({ i: z.number().int() }),
      steps: { first: step({ run: () => 'first' }) },
    });
    const newer = testEngine(database().url, { workflows: [added, grownNewer, flaky] });
    await newer.migrate();
    const older = testEngine(database().url, { workflows: [grownOlder, flaky] });
    const backlog = await newer.submitMany(
      Array.from({ length: 30 }, (_, i) => ({ name: 'rolling-added', input: { i } })),
    );
    // Each grown workflow has a root step the older version does not know.
    const grown = await newer.submitMany(
      Array.from({ length: 10 }, (_, i) => ({ name: 'rolling-grown', input: { i } })),
    );
    // The workflow row carries the steps it was submitted with: what the claims compare.
    const grownRow = await query<{ steps: string }>(
      database().url,
      'select steps from causeway_workflows where id = $1',
      [grown[0]?.workflow.id],
    );
    expect(grownRow).toEqual([{ steps: 'first,added,both' }]);
    const known = await older.submitMany(
      Array.from({ length: 5 }, () => ({
        name: 'flaky',
        input: { failures: 0, category: 'timeout' },
      })),
    );
    // Two tasks per claim: without skipping the backlog, every claim would take only its rows.
    const worker = await older.startWorker({ concurrency: 2, prefetch: 0 });
    await waitFor(
      async () => {
        const states = await Promise.all(
          known.map(async (run) => (await older.getWorkflow(run.workflow.id))?.state),
        );
        return states.every((state) => state === 'succeeded');
      },
      { timeoutMs: 10_000, description: "the older version's workflows succeeded" },
    );
    await worker.stop();
    // The older worker ran only workflows whose every step it defines: the newer version's
    // tasks were never leased.
    const untouched = await query<{ step: string; state: string; n: number }>(
      database().url,
      `select t.step, t.state, count(*)::int as n from causeway_tasks t
        where t.workflow_id = any($1::uuid[]) group by t.step, t.state order by t.step, t.state`,
      [[...backlog, ...grown].map((run) => run.workflow.id)],
    );
    expect(untouched).toEqual([
      { step: 'added', state: 'queued', n: 10 },
      { step: 'both', state: 'pending', n: 10 },
      { step: 'first', state: 'queued', n: 10 },
      { step: 'only', state: 'queued', n: 30 },
    ]);
    // The newer version's worker takes the rest.
    const newerWorker = await newer.startWorker({ concurrency: 4 });
    const ids = [...backlog, ...grown, ...known].map((run) => run.workflow.id);
    await waitFor(async () => {
      const rows = await query<{ n: number }>(
        database().url,
        `select count(*)::int as n from causeway_workflows
          where id = any($1::uuid[]) and state = 'succeeded'`,
        [ids],
      );
      return rows[0]?.n === ids.length;
    });
    await newerWorker.stop();
    expect(await logMismatches(database().url)).toEqual([]);
  });

  it('keeps the transition log append-only', async () => {
    const rows = await query(database().url, 'select count(*)::int as n from causeway_transitions');
    expect(rows[0]?.n).toBeGreaterThan(0);
    await expect(
      query(database().url, 'update causeway_transitions set actor = $1', ['mallory']),
    ).rejects.toThrow(/append-only/);
    await expect(query(database().url, 'delete from causeway_transitions')).rejects.toThrow(
      /append-only/,
    );
  });
});

describe('prefetch', () => {
  const slow = defineWorkflow({
    name: 'slow',
    input: z.object({ i: z.number() }),
    steps: {
      only: step({
        reentrant: true,
        run: async (ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          return { done: ctx.taskId };
        },
      }),
    },
  });

  it('holds claimed tasks leased beyond concurrency, runs them all, hands waiting ones back at shutdown', async () => {
    const engine = testEngine(database().url, { workflows: [slow], leaseMs: 1_000 });
    await engine.migrate();
    const submitted = await engine.submitMany(
      Array.from({ length: 6 }, (_, i) => ({ name: 'slow', input: { i } })),
    );
    const worker = await engine.startWorker({ concurrency: 1, prefetch: 3 });
    // One runs, three wait leased: four held at once, never more.
    const held = await waitFor(async () => {
      const rows = await query<{ n: number }>(
        database().url,
        `select count(*)::int as n from causeway_tasks where state = 'leased'`,
      );
      return (rows[0]?.n ?? 0) >= 4 ? rows[0]?.n : undefined;
    });
    expect(held).toBe(4);
    await worker.stop({ drainMs: 2_000 });
    const states = await query<{ state: string; reason: string }>(
      database().url,
      `select t.state, (select reason from causeway_transitions where workflow_id = t.workflow_id and task_id = t.id order by id desc limit 1) as reason
         from causeway_tasks t`,
    );
    // Nothing stays leased after a graceful stop: finished ones succeeded, waiting ones went back.
    expect(states.filter((row) => row.state === 'leased')).toEqual([]);
    expect(states.some((row) => row.reason === 'worker_shutdown')).toBe(true);
    const again = await engine.startWorker({ concurrency: 2, prefetch: 2 });
    await waitFor(async () => {
      const workflows = await Promise.all(submitted.map((s) => engine.getWorkflow(s.workflow.id)));
      return workflows.every((workflow) => workflow?.state === 'succeeded');
    });
    await again.stop();
    expect(await logMismatches(database().url)).toEqual([]);
  });
});

describe('step context', () => {
  it("works destructured, and shows each write it confirmed and the earlier attempts' ones", async () => {
    const seen: Record<string, unknown>[] = [];
    const destructured = defineWorkflow({
      name: 'destructured-ctx',
      input: z.object({}),
      steps: {
        only: step({
          maxAttempts: 2,
          backoff: { initialIntervalMs: 10, maximumIntervalMs: 10 },
          run: async (ctx) => {
            const { attempt, checkpoint, checkpoints, progress, boundary, recordEvidence } = ctx;
            const { signal, logger, idempotencyKey, taskId, workflowId, step: name } = ctx;
            logger.info({ attempt }, 'destructured');
            seen.push({
              attempt,
              before: { ...checkpoints },
              evidence: ctx.evidence,
              aborted: signal.aborted,
              keyed: idempotencyKey === `causeway:${taskId}`,
              ids: typeof workflowId === 'string' && name === 'only',
            });
            if (attempt > 1) return { checkpoints: ctx.checkpoints };
            await progress({ done: 1 });
            await checkpoint('first', { n: 1 });
            await recordEvidence('ev-1');
            await boundary();
            seen.push({ after: { ...ctx.checkpoints }, evidence: ctx.evidence });
            throw new StepError('unavailable', 'once more');
          },
        }),
      },
    });
    const engine = testEngine(database().url, { workflows: [destructured] });
    await engine.migrate();
    const { workflow } = await engine.submit('destructured-ctx', {});
    const worker = await engine.startWorker({ concurrency: 1 });
    const done = await waitFor(async () => {
      const current = await engine.getWorkflow(workflow.id);
      return current?.state === 'succeeded' ? current : undefined;
    });
    await worker.stop();
    expect(seen).toEqual([
      { attempt: 1, before: {}, evidence: null, aborted: false, keyed: true, ids: true },
      { after: { first: { n: 1 } }, evidence: 'ev-1' },
      {
        attempt: 2,
        before: { first: { n: 1 } },
        evidence: 'ev-1',
        aborted: false,
        keyed: true,
        ids: true,
      },
    ]);
    expect(done.tasks[0]?.output).toEqual({ checkpoints: { first: { n: 1 } } });
    expect(done.tasks[0]?.progress).toEqual({ done: 1 });
    expect(await logMismatches(database().url)).toEqual([]);
  });
});

describe('evidence (R21)', () => {
  it('re-runs a non-reentrant step whose lease expired after it recorded evidence; the re-run asks instead of resubmitting', async () => {
    const platform = { submits: 0, queries: 0 };
    const hang = { release: () => {} };
    const publish = defineWorkflow({
      name: 'evidence-publish',
      input: z.object({}),
      steps: {
        post: step({
          reentrant: false,
          run: async (ctx) => {
            if (ctx.evidence !== null) {
              platform.queries += 1;
              return { confirmed: ctx.evidence };
            }
            platform.submits += 1;
            await ctx.recordEvidence('acceptance-42');
            // The worker "dies" after the external call, before the success commit.
            await new Promise<void>((resolve) => {
              hang.release = resolve;
            });
            return { lateResult: true };
          },
        }),
      },
    });
    const engine = testEngine(database().url, { workflows: [publish], leaseMs: 500 });
    await engine.migrate();
    const { workflow } = await engine.submit('evidence-publish', {});
    const first = await engine.startWorker({ concurrency: 1, sweeper: false });
    await waitFor(
      async () => (await engine.getWorkflow(workflow.id))?.tasks[0]?.evidence === 'acceptance-42',
    );
    // Stop the first worker's renewals without letting its step finish: its lease runs out.
    const stopping = first.stop({ drainMs: 10 });
    await waitFor(async () => (await engine.sweep()) > 0, { timeoutMs: 10_000 });
    const second = await engine.startWorker({ concurrency: 1 });
    const done = await waitFor(async () => {
      const current = await engine.getWorkflow(workflow.id);
      return current?.state === 'succeeded' ? current : undefined;
    });
    hang.release();
    await Promise.all([stopping, second.stop()]);
    expect(platform).toEqual({ submits: 1, queries: 1 });
    expect(done.tasks[0]?.output).toEqual({ confirmed: 'acceptance-42' });
    expect(done.tasks[0]?.transitions.map((row) => row.reason)).toEqual([
      'submitted',
      'lease_acquired',
      'lease_expired',
      'lease_acquired',
      'completed',
    ]);
    expect(await logMismatches(database().url)).toEqual([]);
  });
});
