/**
 * `pnpm bench:event-floor [--waiting 10000] [--rounds 3]`: the floor the contract allows for a
 * send (R37–R39), beside the engine's send and submit in the same run. A send must store the
 * event, complete every task waiting for it and write their edges in one transaction, after a
 * lock on (name, key) that a starting wait also takes: without it, a wait that starts while
 * the send runs misses the event. The lock must come before the snapshot the send reads
 * waiters with, so in plain SQL a send is at least BEGIN, the lock, one statement, COMMIT.
 *
 * The floors write what this workload's sends must write and nothing else (one-step workflows:
 * the event row, the delivery, the task and the workflow with their two edges) with no decision
 * at all, so no real send can be cheaper:
 * - `sql`: BEGIN; lock; one statement; COMMIT (four round trips);
 * - `function`: the same in a plpgsql function (one round trip), the only way to fewer;
 * all prepared, as the engine's statements are.
 * - `sql batch`: 1,000 events a transaction: BEGIN; the sorted locks; one statement; COMMIT.
 * Every floor send must complete its wait; the counts are checked at the end.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createEngine, type Engine } from '@causeway/engine';
import { defineWorkflow, step, workflow } from '@causeway/workflow';
import pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { now, parallelFor } from './clock';
import { checkpoint, startServer } from './server';

const { values } = parseArgs({
  options: {
    waiting: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    senders: { type: 'string', default: '10' },
    batch: { type: 'string', default: '1000' },
  },
});
const waiting = Number(values.waiting);
const rounds = Number(values.rounds);
const senders = Number(values.senders);
const batch = Number(values.batch);

const awaited = workflow({ name: 'bench-awaited', input: z.object({ id: z.string() }) })
  .event('approval', { name: 'bench.approved', key: (ctx) => ctx.input.id, timeoutMs: 86_400_000 })
  .build();
const job = defineWorkflow({
  name: 'bench-job',
  input: z.object({ i: z.number() }),
  steps: { work: step({ run: () => null }) },
});

/** The floor's one statement: every write a one-step workflow's send must make, undecided. */
const floorStatement = `
with sent as (
  select * from unnest($1::text[], $2::jsonb[]) as s(key, payload)
), ev as (
  insert into causeway_events (id, name, key, payload, sent_by, received_at)
  select gen_random_uuid(), 'bench.approved', key, payload, 'client', now() from sent
  returning id, key, payload
), t as (
  -- \`= any(array)\`, as the engine writes it: a prepared statement's generic plan then still
  -- probes the waiting index per key instead of hashing every waiting task.
  update causeway_tasks t
     set state = 'succeeded', output = ev.payload, event_name = null, event_key = null,
         wait_since = null, wait_timeout_at = null, updated_at = now()
    from ev
   where t.state = 'waiting' and t.event_name = 'bench.approved'
     and t.event_key = any($1::text[]) and t.event_key = ev.key
  returning t.id, t.workflow_id, t.step, t.attempt, ev.id as event_id
), d as (
  insert into causeway_event_deliveries (event_id, task_id, workflow_id, delivered_at)
  select event_id, id, workflow_id, now() from t
), w as (
  update causeway_workflows w set state = 'succeeded', updated_at = now()
   where w.id = any(array(select workflow_id from t))
  returning w.id
), log as (
  insert into causeway_transitions
    (workflow_id, task_id, step, from_state, to_state, reason, actor, attempt, at, detail)
  select workflow_id, id, step, 'waiting', 'succeeded', 'event_received', 'client', attempt,
         now(), jsonb_build_object('eventId', event_id) from t
  union all
  select id, null, null, 'waiting', 'succeeded', 'event_received', 'client', 0, now(), null
    from w
)
select count(*)::int as completed from t`;

const lockStatement = `select pg_advisory_xact_lock(hashtext('causeway_event'),
  hashtext('bench.approved' || E'\\n' || k)) from unnest($1::text[]) as k order by k`;

const floorFunction = `
create or replace function bench_floor_send(keys text[], payloads jsonb[]) returns int
language plpgsql as $$
declare completed int;
begin
  perform pg_advisory_xact_lock(hashtext('causeway_event'), hashtext('bench.approved' || E'\\n' || k))
     from unnest(keys) as k order by k;
  ${floorStatement.replaceAll('$1', 'keys').replaceAll('$2', 'payloads').replace('as completed', 'into completed')};
  return completed;
end $$`;

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const server = await startServer(repoRoot);

async function parkWaits(engine: Engine, prefix: string, count: number): Promise<string[]> {
  const keys = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (let first = 0; first < count; first += 1_000) {
    await engine.submitMany(
      keys.slice(first, first + 1_000).map((id) => ({ name: 'bench-awaited', input: { id } })),
    );
  }
  return keys;
}

async function floorSend(pool: pg.Pool, keys: string[], payloads: unknown[]): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query({ name: 'floor_lock', text: lockStatement, values: [keys] });
    const { rows } = await client.query({
      name: 'floor_send',
      text: floorStatement,
      values: [keys, payloads.map(String)],
    });
    await client.query('commit');
    return rows[0].completed;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

