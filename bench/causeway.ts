import { createEngine, type Engine } from '@causeway/engine';
import { defineWorkflow, step } from '@causeway/workflow';
import { childLimits, startChildren } from '@causeway/workflow/internal';
import type pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { pooledUrl } from '../scripts/pgbouncer';
import { inAppSpan } from './app-span';
import { historySql } from './causeway-history';
import { drainSpan } from './causeway-log';
import { keyedExpectations, specExpectations, verificationOf, workflowCounts } from './checks';
import type { CausewaySpec, Counts, JobInput, Mode, System, WorkerHooks } from './system';
import { engineRevision, packageVersion } from './versions';

const input = z.object({
  i: z.number().int().optional(),
  t: z.number().optional(),
  warm: z.boolean().optional(),
});

const names = { job: 'bench-noop', workflow: 'bench-three-step' } as const;
/** W6's parent: one step that starts `children` children of the one-step no-op workflow. */
export const fanOutName = 'bench-fan-out';
/** w2k's one-step workflow: its task keyed (R50) by its input's `key`, limit 1. */
export const keyedName = 'bench-keyed';
const keyedInput = input.extend({ key: z.string() });
export type KeyedInput = z.output<typeof keyedInput>;

/**
 * The benchmark workflows; every handler reports to `hooks` first thing, then returns. The
 * keyed one only when asked for: a queue with a keyed step claims through the keyed path
 * (R50), so declaring it anywhere would change every other workload's claim.
 */
export function benchWorkflows(hooks: WorkerHooks, withKeyed = false) {
  const noop = defineWorkflow({
    name: names.job,
    input,
    steps: {
      only: step<JobInput>({
        run: (ctx) =>
          inAppSpan(
            {
              'causeway.workflow.id': ctx.workflowId,
              'causeway.workflow.name': names.job,
              'causeway.task.id': ctx.taskId,
              'causeway.step': 'only',
              'causeway.attempt': ctx.attempt,
            },
            () => {
              hooks.onJob(ctx.input);
              return null;
            },
          ),
      }),
    },
  });
  const threeStep = defineWorkflow({
    name: names.workflow,
    input,
    steps: {
      a: step<JobInput>({
        run: () => {
          hooks.onStep('a');
          return null;
        },
      }),
      b: step<JobInput>({
        after: ['a'],
        run: () => {
          hooks.onStep('b');
          return null;
        },
      }),
      c: step<JobInput>({
        after: ['b'],
        run: () => {
          hooks.onStep('c');
          hooks.onWorkflowDone();
          return null;
        },
      }),
    },
  });
  const fanOut = defineWorkflow({
    name: fanOutName,
    input: z.object({ children: z.number().int().min(1).max(childLimits.maxChildren) }),
    steps: {
      fan: step<{ children: number }>({
        run: (ctx) => {
          hooks.onStep('fan');
          const inputs = Array.from({ length: ctx.input.children }, (_, i): JobInput => ({ i }));
          return startChildren(names.job, inputs, { maxChildren: ctx.input.children });
        },
      }),
    },
  });
  const keyed = defineWorkflow({
    name: keyedName,
    input: keyedInput,
    steps: {
      only: step<KeyedInput>({
        concurrency: { key: (ctx) => ctx.input.key, limit: 1 },
        run: (ctx) => {
          hooks.onJob(ctx.input);
          return null;
        },
      }),
    },
  });
  return withKeyed ? [noop, threeStep, fanOut, keyed] : [noop, threeStep, fanOut];
}

const noHooks: WorkerHooks = { onJob() {}, onStep() {}, onWorkflowDone() {} };

