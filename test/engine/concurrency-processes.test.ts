import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/database';
import { chainedLeases, logMismatches, query, testEngine } from '../helpers/engine';
import { waitFor } from '../helpers/wait-for';
import { type Child, spawnFixture } from './fixtures/children';
import { drainDiamondWorkflow, drainWorkflow } from './fixtures/drain-workflow';

const database = useTestDatabase();

const taskCount = 2_000;
const processCount = 4;

/** The side table where every handler invocation in a child records itself. */
async function createInvocationTable(url: string): Promise<void> {
  await query(
    url,
    `create table if not exists handler_invocations (
       id bigint generated always as identity primary key,
       task_id uuid not null,
       holder text not null,
       attempt integer not null,
       pid integer not null,
       at timestamptz not null default clock_timestamp())`,
  );
}

/** Four idle drain workers in their own processes, ready and listening; their holders. */
async function spawnDrainWorkers(url: string): Promise<{ children: Child[]; holders: string[] }> {
  const children: Child[] = [];
  for (let index = 0; index < processCount; index += 1) {
    children.push(
      spawnFixture(
        'drain-worker.ts',
        {
          CAUSEWAY_CHILD_DATABASE_URL: url,
          CAUSEWAY_CHILD_CONCURRENCY: '16',
          CAUSEWAY_CHILD_LEASE_MS: '10000',
        },
        `drain-worker-${index}`,
      ),
    );
  }
  const ready = await Promise.all(children.map((child) => child.ready(60_000)));
  return { children, holders: ready.map((message) => message.holder) };
}

/** Stops every child (worker stop, engine close) and expects each to exit 0. */
async function stopDrainWorkers(children: readonly Child[]): Promise<void> {
  const exits = await Promise.all(children.map((child) => child.stop()));
  for (const [index, exit] of exits.entries()) {
    expect(exit, `${children[index]?.name}\n${children[index]?.output()}`).toEqual({
      code: 0,
      signal: null,
    });
  }
}

describe('2,000 tasks drained by 4 worker processes', () => {
  it('runs every handler exactly once, leaves nothing behind, and spreads the work', async () => {
    const url = database().url;
    // The test process only submits and observes: its handler must never run.
    const engine = testEngine(url, {
      workflows: [
        drainWorkflow(() => {
          throw new Error('the parent process never runs drain-one');
        }),
      ],
    });
    await engine.migrate();
    await createInvocationTable(url);

    const started = performance.now();
    const { children, holders } = await spawnDrainWorkers(url);
    const readyMs = Math.round(performance.now() - started);
    expect(new Set(holders).size).toBe(processCount);
    for (const [index, holder] of holders.entries()) {
      // R7: the holder names this process (host/pid/boot id), never the host alone.
      expect(holder).toContain(`/${children[index]?.process.pid}/`);
    }

    // All four are idle and listening; one batch wakes them all at once.
    const submitted = await engine.submitMany(
      Array.from({ length: taskCount }, (_, n) => ({ name: 'drain-one', input: { n } })),
    );
    expect(submitted).toHaveLength(taskCount);
    expect(submitted.every((result) => !result.deduplicated)).toBe(true);

    const submittedAt = performance.now();
    const progress = async () => {
      const rows = await query<{ state: string; n: number }>(
        url,
        'select state, count(*)::int as n from causeway_tasks group by state order by state',
      );
      return Object.fromEntries(rows.map((row) => [row.state, row.n]));
    };
    try {
      await waitFor(async () => (await progress()).succeeded === taskCount, {
        timeoutMs: 60_000,
        intervalMs: 100,
        description: `all ${taskCount} tasks succeeded`,
      });
    } catch (error) {
      throw new Error(
        `${String(error)}\nstates: ${JSON.stringify(await progress())}\n` +
          children.map((child) => `--- ${child.name} ---\n${child.output()}`).join('\n'),
      );
    }

    const drainMs = Math.round(performance.now() - submittedAt);
    // Each child stops its worker and closes its engine, then exits 0.
    await stopDrainWorkers(children);

    // Every task succeeded, none is left non-terminal, every workflow succeeded.
    expect(await progress()).toEqual({ succeeded: taskCount });
    const workflows = await query<{ state: string; n: number }>(
      url,
      'select state, count(*)::int as n from causeway_workflows group by state',
    );
    expect(workflows).toEqual([{ state: 'succeeded', n: taskCount }]);

    // Each task's handler ran exactly once.
    const perTask = await query<{ runs: number; tasks: number }>(
      url,
      `select runs, count(*)::int as tasks from (
         select t.id, count(h.id)::int as runs
           from causeway_tasks t left join handler_invocations h on h.task_id = t.id
          group by t.id) per_task
       group by runs order by runs`,
    );
    expect(perTask).toEqual([{ runs: 1, tasks: taskCount }]);

    // Exactly one claim per task, by the process whose handler ran it, and one completion.
    const claims = await query<{ task_id: string; claims: number; actor: string; holder: string }>(
      url,
      `select tr.task_id, count(*) over (partition by tr.task_id)::int as claims, tr.actor, h.holder
         from causeway_transitions tr join handler_invocations h on h.task_id = tr.task_id
        where tr.reason = 'lease_acquired'`,
    );
    expect(claims).toHaveLength(taskCount);
    expect(claims.filter((row) => row.claims !== 1)).toEqual([]);
    expect(claims.filter((row) => row.actor !== `worker:${row.holder}`)).toEqual([]);
    const reasons = await query<{ reason: string; n: number }>(
      url,
      `select reason, count(*)::int as n from causeway_transitions
        where task_id is not null group by reason order by reason`,
    );
    expect(reasons).toEqual([
      { reason: 'completed', n: taskCount },
      { reason: 'lease_acquired', n: taskCount },
      { reason: 'submitted', n: taskCount },
    ]);

    // All four processes did some of the work.
    const distribution = await query<{ holder: string; pid: number; n: number }>(
      url,
      'select holder, pid, count(*)::int as n from handler_invocations group by holder, pid order by n desc',
    );
    console.info(
      `[concurrency-processes] distribution of ${taskCount} tasks over ${processCount} processes: ` +
        distribution.map((row) => `pid ${row.pid}: ${row.n}`).join(', ') +
        ` (children ready in ${readyMs} ms, drained in ${drainMs} ms)`,
    );
    expect(distribution).toHaveLength(processCount);
    expect(distribution.map((row) => row.holder).sort()).toEqual([...holders].sort());
    for (const row of distribution) expect(row.n).toBeGreaterThan(0);

    // R25 holds for every task and workflow.
    expect(await logMismatches(url)).toEqual([]);
  }, 120_000);
});

