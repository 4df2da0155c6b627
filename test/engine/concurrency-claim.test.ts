import type { Engine } from '@causeway/engine';
import { defineWorkflow, step, workflowRegistry } from '@causeway/workflow/internal';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { taskClaimCandidates } from '../../packages/engine/src/db/claim/claim-load';
import { claimReadyTasks } from '../../packages/engine/src/runtime/claim/claim-ready-tasks';
import { applyEvents } from '../../packages/engine/src/runtime/decision/apply-events';
import { useTestDatabase } from '../helpers/database';
import { logMismatches, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';

const database = useTestDatabase();

const rounds = 200;

/** A one-step workflow whose handler counts its invocations per task in `counter`. */
function raceWorkflow(counter: Map<string, number>) {
  return defineWorkflow({
    name: 'claim-race',
    input: z.object({ round: z.number().int() }),
    steps: {
      only: step<{ round: number }>({
        reentrant: false,
        maxAttempts: 1,
        run: (ctx) => {
          counter.set(ctx.taskId, (counter.get(ctx.taskId) ?? 0) + 1);
          return { round: ctx.input.round };
        },
      }),
    },
  });
}

/** Resolves every arrival once `parties` have arrived (never waits on the database). */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let release: () => void = () => undefined;
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return () => {
    arrived += 1;
    if (arrived === parties) release();
    return all;
  };
}

class Rollback extends Error {}

/** The id of a one-step workflow's task. */
async function onlyTaskId(engine: Engine, workflowId: string): Promise<string> {
  const task = await engine.db
    .selectFrom('causeway_tasks')
    .select('id')
    .where('workflow_id', '=', workflowId)
    .executeTakeFirstOrThrow();
  return task.id;
}

async function taskStates(engine: Engine, taskIds: readonly string[]) {
  return engine.db
    .selectFrom('causeway_tasks')
    .select(['id', 'state', 'lease_holder', 'attempt'])
    .where('id', 'in', [...taskIds])
    .execute();
}

/**
 * `rounds` rounds of one fresh queued task and two claimers started together: exactly one
 * wins each round, the task is leased by the winner on its first attempt, and the log has one
 * `lease_acquired` per task.
 */
async function raceRounds(
  a: Engine,
  b: Engine,
  claim: (engine: Engine, arrive: () => Promise<void>) => Promise<readonly string[]>,
): Promise<void> {
  const problems: string[] = [];
  const roundTaskIds: string[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const { workflow } = await a.submit('claim-race', { round });
    const taskId = await onlyTaskId(a, workflow.id);
    roundTaskIds.push(taskId);
    const arrive = barrier(2);
    const [byA, byB] = await Promise.all([claim(a, arrive), claim(b, arrive)]);
    const winners = [...byA, ...byB];
    if (winners.length !== 1 || winners[0] !== taskId) {
      problems.push(`round ${round}: A claimed ${byA}, B claimed ${byB}`);
    }
    const [row] = await taskStates(a, [taskId]);
    const expectedHolder = byA.length === 1 ? a.holder : b.holder;
    if (row?.state !== 'leased' || row.lease_holder !== expectedHolder || row.attempt !== 1) {
      problems.push(`round ${round}: task is ${row?.state} held by ${row?.lease_holder}`);
    }
  }
  const edges = await a.db
    .selectFrom('causeway_transitions')
    .select(['task_id', sql<number>`count(*)::int`.as('n')])
    .where('reason', '=', 'lease_acquired')
    .where('task_id', 'in', roundTaskIds)
    .groupBy('task_id')
    .execute();
  expect(problems).toEqual([]);
  expect(edges).toHaveLength(rounds);
  expect(edges.filter((row) => row.n !== 1)).toEqual([]);
}

