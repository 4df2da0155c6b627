import { randomUUID } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { specExpectations, verificationOf, workflowCounts } from './checks';
import { loopWorker } from './loop-worker';
import { withClient } from './server';
import { historySql, queue, schema } from './spec-floor-tables';
import type {
  BenchWorker,
  Counts,
  JobInput,
  Mode,
  Producer,
  SpecFloorSpec,
  System,
  WorkerHooks,
} from './system';
import { packageVersion } from './versions';

/**
 * S, the contract floor: hand-written SQL in plain `pg` over copies of Causeway's tables, doing
 * the writes that the edge table, the aggregation and the rules (docs/state-machine.md,
 * docs/rules.md) require of any correct implementation and nothing else, each operation
 * batched into one statement. Per edge: the conditional state update (R1), the lease columns
 * (R7), the parent's state when it changes (the aggregation) and one log row per task and per
 * workflow edge (R24). Left out because the rules do not require them: idempotency keys (none
 * are passed), retries, sweeper, renewal, checkpoints, CHECK constraints and the test clock
 * offset (R11 is met with plain now()). The worker loop, batching and wake-ups are L's.
 */

const names = { job: 'bench-noop', workflow: 'bench-three-step' } as const;

/** Each mode's steps and their state at submit: a is ready, the others wait for upstream. */
const stepsSql = {
  job: `(values ('a', 'queued')) s(step, state)`,
  workflow: `(values ('a', 'queued'), ('b', 'pending'), ('c', 'pending')) s(step, state)`,
} as const;

/**
 * Submit, one statement: workflow rows (ids from gen_random_uuid()), their tasks, one log row
 * each, and the wake-up. `source` yields one `input` per workflow: a single parameter, or the
 * elements of a JSON array for a batch (measured on 1,000-row batches: jsonb_array_elements
 * and json_array_elements are within noise, both ahead of unnest($1::text[] / jsonb[])). Ids
 * are gen_random_uuid(), in SQL so a batch sends only its inputs.
 */
const submitSql = (mode: Mode, source: string, notify: boolean) => `
with w as (
  insert into sq_workflows (id, name, state, input, created_at, updated_at)
  select gen_random_uuid(), $2, 'queued', x.input, now(), now() from ${source}
  returning id
), t as (
  insert into sq_tasks (id, workflow_id, step, queue, state, run_at, created_at, updated_at)
  select gen_random_uuid(), w.id, s.step, '${queue}', s.state,
         case when s.state = 'queued' then now() end, now(), now()
    from w cross join ${stepsSql[mode]}
  returning id, workflow_id, step, state
), l as (
  insert into sq_transitions (workflow_id, task_id, step, from_state, to_state, reason, actor,
                              attempt, at)
  select id, null, null, null, 'queued', 'submitted', 'client', 0, now() from w
  union all
  select workflow_id, id, step, null, state, 'submitted', 'client', 0, now() from t
)
${notify ? `select pg_notify('sq_tasks', '') from (select 1 from w limit 1) x` : 'select 1 from (select 1 from w limit 1) x'}`;
const oneSource = '(select $1::jsonb as input) x';
const manySource = 'jsonb_array_elements($1::jsonb) x(input)';

/**
 * Claim, one statement: up to $2 ready tasks of queue $1 (R4, R8), leased to $3 with attempt
 * and epoch + 1 (R7); their workflows queued → running where still queued (the aggregation:
 * a child is leased); one log row per task edge and per workflow edge (R24). Returns what the
 * handler needs and what fences the completion. The input comes from the workflow update when
 * the parent changed, else from a read (only later steps of a three-step workflow).
 */
const claimSql = `
with c as (
  select id from sq_tasks
   where state = 'queued' and queue = $1 and run_at <= now()
   order by run_at limit $2 for update skip locked
), t as (
  update sq_tasks t
     set state = 'leased', attempt = t.attempt + 1, lease_holder = $3,
         lease_epoch = t.lease_epoch + 1, lease_expires_at = now() + interval '30 seconds',
         updated_at = now()
    from c where t.id = c.id
  returning t.id, t.workflow_id, t.step, t.attempt, t.lease_epoch
), w as (
  update sq_workflows w set state = 'running', updated_at = now()
    from t where w.id = t.workflow_id and w.state = 'queued'
  returning w.id, w.input
), l as (
  insert into sq_transitions (workflow_id, task_id, step, from_state, to_state, reason, actor,
                              attempt, at)
  select workflow_id, id, step, 'queued', 'leased', 'lease_acquired', 'worker:' || $3, attempt,
         now() from t
  union all
  select id, null, null, 'queued', 'running', 'lease_acquired', 'worker:' || $3, 0, now() from w
)
select t.id, t.workflow_id, t.step, t.lease_epoch,
       coalesce(w.input, (select input from sq_workflows x where x.id = t.workflow_id)) as input
  from t left join w on w.id = t.workflow_id`;