describe('diamond workflows drained by 4 worker processes, steps chained', () => {
  it('runs every step exactly once with its upstream outputs, whoever writes the last upstream', async () => {
    const url = database().url;
    const never = async () => {
      throw new Error('the parent process never runs a step');
    };
    const engine = testEngine(url, {
      workflows: [drainWorkflow(never), drainDiamondWorkflow(never)],
    });
    await engine.migrate();
    await createInvocationTable(url);
    const { children } = await spawnDrainWorkers(url);
    const count = 300;
    const submitted = await engine.submitMany(
      Array.from({ length: count }, (_, n) => ({ name: 'drain-diamond', input: { n } })),
    );
    const ids = submitted.map((result) => result.workflow.id);
    const succeeded = async () =>
      (
        await query<{ n: number }>(
          url,
          `select count(*)::int as n from causeway_workflows
            where id = any($1::uuid[]) and state = 'succeeded'`,
          [ids],
        )
      )[0]?.n;
    try {
      await waitFor(async () => (await succeeded()) === count, {
        timeoutMs: 60_000,
        intervalMs: 100,
        description: `all ${count} diamonds succeeded`,
      });
    } finally {
      await stopDrainWorkers(children);
    }

    // Each of the 4 steps of each workflow ran once, and was claimed or chained once.
    const perTask = await query<{ runs: number; leases: number; tasks: number }>(
      url,
      `select runs, leases, count(*)::int as tasks from (
         select t.id,
           (select count(*) from handler_invocations h where h.task_id = t.id)::int as runs,
           (select count(*) from causeway_transitions tr
             where tr.workflow_id = t.workflow_id and tr.task_id = t.id
               and tr.reason = 'lease_acquired')::int as leases
           from causeway_tasks t where t.workflow_id = any($1::uuid[])) per_task
       group by runs, leases`,
      [ids],
    );
    expect(perTask).toEqual([{ runs: 1, leases: 1, tasks: 4 * count }]);
    // d got b's and c's outputs, which got a's: 2n + 3.
    const wrong = await query<{ n: number; output: unknown }>(
      url,
      `select (w.input ->> 'n')::int as n, t.output
         from causeway_tasks t join causeway_workflows w on w.id = t.workflow_id
        where t.workflow_id = any($1::uuid[]) and t.step = 'd'
          and t.output <> to_jsonb(2 * (w.input ->> 'n')::int + 3)`,
      [ids],
    );
    expect(wrong).toEqual([]);
    // Steps were chained: leased by the statement that wrote an upstream step's success.
    const chained = await chainedLeases(url, ids);
    console.info(`[concurrency-processes] chained leases by step: ${JSON.stringify(chained)}`);
    expect(chained.reduce((sum, row) => sum + row.n, 0)).toBeGreaterThan(0);
    expect(await logMismatches(url)).toEqual([]);
  }, 120_000);
});
