import {
  defineWorkflow,
  type ErrorCategory,
  nonRetryableErrorCategories,
  StepError,
  step,
  transientErrorCategories,
} from '@causeway/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { expectLogIsSound, reasons } from './semantics-support';

/**
 * Retries and errors (R17, R18, R19): the category decides retry or dead, the dead edge
 * carries the last category and attempt, and checkpoints survive a retry.
 */
const database = useTestDatabase();
const url = () => database().url;

/** Attempt n throws what `failures[n - 1]` names: a category, 'plain' (a bare Error), or succeeds past the list. */
const failing = defineWorkflow({
  name: 'retries-failing',
  input: z.object({ label: z.string(), failures: z.array(z.string()) }),
  steps: {
    only: step<{ label: string; failures: string[] }>({
      queue: 'q-failing',
      maxAttempts: 3,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: (ctx) => {
        const failure = ctx.input.failures[ctx.attempt - 1];
        if (failure === undefined) return { attempt: ctx.attempt };
        if (failure === 'plain') throw new Error(`plain failure on attempt ${ctx.attempt}`);
        throw new StepError(failure as ErrorCategory, `${failure} on attempt ${ctx.attempt}`);
      },
    }),
  },
});

/** Uploads assets once (checkpointed), then fails transiently on the first attempt. */
const uploads = new Map<string, number>();
const seenCheckpoints = new Map<string, unknown[]>();
const checkpointed = defineWorkflow({
  name: 'retries-checkpointed',
  input: z.object({ label: z.string() }),
  steps: {
    publish: step<{ label: string }>({
      queue: 'q-checkpointed',
      maxAttempts: 3,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: async (ctx) => {
        const label = ctx.input.label;
        seenCheckpoints.set(label, [
          ...(seenCheckpoints.get(label) ?? []),
          structuredClone(ctx.checkpoints),
        ]);
        let assets = ctx.checkpoints.assets as { urls: string[] } | undefined;
        if (assets === undefined) {
          uploads.set(label, (uploads.get(label) ?? 0) + 1);
          assets = { urls: [`s3://bucket/${label}/cover.png`] };
          await ctx.checkpoint('assets', assets);
        }
        if (ctx.attempt === 1)
          throw new StepError('network', 'the platform dropped the connection');
        return { published: true, assets: assets.urls };
      },
    }),
  },
});

const workflows = [failing, checkpointed];

beforeAll(async () => {
  const setup = testEngine(url(), { workflows });
  await setup.migrate();
  await setup.close();
});

async function runToEnd(label: string, failures: string[]) {
  const cw = testEngine(url(), { workflows });
  const submitted = await cw.submit('retries-failing', { label, failures });
  const worker = await cw.startWorker({ queues: ['q-failing'], concurrency: 1 });
  const view = await waitFor(
    async () => {
      const current = await cw.getWorkflow(submitted.workflow.id);
      return current?.state === 'dead' || current?.state === 'succeeded' ? current : undefined;
    },
    { description: `${label} to settle` },
  );
  await worker.stop();
  const task = view.tasks[0];
  if (task === undefined) throw new Error('no task');
  return task;
}

describe('error categories decide retry or dead (R17, R18)', () => {
  it.each(nonRetryableErrorCategories)('%s is never retried', async (category) => {
    const task = await runToEnd(`never-${category}`, [category, category, category]);
    expect(task).toMatchObject({ state: 'dead', attempt: 1, lastErrorCategory: category });
    expect(reasons(task.transitions)).toEqual([
      'submitted',
      'lease_acquired',
      'non_retryable_error',
    ]);
    expect(task.transitions.at(-1)).toMatchObject({
      from: 'leased',
      to: 'dead',
      errorCategory: category,
      errorSummary: `${category} on attempt 1`,
      attempt: 1,
    });
  });

  it.each([...transientErrorCategories, 'plain'])(
    '%s is retried up to maxAttempts, then attempts_exhausted',
    async (failure) => {
      const task = await runToEnd(`exhaust-${failure}`, [failure, failure, failure]);
      const category = failure === 'plain' ? 'unknown' : failure;
      expect(task).toMatchObject({ state: 'dead', attempt: 3, lastErrorCategory: category });
      expect(reasons(task.transitions)).toEqual([
        'submitted',
        'lease_acquired',
        'retry_scheduled',
        'lease_acquired',
        'retry_scheduled',
        'lease_acquired',
        'attempts_exhausted',
      ]);
      for (const row of task.transitions.filter((edge) => edge.reason === 'retry_scheduled')) {
        expect(row.errorCategory).toBe(category);
      }
      expect(task.transitions.at(-1)).toMatchObject({ errorCategory: category, attempt: 3 });
    },
  );

  it('the dead edge carries the last category, not the first', async () => {
    const task = await runToEnd('mixed', ['network', 'timeout', 'plain']);
    expect(task.transitions.map((row) => [row.reason, row.errorCategory, row.attempt])).toEqual([
      ['submitted', null, 0],
      ['lease_acquired', null, 1],
      ['retry_scheduled', 'network', 1],
      ['lease_acquired', null, 2],
      ['retry_scheduled', 'timeout', 2],
      ['lease_acquired', null, 3],
      ['attempts_exhausted', 'unknown', 3],
    ]);
    expect(task).toMatchObject({
      state: 'dead',
      lastErrorCategory: 'unknown',
      lastError: 'plain failure on attempt 3',
    });
  });

  it('a transient failure followed by a non-retryable one ends non_retryable_error', async () => {
    const task = await runToEnd('then-unauthorized', ['throttled', 'unauthorized']);
    expect(reasons(task.transitions).slice(-3)).toEqual([
      'retry_scheduled',
      'lease_acquired',
      'non_retryable_error',
    ]);
    expect(task).toMatchObject({ state: 'dead', attempt: 2, lastErrorCategory: 'unauthorized' });
  });

  it('a retry that succeeds ends succeeded with the output of the last attempt', async () => {
    const task = await runToEnd('recovers', ['unavailable', 'db_conflict']);
    expect(task).toMatchObject({ state: 'succeeded', attempt: 3, output: { attempt: 3 } });
  });
});

describe('checkpoints survive a retry (R19)', () => {
  it('uploads once; the retry sees ctx.checkpoints.assets and resumes after it', async () => {
    const cw = testEngine(url(), { workflows });
    const submitted = await cw.submit('retries-checkpointed', { label: 'note-7' });
    const worker = await cw.startWorker({ queues: ['q-checkpointed'], concurrency: 1 });
    const view = await waitFor(async () => {
      const current = await cw.getWorkflow(submitted.workflow.id);
      return current?.state === 'succeeded' ? current : undefined;
    });
    await worker.stop();
    const task = view.tasks[0];
    expect(reasons(task?.transitions ?? [])).toEqual([
      'submitted',
      'lease_acquired',
      'retry_scheduled',
      'lease_acquired',
      'completed',
    ]);
    const assets = { urls: ['s3://bucket/note-7/cover.png'] };
    expect(uploads.get('note-7')).toBe(1);
    expect(seenCheckpoints.get('note-7')).toEqual([{}, { assets }]);
    expect(task?.checkpoints).toEqual({ assets });
    expect(task?.output).toEqual({ published: true, assets: assets.urls });
  });
});

describe('the log of this file', () => {
  it('holds only allowed edges, in unbroken chains, matching every current state (R25)', async () => {
    await expectLogIsSound(url());
  });
});