/**
 * Complete, one statement per batch of results ($1 task ids, $2 their epochs, $3 holder):
 * leased → succeeded fenced on (id, state, holder, epoch, lease not expired) (R7), lease
 * cleared; the next step pending → queued (workflow mode, a and b); the parent running →
 * succeeded when its last step succeeded (the aggregation: every child succeeded; c runs
 * only after a and b, so c's success is the last). While a or b succeed the parent stays
 * running: no write. Returns how many settled (a stale writer changes nothing and is told so)
 * and wakes the idle loops when it promoted a step.
 */
const completeSql = (mode: Mode, notify: boolean) => {
  const last = mode === 'job' ? 'a' : 'c';
  const promote =
    mode === 'workflow'
      ? `, p as (
  update sq_tasks t set state = 'queued', run_at = now(), updated_at = now()
    from d
   where t.workflow_id = d.workflow_id and d.step in ('a', 'b') and t.state = 'pending'
     and t.step = case d.step when 'a' then 'b' else 'c' end
  returning t.id, t.workflow_id, t.step, t.attempt
)`
      : '';
  const promoteLog =
    mode === 'workflow'
      ? `
  union all
  select workflow_id, id, step, 'pending', 'queued', 'upstream_succeeded', 'system', attempt,
         now() from p`
      : '';
  const wake =
    mode === 'workflow' && notify
      ? `,
       (select count(pg_notify('sq_tasks', '')) from (select 1 from p limit 1) x)::int as woke`
      : '';
  return `
with r as (
  select * from unnest($1::uuid[], $2::bigint[]) as r(id, epoch)
), d as (
  update sq_tasks t
     set state = 'succeeded', output = 'null'::jsonb, lease_holder = null,
         lease_expires_at = null, updated_at = now()
    from r
   where t.id = r.id and t.state = 'leased' and t.lease_holder = $3
     and t.lease_epoch = r.epoch and t.lease_expires_at > now()
  returning t.id, t.workflow_id, t.step, t.attempt
)${promote}, w as (
  update sq_workflows w set state = 'succeeded', updated_at = now()
    from d where d.step = '${last}' and w.id = d.workflow_id and w.state = 'running'
  returning w.id
), l as (
  insert into sq_transitions (workflow_id, task_id, step, from_state, to_state, reason, actor,
                              attempt, at)
  select workflow_id, id, step, 'leased', 'succeeded', 'completed', 'worker:' || $3, attempt,
         now() from d${promoteLog}
  union all
  select id, null, null, 'running', 'succeeded', 'completed', 'worker:' || $3, 0, now() from w
)
select (select count(*) from d)::int as settled${wake}`;
};

export function specFloorSystem(spec: SpecFloorSpec): System {
  return {
    label: `S: contract floor, raw SQL, claim k=${spec.k}`,
    version: `pg@${packageVersion('pg')}`,
    config: {
      claimBatch: spec.k,
      loops: spec.concurrency,
      notify: spec.notify,
      idlePollMs: spec.idlePollMs,
      submit: `workflow + tasks + log rows${spec.notify ? ' + pg_notify' : ''}, one statement`,
      batchSubmit: 'the same from jsonb_array_elements($1), one statement per batch',
      claim: 'lease k tasks + parents queued → running + log rows, one statement',
      complete: 'fenced settle + promotion + parent → succeeded + log rows, one statement',
    },

    async setup(url) {
      await withClient(url, (client) => client.query(schema));
    },

    async producer(url, connections, mode): Promise<Producer> {
      const pool = new pg.Pool({ connectionString: url, max: connections });
      pool.on('error', () => {});
      const name = names[mode];
      const one = submitSql(mode, oneSource, spec.notify);
      const many = submitSql(mode, manySource, spec.notify);
      return {
        async submit(input) {
          await pool.query({ name: 'submit-one', text: one, values: [input, name] });
        },
        async submitBatch(inputs) {
          await pool.query({
            name: 'submit-many',
            text: many,
            values: [JSON.stringify(inputs), name],
          });
        },
        close: () => pool.end(),
      };
    },

    async worker(url, mode, hooks) {
      return specWorker(url, spec, mode, hooks);
    },

    counts: (pool, mode): Promise<Counts> => workflowCounts(pool, 'sq_workflows', names[mode]),

    async verify(pool, mode, expected) {
      const checks = await verificationCounts(pool, names[mode]);
      const { want: common, steps, open } = specExpectations(mode, expected);
      const want: Record<string, number> = {
        ...common,
        tasksSucceeded: expected.finished * steps,
        // Open workflows are only ever unstarted here: a ready, the rest pending.
        tasksQueued: open,
        tasksPending: open * (steps - 1),
        tasksLeased: 0,
        // Each finished task was claimed exactly once (attempt 1, epoch 1).
        claimedTwice: 0,
        parentMismatches: 0,
      };
      return verificationOf(checks, want);
    },

    async insertHistory(pool, rows) {
      await pool.query(historySql, [rows, names.job]);
    },
  };
}

