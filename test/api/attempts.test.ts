/**
 * GraphQL `Task.attempts` (R56): each claim of a task with its epoch, holder, times, outcome
 * and the reason of the edge that ended it, equal to what the stored rows say
 * (test/helpers/attempt-log.ts); a page of workflows reads them in the same statements for 5
 * or 20 (batched with the log). The stale outcome over GraphQL is in
 * test/reliability/zombie-attempt.test.ts.
 */
import { defineWorkflow, StepError, step } from '@causeway/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AttemptData } from '../../packages/api/src/dashboard/workflow-query';
import { attemptsFromLog } from '../helpers/attempt-log';
import { useTestDatabase } from '../helpers/database';
import { query } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { countingReadModel } from './counting-read-model';
import { data, startApi } from './helpers';

const database = useTestDatabase();
const url = () => database().url;

/** Fails its first attempt (a transient error), then succeeds. */
const flaky = defineWorkflow({
  name: 'attempts-flaky',
  input: z.object({ n: z.number() }),
  steps: {
    only: step({
      queue: 'q-attempts',
      maxAttempts: 3,
      backoff: { initialIntervalMs: 0, maximumIntervalMs: 0 },
      run: (ctx) => {
        if (ctx.attempt === 1) throw new StepError('network', 'connection reset');
        return { attempt: ctx.attempt };
      },
    }),
  },
});

const attemptFields = 'attempt epoch holder leasedAt endedAt outcome reason refusedAt';

async function succeededTasks(count: number): Promise<string[]> {
  return waitFor(
    async () => {
      const rows = await query<{ id: string }>(
        url(),
        "select id from causeway_tasks where step = 'only' and state = 'succeeded'",
      );
      return rows.length >= count ? rows.map((row) => row.id) : undefined;
    },
    { timeoutMs: 15_000, description: `${count} tasks succeeded` },
  );
}

describe('Task.attempts', () => {
  it('answers each claim as the log says, in the API enums', async () => {
    const api = await startApi(url(), { engine: { workflows: [flaky] } });
    await api.engine.startWorker({ queues: ['q-attempts'], concurrency: 2 });
    await api.engine.submit('attempts-flaky', { n: 0 });
    const [taskId] = await succeededTasks(1);
    const answer = await data<{ task: { attempts: AttemptData[] } }>(
      api.url,
      `query($id: ID!) { task(id: $id) { attempts { ${attemptFields} } } }`,
      { variables: { id: taskId } },
    );
    const expected = await attemptsFromLog(url(), taskId as string);
    expect(answer.task.attempts).toEqual(
      expected.map((attempt) => ({
        attempt: attempt.attempt,
        epoch: attempt.epoch,
        holder: attempt.holder,
        leasedAt: attempt.leasedAt.toISOString(),
        endedAt: attempt.endedAt?.toISOString() ?? null,
        outcome: attempt.outcome.toUpperCase(),
        reason: attempt.reason?.toUpperCase() ?? null,
        refusedAt: null,
      })),
    );
    expect(
      answer.task.attempts.map(({ attempt, epoch, holder, outcome, reason }) => [
        attempt,
        epoch,
        holder,
        outcome,
        reason,
      ]),
    ).toEqual([
      [1, 1, api.engine.holder, 'SETTLED', 'RETRY_SCHEDULED'],
      [2, 2, api.engine.holder, 'SETTLED', 'COMPLETED'],
    ]);
  });

  it('a page of workflows reads its tasks’ attempts in the same statements for 5 or 20', async () => {
    const { readModel, statements } = countingReadModel(url());
    const api = await startApi(url(), { engine: { workflows: [flaky] }, api: { readModel } });
    await api.engine.startWorker({ queues: ['q-attempts'], concurrency: 4 });
    await api.engine.submitMany(
      Array.from({ length: 20 }, (_, n) => ({ name: 'attempts-flaky', input: { n: n + 1 } })),
    );
    await succeededTasks(21);
    const statementsFor = async (first: number) => {
      statements.length = 0;
      const page = await data<{
        workflows: { edges: { node: { tasks: { attempts: AttemptData[] }[] } }[] };
      }>(
        api.url,
        `{ workflows(first: ${first}, name: "attempts-flaky") { edges { node {
          tasks { attempts { outcome reason } }
        } } } }`,
      );
      expect(page.workflows.edges).toHaveLength(first);
      for (const { node } of page.workflows.edges) {
        expect(node.tasks[0]?.attempts.map((attempt) => attempt.reason)).toEqual([
          'RETRY_SCHEDULED',
          'COMPLETED',
        ]);
      }
      return [...statements];
    };
    const five = await statementsFor(5);
    const twenty = await statementsFor(20);
    // The page, its tasks and its log; no refused results to read where no lease was lost.
    expect(twenty).toHaveLength(3);
    expect(five).toHaveLength(twenty.length);
  });
});