const rate = (count: number, started: number) => count / ((now() - started) / 1000);
type Row = Record<'submit' | 'send' | 'sql' | 'fn' | 'batched' | 'sqlBatch', number>;
const results: Row[] = [];
for (let round = 1; round <= rounds; round += 1) {
  const name = `bench_event_floor_r${round}`;
  const url = await server.createDatabase(name);
  const engine = createEngine({
    databaseUrl: url,
    workflows: [awaited, job],
    logger: pino({ level: 'silent' }),
    poolSize: senders + 2,
  });
  await engine.migrate();
  const pool = new pg.Pool({ connectionString: url, max: senders });
  await pool.query(floorFunction);
  const sets = {
    send: await parkWaits(engine, 'send', waiting),
    sql: await parkWaits(engine, 'sql', waiting),
    fn: await parkWaits(engine, 'fn', waiting),
    batched: await parkWaits(engine, 'batched', waiting),
    sqlBatch: await parkWaits(engine, 'sqlbatch', waiting),
  };
  await parallelFor(senders, senders, (i) =>
    engine.submit('bench-job', { i: -1 - i }).then(() => {}),
  );
  await checkpoint(pool);
  const row = {} as Row;
  const expectOne = (n: number, what: string) => {
    if (n !== 1) throw new Error(`${what} completed ${n} tasks`);
  };

  let started = now();
  await parallelFor(waiting, senders, (i) => engine.submit('bench-job', { i }).then(() => {}));
  row.submit = rate(waiting, started);
  await checkpoint(pool);

  started = now();
  await parallelFor(waiting, senders, async (i) => {
    const answer = await engine.sendEvent('bench.approved', sets.send[i] as string, { i });
    expectOne(answer.tasks.length, `engine send ${i}`);
  });
  row.send = rate(waiting, started);
  await checkpoint(pool);

  started = now();
  await parallelFor(waiting, senders, async (i) => {
    expectOne(await floorSend(pool, [sets.sql[i] as string], [JSON.stringify({ i })]), 'sql');
  });
  row.sql = rate(waiting, started);
  await checkpoint(pool);

  started = now();
  await parallelFor(waiting, senders, async (i) => {
    const { rows } = await pool.query({
      name: 'floor_function',
      text: 'select bench_floor_send($1, $2) as n',
      values: [[sets.fn[i]], [JSON.stringify({ i })]],
    });
    expectOne(rows[0].n, 'function');
  });
  row.fn = rate(waiting, started);
  await checkpoint(pool);

  started = now();
  for (let first = 0; first < waiting; first += batch) {
    const answers = await engine.sendEvents(
      sets.batched.slice(first, first + batch).map((key, j) => ({
        name: 'bench.approved',
        key,
        payload: { i: first + j },
      })),
    );
    if (answers.some((answer) => answer.tasks.length !== 1)) throw new Error('a batch missed');
  }
  row.batched = rate(waiting, started);
  await checkpoint(pool);

  started = now();
  for (let first = 0; first < waiting; first += batch) {
    const keys = sets.sqlBatch.slice(first, first + batch);
    const n = await floorSend(
      pool,
      keys,
      keys.map((_, j) => JSON.stringify({ i: first + j })),
    );
    if (n !== keys.length) throw new Error(`a floor batch completed ${n} of ${keys.length}`);
  }
  row.sqlBatch = rate(waiting, started);

  const { rows } = await pool.query(
    `select count(*)::int as n from causeway_tasks where step = 'approval' and state = 'succeeded'`,
  );
  if (rows[0].n !== 5 * waiting) throw new Error(`expected ${5 * waiting} completed, ${rows[0].n}`);
  results.push(row);
  const f = (n: number) => n.toFixed(0);
  const x = (n: number) => (n / row.submit).toFixed(2);
  console.log(
    `round ${round}: submit ${f(row.submit)}/s | one by one: engine send ${f(row.send)}/s (${x(row.send)}×), floor sql ${f(row.sql)}/s (${x(row.sql)}×), floor function ${f(row.fn)}/s (${x(row.fn)}×) | batch ${batch}: engine ${f(row.batched)}/s, floor sql ${f(row.sqlBatch)}/s`,
  );
  await pool.end();
  await engine.close();
  await server.dropDatabase(name);
}
const median = (pick: (row: Row) => number) =>
  [...results.map(pick)].sort((a, b) => a - b)[Math.floor(results.length / 2)] as number;
console.log(
  `median over ${rounds} rounds (${waiting} waiting, ${senders} senders, ${server.kind} ${server.version}): ` +
    `engine send ${median((r) => r.send / r.submit).toFixed(2)}× submit, floor sql ${median((r) => r.sql / r.submit).toFixed(2)}×, ` +
    `floor function ${median((r) => r.fn / r.submit).toFixed(2)}×; batched engine ${median((r) => r.batched).toFixed(0)}/s, floor sql ${median((r) => r.sqlBatch).toFixed(0)}/s`,
);
await server.stop();