describe('two engines racing for the same task', () => {
  it(`exactly one of two idle workers (two pools, two holders) wins each of ${rounds} rounds`, async () => {
    const url = database().url;
    const countsA = new Map<string, number>();
    const countsB = new Map<string, number>();
    const a = testEngine(url, { workflows: [raceWorkflow(countsA)], pollIntervalMs: 50 });
    const b = testEngine(url, { workflows: [raceWorkflow(countsB)], pollIntervalMs: 50 });
    await a.migrate();
    expect(a.holder).not.toBe(b.holder);
    // Both idle and listening before the first submit; both wake on every submit.
    const workerA = await a.startWorker({ concurrency: 2, sweeper: false });
    const workerB = await b.startWorker({ concurrency: 2, sweeper: false });

    const taskIds: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      // Alternate the submitting engine so neither gets a systematic head start.
      const submitter = round % 2 === 0 ? a : b;
      const { workflow } = await submitter.submit('claim-race', { round });
      await waitFor(
        async () => {
          const row = await a.db
            .selectFrom('causeway_workflows')
            .select('state')
            .where('id', '=', workflow.id)
            .executeTakeFirst();
          return row?.state === 'succeeded';
        },
        { timeoutMs: 30_000, intervalMs: 5, description: `round ${round} succeeded` },
      );
      taskIds.push(await onlyTaskId(a, workflow.id));
    }
    await Promise.all([workerA.stop(), workerB.stop()]);

    const problems: string[] = [];
    let winsA = 0;
    let winsB = 0;
    for (const taskId of taskIds) {
      const inA = countsA.get(taskId) ?? 0;
      const inB = countsB.get(taskId) ?? 0;
      if (inA + inB !== 1) problems.push(`${taskId}: handler ran ${inA} times in A, ${inB} in B`);
      if (inA === 1) winsA += 1;
      if (inB === 1) winsB += 1;
    }
    const claims = await a.db
      .selectFrom('causeway_transitions')
      .select(['task_id', 'actor'])
      .where('reason', '=', 'lease_acquired')
      .where('task_id', 'in', taskIds)
      .execute();
    const claimsByTask = new Map<string, string[]>();
    for (const row of claims) {
      const list = claimsByTask.get(row.task_id as string) ?? [];
      list.push(row.actor);
      claimsByTask.set(row.task_id as string, list);
    }
    for (const taskId of taskIds) {
      const actors = claimsByTask.get(taskId) ?? [];
      const winner = countsA.has(taskId) ? a.holder : b.holder;
      if (actors.length !== 1 || actors[0] !== `worker:${winner}`) {
        problems.push(
          `${taskId}: lease_acquired by ${JSON.stringify(actors)}, handler in ${winner}`,
        );
      }
    }
    const states = await taskStates(a, taskIds);
    for (const row of states) {
      if (row.state !== 'succeeded' || row.attempt !== 1) {
        problems.push(`${row.id}: ${row.state} after ${row.attempt} attempts`);
      }
    }
    console.info(
      `[concurrency-claim] ${rounds} rounds: engine A won ${winsA}, engine B won ${winsB}`,
    );
    expect(problems).toEqual([]);
    expect(states).toHaveLength(rounds);
    expect(winsA + winsB).toBe(rounds);
    expect(await logMismatches(url)).toEqual([]);
  }, 120_000);

  it(`two concurrent claim transactions on one queued task: one lease_acquired, ${rounds} times`, async () => {
    const url = database().url;
    const a = testEngine(url, { workflows: [raceWorkflow(new Map())] });
    const b = testEngine(url, { workflows: [raceWorkflow(new Map())] });
    await a.migrate();
    const definitions = workflowRegistry([raceWorkflow(new Map())]);
    const apply = { definitions, leaseMs: 30_000, random: Math.random };

    /** The worker's claim transaction: SKIP LOCKED candidates, then the machine's claim edge. */
    const claim = (engine: Engine, arrive: () => Promise<void>) =>
      engine.db.transaction().execute(async (tx) => {
        const candidates = await taskClaimCandidates(tx, 'default', 10);
        // Both transactions have picked their candidates (and hold their row locks) here.
        await arrive();
        if (candidates.length === 0) return [];
        const result = await applyEvents(
          tx,
          apply,
          candidates.map((candidate) => ({
            taskId: candidate.id,
            event: { type: 'claim', actor: { kind: 'worker', name: engine.holder } },
          })),
          {
            skipLocked: true,
            holder: engine.holder,
            workflowIdOf: new Map(candidates.map((c) => [c.id, c.workflowId])),
          },
        );
        return result.outcomes.flatMap((outcome) =>
          outcome.kind === 'applied' && outcome.edge.to === 'leased' ? [outcome.taskId] : [],
        );
      });

    await raceRounds(a, b, (engine, arrive) => claim(engine, arrive));
    // Nowhere in the database (this test's tasks and the previous test's) was a task
    // claimed twice. (Workflow-level rows carry the child's reason but no task id.)
    const twice = await a.db
      .selectFrom('causeway_transitions')
      .select(['task_id', sql<number>`count(*)::int`.as('n')])
      .where('reason', '=', 'lease_acquired')
      .where('task_id', 'is not', null)
      .groupBy('task_id')
      .having(sql<number>`count(*)`, '>', 1)
      .execute();
    expect(twice).toEqual([]);
    expect(await logMismatches(url)).toEqual([]);
  }, 60_000);

  it(`two concurrent one-statement claims on one queued task: one lease_acquired, ${rounds} times`, async () => {
    const url = database().url;
    const a = testEngine(url, { workflows: [raceWorkflow(new Map())] });
    const b = testEngine(url, { workflows: [raceWorkflow(new Map())] });
    await a.migrate();
    const definitions = workflowRegistry([raceWorkflow(new Map())]);
    const apply = { definitions, leaseMs: 30_000, random: Math.random };
    // The worker's claim: one statement, committed on its own (no transaction around it).
    const claim = async (engine: Engine) => {
      const { claimed } = await claimReadyTasks(engine.db, apply, {
        queue: 'default',
        limit: 10,
        holder: engine.holder,
      });
      return claimed.map((task) => task.task.id);
    };
    await raceRounds(a, b, (engine) => claim(engine));
    expect(await logMismatches(url)).toEqual([]);
  }, 60_000);

  it('SKIP LOCKED hands two overlapping claimers disjoint sets that cover the queue', async () => {
    const url = database().url;
    const a = testEngine(url, { workflows: [raceWorkflow(new Map())] });
    const b = testEngine(url, { workflows: [raceWorkflow(new Map())] });
    await a.migrate();
    // Leave only fresh queued tasks behind (earlier tests' tasks are leased or terminal).
    const fresh = await a.submitMany(
      Array.from({ length: 20 }, (_, round) => ({ name: 'claim-race', input: { round } })),
    );
    const ids = new Set(
      (
        await a.db
          .selectFrom('causeway_tasks')
          .select('id')
          .where(
            'workflow_id',
            'in',
            fresh.map((result) => result.workflow.id),
          )
          .execute()
      ).map((row) => row.id),
    );
    const queued = await a.db
      .selectFrom('causeway_tasks')
      .select('id')
      .where('state', '=', 'queued')
      .execute();
    expect(new Set(queued.map((row) => row.id))).toEqual(ids);

    // 100 rounds: both transactions pick candidates while the other holds its locks, then
    // roll back so the next round races for the same 20 rows again.
    for (let round = 0; round < 100; round += 1) {
      const arrive = barrier(2);
      const limitA = 1 + (round % 20);
      const limitB = 20;
      const pick = (engine: Engine, limit: number) =>
        engine.db
          .transaction()
          .execute(async (tx) => {
            const candidates = await taskClaimCandidates(tx, 'default', limit);
            await arrive();
            throw Object.assign(new Rollback(), { candidates });
          })
          .catch((error: unknown) => {
            if (!(error instanceof Rollback)) throw error;
            return (error as Rollback & { candidates: { id: string }[] }).candidates.map(
              (candidate) => candidate.id,
            );
          });
      // Start A first so it usually locks first; the assertions hold either way.
      const first = pick(a, limitA);
      const second = pick(b, limitB);
      const [setA, setB] = await Promise.all([first, second]);
      const overlap = setA.filter((id) => setB.includes(id));
      expect(overlap, `round ${round}`).toEqual([]);
      expect(setA.length, `round ${round}`).toBeLessThanOrEqual(limitA);
      // Together they never exceed the queue and never invent rows.
      for (const id of [...setA, ...setB]) expect(ids.has(id)).toBe(true);
      // Neither committed before both had picked, so the second picker skipped exactly the
      // first one's rows and took the rest: together they cover the whole queue.
      expect(new Set([...setA, ...setB]).size, `round ${round}`).toBe(ids.size);
    }
  }, 60_000);

  it('the one-statement claim locks only the rows it takes (its planner bound is larger)', async () => {
    const url = database().url;
    // A queue of its own, holding exactly these 20 tasks.
    const bounded = defineWorkflow({
      name: 'claim-bound',
      input: z.object({ round: z.number().int() }),
      steps: { only: step({ queue: 'bound', run: () => null }) },
    });
    const a = testEngine(url, { workflows: [bounded] });
    const b = testEngine(url, { workflows: [bounded] });
    await a.migrate();
    const apply = {
      definitions: workflowRegistry([bounded]),
      leaseMs: 30_000,
      random: Math.random,
    };
    await a.submitMany(
      Array.from({ length: 20 }, (_, round) => ({ name: 'claim-bound', input: { round } })),
    );
    // Limits that are not powers of two: the statement's literal bound is then larger than
    // the limit, and a row locked beyond the limit would be skipped by the other claimer.
    for (let round = 0; round < 60; round += 1) {
      const arrive = barrier(2);
      const limitA = [3, 5, 6, 7, 9, 12, 13, 17][round % 8] as number;
      const take = (engine: Engine, limit: number) =>
        engine.db
          .transaction()
          .execute(async (tx) => {
            const { claimed } = await claimReadyTasks(tx, apply, {
              queue: 'bound',
              limit,
              holder: engine.holder,
            });
            await arrive();
            throw Object.assign(new Rollback(), { ids: claimed.map((task) => task.task.id) });
          })
          .catch((error: unknown) => {
            if (!(error instanceof Rollback)) throw error;
            return (error as Rollback & { ids: string[] }).ids;
          });
      const first = take(a, limitA);
      const second = take(b, 20);
      const [setA, setB] = await Promise.all([first, second]);
      expect(
        setA.filter((id) => setB.includes(id)),
        `round ${round}`,
      ).toEqual([]);
      expect(setA.length, `round ${round}`).toBeLessThanOrEqual(limitA);
      // Both held their locks until both had claimed: together they took all 20.
      expect(setA.length + setB.length, `round ${round}`).toBe(20);
    }
  }, 60_000);
});