export function causewaySystem(spec: CausewaySpec): System {
  const { keys } = spec;
  /** The workflow a mode's workloads run: with `keys`, W2's is the keyed one. */
  const nameOf = (mode: Mode): string => {
    if (keys === undefined) return names[mode];
    if (mode === 'job') return keyedName;
    throw new Error('concurrency keys (w2k) apply to the one-step workflow only');
  };
  /** Input `i` goes to key `k<i mod keys>`: every key gets its share, in submit order. */
  const inputOf = (job: JobInput): JobInput | KeyedInput =>
    keys === undefined ? job : { ...job, key: `k${(job.i ?? 0) % keys}` };
  const engineFor = (url: string, hooks: WorkerHooks, poolSize?: number): Engine =>
    createEngine({
      databaseUrl: spec.poolerPort === undefined ? url : pooledUrl(url, spec.poolerPort),
      ...(spec.poolerPort === undefined ? {} : { directUrl: url }),
      ...(spec.preparedStatements === undefined
        ? {}
        : { preparedStatements: spec.preparedStatements }),
      workflows: benchWorkflows(hooks, keys !== undefined),
      logger: pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }),
      ...(poolSize === undefined ? {} : { poolSize }),
      ...(spec.pollIntervalMs === undefined ? {} : { pollIntervalMs: spec.pollIntervalMs }),
      ...(spec.leaseMs === undefined ? {} : { leaseMs: spec.leaseMs }),
    });
  return {
    label: 'Causeway',
    version: `@causeway/engine@${packageVersion('@causeway/engine')} (${engineRevision()})`,
    config: {
      concurrency: spec.concurrency,
      claimBatchSize: spec.claimBatchSize ?? 'default (concurrency + prefetch)',
      prefetch: spec.prefetch ?? 'default (adaptive: ~10 ms of work, at most 9 per slot)',
      poolSize: spec.poolSize ?? 'default (10)',
      pollIntervalMs: spec.pollIntervalMs ?? 'default (1000)',
      leaseMs: spec.leaseMs ?? 'default (30000)',
      preparedStatements: spec.preparedStatements ?? 'default (true)',
      pooler:
        spec.poolerPort === undefined
          ? 'none'
          : 'PgBouncer 1.18, pool_mode=transaction; directUrl for LISTEN and migrate()',
      concurrencyKeys:
        keys === undefined
          ? 'none declared'
          : `every task of the one-step workflow: ${keys} keys (k<i mod ${keys}>), limit 1`,
      sweeper: 'on (default, every 1000 ms)',
      logger: "pino({ level: 'silent' })",
      submit: 'engine.submit()',
      batchSubmit: 'engine.submitMany()',
    },

    async setup(url) {
      const engine = engineFor(url, noHooks, 1);
      await engine.migrate();
      await engine.close();
    },

    async producer(url, connections, mode) {
      const engine = engineFor(url, noHooks, connections);
      const name = nameOf(mode);
      return {
        async submit(job) {
          await engine.submit(name, inputOf(job));
        },
        async submitBatch(jobs) {
          await engine.submitMany(jobs.map((job) => ({ name, input: inputOf(job) })));
        },
        async submitBatchDelayed(jobs, delayMs) {
          await engine.submitMany(
            jobs.map((job) => ({ name, input: inputOf(job) })),
            { delayMs },
          );
        },
        async submitFanOut(children) {
          const answer = await engine.submit(fanOutName, { children });
          return answer.workflow.id;
        },
        close: () => engine.close(),
      };
    },

    async worker(url, _mode, hooks) {
      const engine = engineFor(url, hooks, spec.poolSize);
      let handle: Awaited<ReturnType<Engine['startWorker']>> | null = null;
      return {
        async start() {
          handle = await engine.startWorker({
            concurrency: spec.concurrency,
            ...(spec.claimBatchSize === undefined ? {} : { claimBatchSize: spec.claimBatchSize }),
            ...(spec.prefetch === undefined ? {} : { prefetch: spec.prefetch }),
          });
        },
        async stop() {
          await handle?.stop({ drainMs: 1_000 });
          await engine.close();
        },
      };
    },

    counts: (pool, mode): Promise<Counts> =>
      workflowCounts(pool, 'causeway_workflows', nameOf(mode)),

    async verify(pool, mode, expected) {
      const checks = await verificationCounts(pool, nameOf(mode));
      const { want, steps } = specExpectations(mode, expected);
      return verificationOf(checks, {
        ...want,
        retried: 0,
        ...keyedExpectations(keys, expected.workflows * steps),
      });
    },

    drainSpan: (pool, mode) => drainSpan(pool, { name: nameOf(mode) }),

    async insertHistory(pool, rows) {
      const client = await pool.connect();
      try {
        // Untimed setup of rows that are consistent by construction: skip the foreign-key
        // triggers (superuser only), which would otherwise take most of a minute.
        await client.query('begin');
        await client.query('set local session_replication_role = replica');
        await client.query(historySql, [rows, names.job]);
        await client.query('commit');
      } finally {
        client.release();
      }
    },
  };
}

/**
 * Counts for `verify`. `keyedTasks` and `keys`: tasks with a concurrency key, and their keys.
 * `logMismatches` is R25: tasks and workflows whose state differs from the `to` of their last
 * transition row; it skips w2h's history (written a day in the past by SQL, not by the engine)
 * to keep verification quick.
 */
async function verificationCounts(pool: pg.Pool, name: string): Promise<Record<string, number>> {
  const { rows } = await pool.query(
    `with w as (select * from causeway_workflows where name = $1),
          t as (select t.* from causeway_tasks t join w on w.id = t.workflow_id),
          recent_w as (select * from w where created_at > now() - interval '12 hours'),
          recent_t as (select * from t where created_at > now() - interval '12 hours')
     select (select count(*) from w)::int as workflows,
            (select count(*) from w where state = 'succeeded')::int as succeeded,
            (select count(*) from w where state = 'queued')::int as queued,
            (select count(*) from t)::int as tasks,
            (select count(*) from t where attempt > 1)::int as retried,
            (select count(*) from t where concurrency_key is not null)::int as "keyedTasks",
            (select count(distinct concurrency_key) from t)::int as keys,
            (select count(*) from causeway_transitions tr join w on w.id = tr.workflow_id)::int
              as transitions,
            (select count(*) from recent_t t left join lateral (
                select to_state from causeway_transitions
                 where workflow_id = t.workflow_id and task_id = t.id order by id desc limit 1) last on true
              where last.to_state is distinct from t.state)::int
            + (select count(*) from recent_w w left join lateral (
                select to_state from causeway_transitions
                 where workflow_id = w.id and task_id is null order by id desc limit 1) last on true
              where last.to_state is distinct from w.state)::int as "logMismatches"`,
    [name],
  );
  return rows[0];
}