/**
 * Counts for `verify`. `logMismatches` is R25: tasks and workflows whose state differs from
 * the `to` of their last transition row. `parentMismatches` is the aggregation: workflows
 * whose state is not the one their children's states give (rules evaluated top to bottom).
 * Like Causeway's verify, both skip w2h's history (written a day in the past by SQL) to stay quick.
 */
async function verificationCounts(pool: pg.Pool, name: string): Promise<Record<string, number>> {
  const { rows } = await pool.query(
    `with w as (select * from sq_workflows where name = $1),
          t as (select t.* from sq_tasks t join w on w.id = t.workflow_id),
          recent_w as (select * from w where created_at > now() - interval '12 hours'),
          recent_t as (select * from t where created_at > now() - interval '12 hours'),
          agg as (
            select w.id, w.state,
                   case
                     when bool_or(t.state = 'dead') then 'dead'
                     when bool_and(t.state = 'succeeded') then 'succeeded'
                     when bool_and(t.state in ('succeeded', 'cancelled', 'dead'))
                       and bool_or(t.state = 'cancelled') then 'cancelled'
                     when bool_or(t.state = 'cancel_requested') then 'cancel_requested'
                     when bool_or(t.state in ('leased', 'awaiting_receipt'))
                       or (bool_or(t.state = 'succeeded')
                           and bool_or(t.state not in ('succeeded', 'cancelled', 'dead')))
                       then 'running'
                     else 'queued'
                   end as expected
              from recent_w w join t on t.workflow_id = w.id
             group by w.id, w.state)
     select (select count(*) from w)::int as workflows,
            (select count(*) from w where state = 'succeeded')::int as succeeded,
            (select count(*) from w where state = 'queued')::int as queued,
            (select count(*) from t)::int as tasks,
            (select count(*) from t where state = 'succeeded')::int as "tasksSucceeded",
            (select count(*) from t where state = 'queued')::int as "tasksQueued",
            (select count(*) from t where state = 'pending')::int as "tasksPending",
            (select count(*) from t where state = 'leased')::int as "tasksLeased",
            (select count(*) from t where attempt > 1 or lease_epoch > 1)::int as "claimedTwice",
            (select count(*) from sq_transitions tr join w on w.id = tr.workflow_id)::int
              as transitions,
            (select count(*) from recent_t t left join lateral (
                select to_state from sq_transitions
                 where workflow_id = t.workflow_id and task_id = t.id order by id desc limit 1) last on true
              where last.to_state is distinct from t.state)::int
            + (select count(*) from recent_w w left join lateral (
                select to_state from sq_transitions
                 where workflow_id = w.id and task_id is null order by id desc limit 1) last on true
              where last.to_state is distinct from w.state)::int as "logMismatches",
            (select count(*) from agg where state <> expected)::int as "parentMismatches"`,
    [name],
  );
  return rows[0];
}

interface Claimed {
  id: string;
  workflow_id: string;
  step: 'a' | 'b' | 'c';
  lease_epoch: string;
  input: JobInput;
}

/** L's worker loop (`loopWorker`) with S's claim and complete statements. */
function specWorker(url: string, spec: SpecFloorSpec, mode: Mode, hooks: WorkerHooks): BenchWorker {
  // R7: holder = host + pid + a boot id random per start, never the host alone.
  const holder = `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const complete = completeSql(mode, spec.notify);
  return loopWorker(url, spec, 'sq_tasks', async (client) => {
    const { rows } = await client.query<Claimed>({
      name: 'claim',
      text: claimSql,
      values: [queue, spec.k, holder],
    });
    if (rows.length === 0) return false;
    if (mode === 'workflow') {
      await Promise.all(
        rows.map(async ({ step }) => {
          hooks.onStep(step);
          if (step === 'c') hooks.onWorkflowDone();
        }),
      );
    } else {
      await Promise.all(rows.map(async ({ input }) => hooks.onJob(input)));
    }
    const result = await client.query<{ settled: number }>({
      name: 'complete',
      text: complete,
      values: [rows.map((row) => row.id), rows.map((row) => row.lease_epoch), holder],
    });
    const settled = result.rows[0]?.settled ?? 0;
    if (settled !== rows.length) {
      // R7: a stale writer changes nothing; say so (verify will count the leftovers).
      console.error(`spec floor: ${rows.length - settled} completions lost their lease`);
    }
    return true;
  });
}
