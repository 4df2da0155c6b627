/**
 * R60: when the worker's one-statement settle fails, the same results go through the full
 * decision; none is dropped. The failures are provoked for real in this file's own database,
 * by a trigger that acts only inside the settle statement (it recognises the statement's text):
 *
 * - its self-check: the trigger skips the update of a task the statement decided to complete,
 *   so the statement wrote fewer rows than it decided and `causeway_written_as_decided` fails
 *   it (a serialization failure that would fail again on every try);
 * - a serialization failure that keeps coming back: the trigger raises one.
 *
 * Before R60 the writer tried the statement again until the leases ran out and then gave the
 * results up: every step ran again, and never settled.
 */
import { defineWorkflow, step } from '@causeway/workflow';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useTestDatabase } from '../helpers/database';
import { query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { type Sabotage, sabotageStatement } from './fixtures/statement-sabotage';
import { expectLogIsSound } from './semantics-support';

const database = useTestDatabase();
const url = () => database().url;

/** Handler runs per workflow and step: each must run once. */
const runs = new Map<string, number>();
function counted(key: string): void {
  runs.set(key, (runs.get(key) ?? 0) + 1);
}

const twoSteps = defineWorkflow({
  name: 'fallback-two-steps',
  input: z.object({ n: z.number() }),
  steps: {
    first: step<{ n: number }>({
      queue: 'q-fallback',
      reentrant: true,
      run: (ctx) => {
        counted(`${ctx.workflowId}:first`);
        return { n: ctx.input.n };
      },
    }),
    second: step({
      queue: 'q-fallback',
      after: ['first'],
      reentrant: true,
      run: (ctx) => {
        counted(`${ctx.workflowId}:second`);
        return 'done';
      },
    }),
  },
});

/** Installs the trigger; it acts only in statements whose text is the settle statement's. */
const sabotageSettleStatement = (how: Sabotage) =>
  sabotageStatement(
    url(),
    'test_sabotage_settle',
    { queryParts: ['completed_update as ('], fromState: 'leased', toState: 'succeeded' },
    how,
  );

beforeAll(async () => {
  const setup = testEngine(url(), { workflows: [twoSteps] });
  await setup.migrate();
  await setup.close();
});

afterEach(async () => {
  await query(url(), 'drop trigger if exists test_sabotage_settle on causeway_tasks');
});

/** An engine whose JSON log lines the test reads. */
function loggedEngine() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    {
      write(chunk: string) {
        for (const line of chunk.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line));
      },
    },
  );
  return { engine: testEngine(url(), { workflows: [twoSteps], logger }), lines };
}

describe.each<Sabotage>(['skip_update', 'serialization_failure'])(
  'the one-statement settle fails (%s): the full decision writes the same results (R60)',
  (how) => {
    it('every step runs once and succeeds once, and the log agrees with the rows', async () => {
      await sabotageSettleStatement(how);
      const { engine, lines } = loggedEngine();
      const ids: string[] = [];
      for (let n = 0; n < 12; n += 1) {
        ids.push((await engine.submit('fallback-two-steps', { n })).workflow.id);
      }
      await engine.startWorker({ queues: ['q-fallback'], concurrency: 8 });
      await waitFor(
        async () => {
          const rows = await query<{ n: number }>(
            url(),
            `select count(*)::int as n from causeway_workflows
            where id = any($1::uuid[]) and state = 'succeeded'`,
            [ids],
          );
          return rows[0]?.n === ids.length;
        },
        { timeoutMs: 15_000, description: 'every workflow succeeded' },
      );
      for (const id of ids) {
        expect(runs.get(`${id}:first`), `${id}: first ran once`).toBe(1);
        expect(runs.get(`${id}:second`), `${id}: second ran once`).toBe(1);
      }
      const completed = await query<{ task_id: string; n: number; attempts: number[] }>(
        url(),
        `select task_id, count(*)::int as n, array_agg(attempt) as attempts
         from causeway_transitions
        where workflow_id = any($1::uuid[]) and task_id is not null and reason = 'completed'
        group by task_id`,
        [ids],
      );
      expect(completed).toHaveLength(ids.length * 2);
      for (const row of completed) expect([row.n, row.attempts]).toEqual([1, [1]]);
      await expectLogIsSound(url());

      // Each fallback names the result: workflow, task, attempt and holder.
      const fallbacks = lines.filter(
        (line) =>
          line.msg ===
          'the one-statement settle failed; the full decision wrote the result instead',
      );
      expect(fallbacks.length).toBeGreaterThan(0);
      for (const line of fallbacks) {
        expect(ids).toContain(line.workflowId);
        expect(line).toMatchObject({ attempt: 1, outcome: 'applied', err: { code: '40001' } });
        expect(typeof line.taskId).toBe('string');
        expect(typeof line.holder).toBe('string');
      }
      expect(lines.filter((line) => line.msg === 'could not write step results')).toEqual([]);
      await engine.close({ drainMs: 1_000 });
    });
  },
);
