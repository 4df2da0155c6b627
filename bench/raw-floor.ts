import pg from 'pg';
import { loopWorker } from './loop-worker';
import { withClient } from './server';
import type {
  BenchWorker,
  Counts,
  JobInput,
  Mode,
  Producer,
  RawSpec,
  System,
  WorkerHooks,
} from './system';
import { packageVersion } from './versions';

/**
 * L, the raw SQL floor: a hand-written SKIP LOCKED queue in plain `pg`, the same as the
 * peers' `peers/raw.mjs` (one table; claim k rows per statement; complete with one UPDATE;
 * enqueue = INSERT + pg_notify in one statement; idle loops LISTEN with a polling fallback).
 * In W4 completing a step and inserting the next one is one statement, so it is atomic.
 */

const schema = `
create table rq_jobs (
  id         bigserial primary key,
  payload    jsonb       not null,
  state      text        not null default 'queued',  -- queued | running | done
  locked_at  timestamptz,
  created_at timestamptz not null default now()
);
create index rq_jobs_queued on rq_jobs (id) where state = 'queued'`;

const claimSql = `
update rq_jobs set state = 'running', locked_at = now()
 where id in (select id from rq_jobs where state = 'queued'
               order by id limit $1 for update skip locked)
returning id, payload`;
const completeSql = `update rq_jobs set state = 'done' where id = any($1::bigint[])`;
const completeAndChainSql = `
with d as (update rq_jobs set state = 'done' where id = any($1::bigint[]))
insert into rq_jobs (payload) select jsonb_array_elements($2::jsonb)`;
const completeAndChainNotifySql = `
with d as (update rq_jobs set state = 'done' where id = any($1::bigint[])),
     i as (insert into rq_jobs (payload) select jsonb_array_elements($2::jsonb) returning id)
select pg_notify('rq_jobs', '') from (select 1 from i limit 1) x`;
const insertOneSql = `insert into rq_jobs (payload) values ($1)`;
const insertOneNotifySql = `
with i as (insert into rq_jobs (payload) values ($1) returning id)
select pg_notify('rq_jobs', '') from i`;
const insertManySql = `insert into rq_jobs (payload) select jsonb_array_elements($1::jsonb)`;
const insertManyNotifySql = `
with i as (insert into rq_jobs (payload) select jsonb_array_elements($1::jsonb) returning id)
select pg_notify('rq_jobs', '') from (select 1 from i limit 1) x`;

type Payload = JobInput & { step?: 'a' | 'b' | 'c' };
const nextStep = { a: 'b', b: 'c' } as const;

export function rawFloorSystem(spec: RawSpec): System {
  const withFirstStep = (mode: Mode, input: JobInput): Payload =>
    mode === 'workflow' ? { step: 'a', ...input } : input;
  return {
    label: `L: raw SQL queue, claim k=${spec.k}`,
    version: `pg@${packageVersion('pg')}`,
    config: {
      claimBatch: spec.k,
      loops: spec.concurrency,
      notify: spec.notify,
      idlePollMs: spec.idlePollMs,
      enqueue: spec.notify ? 'INSERT + pg_notify in one statement' : 'plain INSERT',
      batchEnqueue: 'INSERT ... SELECT jsonb_array_elements($1), one statement per batch',
    },

    async setup(url) {
      await withClient(url, (client) => client.query(schema));
    },

    async producer(url, connections, mode): Promise<Producer> {
      const pool = new pg.Pool({ connectionString: url, max: connections });
      pool.on('error', () => {});
      return {
        async submit(input) {
          await pool.query({
            name: 'insert-one',
            text: spec.notify ? insertOneNotifySql : insertOneSql,
            values: [withFirstStep(mode, input)],
          });
        },
        async submitBatch(inputs) {
          await pool.query(spec.notify ? insertManyNotifySql : insertManySql, [
            JSON.stringify(inputs.map((input) => withFirstStep(mode, input))),
          ]);
        },
        close: () => pool.end(),
      };
    },

    async worker(url, mode, hooks) {
      return rawWorker(url, spec, mode, hooks);
    },

    async counts(pool, mode): Promise<Counts> {
      const { rows } = await pool.query(`
        select count(*) filter (where state = 'done')::int as done,
               count(*) filter (where state = 'done' and payload->>'step' = 'c')::int as wf_done,
               count(*) filter (where state <> 'done')::int as open,
               count(*)::int as total
          from rq_jobs`);
      const row = rows[0];
      return mode === 'workflow'
        ? { total: row.total, done: row.wf_done, open: row.open, failed: 0 }
        : { total: row.total, done: row.done, open: row.open, failed: 0 };
    },

    async verify(pool, mode, expected) {
      const { rows } = await pool.query(`
        select count(*)::int as rows,
               count(*) filter (where state = 'done')::int as done,
               count(*) filter (where state = 'queued')::int as queued,
               count(*) filter (where state = 'running')::int as running
          from rq_jobs`);
      const row = rows[0];
      const steps = mode === 'workflow' ? 3 : 1;
      const open = expected.workflows - expected.finished;
      const want = { rows: expected.finished * steps + open, done: expected.finished * steps };
      const problems: string[] = [];
      if (row.rows !== want.rows) problems.push(`${row.rows} rows, expected ${want.rows}`);
      if (row.done !== want.done) problems.push(`${row.done} done, expected ${want.done}`);
      if (row.queued !== open) problems.push(`${row.queued} queued, expected ${open}`);
      if (row.running !== 0) problems.push(`${row.running} still running`);
      return { ok: problems.length === 0, problems, checks: row };
    },

    async insertHistory(pool, rows) {
      await pool.query(
        `insert into rq_jobs (payload, state)
         select jsonb_build_object('i', g), 'done' from generate_series(1, $1::int) g`,
        [rows],
      );
    },
  };
}

function rawWorker(url: string, spec: RawSpec, mode: Mode, hooks: WorkerHooks): BenchWorker {
  return loopWorker(url, spec, 'rq_jobs', async (client) => {
    const { rows } = await client.query<{ id: string; payload: Payload }>({
      name: 'claim',
      text: claimSql,
      values: [spec.k],
    });
    if (rows.length === 0) return false;
    const ids = rows.map((row) => row.id);
    if (mode === 'workflow') {
      const next: Payload[] = [];
      await Promise.all(
        rows.map(async ({ payload }) => {
          const step = payload.step ?? 'a';
          hooks.onStep(step);
          if (step === 'c') hooks.onWorkflowDone();
          else next.push({ ...payload, step: nextStep[step] });
        }),
      );
      if (next.length > 0) {
        await client.query({
          name: 'complete-and-chain',
          text: spec.notify ? completeAndChainNotifySql : completeAndChainSql,
          values: [ids, JSON.stringify(next)],
        });
      } else {
        await client.query({ name: 'complete', text: completeSql, values: [ids] });
      }
    } else {
      await Promise.all(rows.map(async ({ payload }) => hooks.onJob(payload)));
      await client.query({ name: 'complete', text: completeSql, values: [ids] });
    }
    return true;
  });
}
