/**
 * Random stored states for the one-statement paths' property tests: workflows of a few shapes
 * driven by the pure machine into reachable states, written straight into the tables, plus
 * helpers to run a path in a rolled-back transaction and read what it wrote.
 *
 * The pure machine is used here only to GENERATE reachable states (on purpose: a state no run
 * reaches proves nothing about the engine); every row is written and read back with plain SQL,
 * and the lease columns of a stored claim (R7: holder, epoch, expiry) are this file's own.
 */
import {
  applyTaskEvent,
  createWorkflowRun,
  defineWorkflow,
  step,
  type TaskEvent,
  type WorkflowDefinition,
  type WorkflowRun,
  workflowRegistry,
} from '@causeway/workflow/internal';
import fc from 'fast-check';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import { migrateToLatest } from '../../packages/engine/src/db/migrate';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import type { EventRequest } from '../../packages/engine/src/runtime/decision/event-request';
import { promotesStepDecidedInFull } from '../../packages/engine/src/runtime/step-table';
import { useTestDatabase } from '../helpers/database';
import { codeWorkflows } from './model-workflows';

/** Holder of the leases the tests' own worker holds. */
export const holder = 'fast-path-host/1/boot';
export const hour = 3_600_000;
/** Two roots on one queue, so one claim can lease two tasks of one workflow. */
const twins = defineWorkflow({
  name: 'fast-path-twins',
  input: z.object({ n: z.number().int() }),
  steps: {
    left: step<{ n: number }>({ queue: 'cpu', run: () => ({}) }),
    right: step<{ n: number }>({ queue: 'cpu', run: () => ({}) }),
    join: step<{ n: number }>({ after: ['left', 'right'], queue: 'cpu', run: () => ({}) }),
  },
}) as unknown as WorkflowDefinition;
export const shapes: readonly WorkflowDefinition[] = [...codeWorkflows, twins];
export const definitions = workflowRegistry([...shapes]);
class Rollback extends Error {}

/** Runs `work` in a transaction that is always rolled back, returning what it returned. */
export async function rolledBack<T>(
  db: Kysely<CausewayDatabase>,
  work: (tx: Transaction<CausewayDatabase>) => Promise<T>,
): Promise<T> {
  let result: { value: T } | null = null;
  await db
    .transaction()
    .execute(async (tx) => {
      result = { value: await work(tx) };
      throw new Rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  if (result === null) throw new Error('unreachable');
  return (result as { value: T }).value;
}

const eventKinds = ['claim', 'complete', 'fail', 'fail_fatal', 'cancel', 'expire'] as const;
type EventKind = (typeof eventKinds)[number];

function eventOf(kind: EventKind): TaskEvent {
  const worker = { kind: 'worker', name: 'earlier-worker' } as const;
  switch (kind) {
    case 'claim':
      return { type: 'claim', actor: worker };
    case 'complete':
      return { type: 'complete', actor: worker };
    case 'fail':
      return { type: 'fail', actor: worker, category: 'network', summary: 'reset' };
    case 'fail_fatal':
      return { type: 'fail', actor: worker, category: 'unauthorized', summary: 'no' };
    case 'cancel':
      return { type: 'cancel', actor: { kind: 'client' } };
    case 'expire':
      return { type: 'lease_expired', actor: { kind: 'sweeper', name: 'earlier-sweeper' } };
  }
}

export const workflowSpec = fc.record({
  definition: fc.nat({ max: shapes.length - 1 }),
  /** Steps run to success first, in definition order (so later steps become ready). */
  advance: fc.integer({ min: -3, max: 3 }).map((n) => Math.max(0, n)),
  /** After those, the next step is claimed (by `earlier-worker`, or the tests' `holder`). */
  claimNext: fc.boolean(),
  /** And the step after it too, where it is ready (two leased tasks of one workflow). */
  claimSecond: fc.boolean(),
  events: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...eventKinds)), { maxLength: 6 }),
  /** Per task: run_at in the past (ready, mostly) or the future. */
  due: fc.array(
    fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
    { minLength: 4, maxLength: 4 },
  ),
  /** Per task: no deadline (mostly), one ahead, one that passed (rarely). */
  deadline: fc.array(
    fc.integer({ min: 0, max: 11 }).map((n) => (n < 7 ? 'none' : n < 11 ? 'ahead' : 'past')),
    { minLength: 4, maxLength: 4 },
  ),
  /** Stored under a name this engine does not define (another version's, R-rolling deploy). */
  foreign: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  /** Held by another transaction while both claims run (SKIP LOCKED leaves it). */
  busy: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  /** Its leased tasks are held by the tests' own worker (`holder`), else by another. */
  ours: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
  /** Its leases ran out an hour ago. */
  expired: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
});

export type WorkflowSpec = typeof workflowSpec extends fc.Arbitrary<infer T> ? T : never;

/** A reachable run: the machine's own run of a few random events from submission. */
function reachableRun(
  definition: WorkflowDefinition,
  workflowId: string,
  taskIds: readonly string[],
  advance: number,
  claimNext: boolean,
  claimSecond: boolean,
  events: readonly (readonly [number, EventKind])[],
  at: Date,
): WorkflowRun {
  let { run } = createWorkflowRun(definition, { workflowId, taskIds }, at);
  const succeed = run.tasks
    .slice(0, advance)
    .flatMap((task) => [
      [run.tasks.indexOf(task), 'claim'] as const,
      [run.tasks.indexOf(task), 'complete'] as const,
    ]);
  // Then, often, the next step is taken by a worker (the state a result is written in).
  if (claimNext) succeed.push([advance, 'claim'] as const);
  if (claimNext && claimSecond) succeed.push([advance + 1, 'claim'] as const);
  for (const [pick, kind] of [...succeed, ...events]) {
    const task = run.tasks[pick % run.tasks.length];
    if (task === undefined) continue;
    const decided = applyTaskEvent(definition, run, task.taskId, eventOf(kind), {
      now: at,
      random: () => 0.5,
    });
    if (decided.ok) run = decided.run;
  }
  return run;
}

let counter = 0;
/** Distinct run_at values, so "run_at order" is one order. */
const uniqueMs = () => counter++;
const uuid = () => {
  counter += 1;
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, '0')}`;
};

/**
 * Writes the runs straight into empty tables, stamped a day ago (so no stored time is near a
 * path's own). The log stays empty: it is append-only, and the paths run in rolled-back
 * transactions, so only their rows are compared. Returns the workflows to hold locked.
 */
export async function store(
  db: Kysely<CausewayDatabase>,
  specs: readonly WorkflowSpec[],
): Promise<string[]> {
  await sql`truncate causeway_workflows, causeway_tasks cascade`.execute(db);
  const { rows } = await sql<{ now: Date }>`select causeway_now() as now`.execute(db);
  const now = (rows[0] as { now: Date }).now;
  const stored = new Date(now.getTime() - 24 * hour);
  const busy: string[] = [];
  for (const spec of specs) {
    const definition = shapes[spec.definition] as WorkflowDefinition;
    const workflowId = uuid();
    const taskIds = definition.steps.map(() => uuid());
    const run = reachableRun(
      definition,
      workflowId,
      taskIds,
      spec.advance,
      spec.claimNext,
      spec.claimSecond,
      spec.events,
      now,
    );
    if (spec.busy) busy.push(workflowId);
    await sql`insert into causeway_workflows (id, name, state, input, created_at, updated_at)
      values (${workflowId}, ${spec.foreign ? `${definition.name}-v2` : definition.name},
        ${run.state}, ${JSON.stringify({ n: 1 })}::jsonb, ${stored}, ${stored})`.execute(db);
    for (const [index, task] of run.tasks.entries()) {
      const step = definition.steps.find((candidate) => candidate.name === task.step);
      if (step === undefined) throw new Error('unreachable');
      const { snapshot } = task;
      const runAt =
        snapshot.state === 'queued'
          ? new Date(now.getTime() + (spec.due[index] ? -hour : hour) + uniqueMs())
          : snapshot.runAt;
      const deadline = spec.deadline[index];
      const deadlineAt =
        deadline === 'past'
          ? new Date(now.getTime() - hour)
          : deadline === 'ahead'
            ? new Date(now.getTime() + hour)
            : null;
      const holdsLease = snapshot.state === 'leased' || snapshot.state === 'cancel_requested';
      // A waiting event step names its event and its wait (the row's CHECK, R37).
      const waits = snapshot.state === 'waiting' && step.event !== undefined;
      const wait = {
        name: waits ? (step.event?.name ?? null) : null,
        key: waits ? `stored-${task.taskId}` : null,
        since: waits ? stored : null,
        until: waits ? (snapshot.waitTimeoutAt ?? new Date(now.getTime() + hour)) : null,
      };
      await sql`insert into causeway_tasks (id, workflow_id, step, queue, state, attempt,
          max_attempts, replay_count, run_at, deadline_at, lease_holder, lease_epoch,
          lease_expires_at, effect_started, evidence, output, last_error_category, last_error,
          event_name, event_key, wait_since, wait_timeout_at, created_at, updated_at)
        values (${task.taskId}, ${workflowId}, ${task.step}, ${step.queue}, ${snapshot.state},
          ${snapshot.attempt}, ${step.policy.maxAttempts}, ${snapshot.replayCount}, ${runAt},
          ${deadlineAt}, ${holdsLease ? (spec.ours ? holder : 'earlier-worker') : null},
          ${snapshot.attempt},
          ${holdsLease ? new Date(now.getTime() + (spec.expired ? -hour : hour)) : null},
          ${snapshot.effectStarted},
          ${snapshot.evidence},
          ${snapshot.state === 'succeeded' ? JSON.stringify({ from: task.step }) : null}::jsonb,
          ${snapshot.lastErrorCategory}, ${snapshot.lastError}, ${wait.name}, ${wait.key},
          ${wait.since}, ${wait.until}, ${stored}, ${stored})`.execute(db);
    }
  }
  return busy;
}

/** Every row a path may have touched, its times written by `stamp` (the path's own time differs per run). */
export async function rowsAfter(tx: Transaction<CausewayDatabase>, stamp: (value: Date) => string) {
  const plain = (rows: Record<string, unknown>[]) =>
    rows.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [k, v instanceof Date ? stamp(v) : v]),
      ),
    );
  const tasks = await sql<
    Record<string, unknown>
  >`select * from causeway_tasks order by id`.execute(tx);
  const workflows = await sql<
    Record<string, unknown>
  >`select * from causeway_workflows order by id`.execute(tx);
  const log = await sql<Record<string, unknown>>`
    select workflow_id, task_id, step, from_state, to_state, reason, error_category,
      error_summary, actor, attempt, at, detail
    from causeway_transitions order by id`.execute(tx);
  return { tasks: plain(tasks.rows), workflows: plain(workflows.rows), log: plain(log.rows) };
}

/** Times the paths write (now, or a retry a little after it) read NOW; stored ones are hours away and read as themselves. */
export const settleStamp = (value: Date) =>
  Math.abs(value.getTime() - Date.now()) < 10 * 60_000 ? 'NOW' : value.toISOString();

/** An outcome or rows with their times stamped, for comparison. */
export function plainOutcome(value: unknown): unknown {
  if (value instanceof Date) return settleStamp(value);
  // Times inside a log row's detail (a retry's run_at) are ISO strings.
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(value)) {
    return settleStamp(new Date(value));
  }
  if (Array.isArray(value)) return value.map(plainOutcome);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainOutcome(v)]));
  }
  return value;
}

/**
 * The result a worker sends for a task it holds (as `holder`): a completion with an output, or
 * a transient failure; its fence the stored epoch, or with `staleEpoch` the next (a lease lost
 * and taken again). As the worker asks, a step that may ready a delayed or an event step is
 * decided in full (the one statement promotes only to queued, now).
 */
export function workerResult(
  task: { readonly id: string; readonly workflow_id: string; readonly lease_epoch: string },
  stored: { readonly name: string; readonly step: string },
  result: { readonly fails: boolean; readonly staleEpoch: boolean; readonly output: unknown },
): EventRequest {
  const actor = { kind: 'worker', name: holder } as const;
  const event: TaskEvent = result.fails
    ? { type: 'fail', actor, category: 'network', summary: 'reset' }
    : { type: 'complete', actor };
  const definition = definitions.get(stored.name);
  return {
    taskId: task.id,
    workflowId: task.workflow_id,
    event,
    fence: {
      taskId: task.id,
      holder,
      epoch: Number(task.lease_epoch) + (result.staleEpoch ? 1 : 0),
    },
    ...(result.fails ? {} : { extra: { outputJson: JSON.stringify(result.output) } }),
    ...(definition !== undefined && promotesStepDecidedInFull(definition, stored.step)
      ? { decideInFull: true as const }
      : {}),
  };
}

/** Steps a step runs after, directly or not (written here again, as the test's own oracle). */
export function upstreamOf(definition: WorkflowDefinition, name: string): Set<string> {
  const found = new Set<string>();
  const pending = [name];
  while (pending.length > 0) {
    const stepName = pending.pop();
    const current = definition.steps.find((candidate) => candidate.name === stepName);
    for (const upstream of current?.after ?? []) {
      if (!found.has(upstream)) pending.push(upstream);
      found.add(upstream);
    }
  }
  return found;
}

/** Holds row locks on `workflowIds` from another connection while `work` runs. */
export async function whileHeld<T>(
  pool: pg.Pool,
  workflowIds: readonly string[],
  work: () => Promise<T>,
): Promise<T> {
  if (workflowIds.length === 0) return work();
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select id from causeway_workflows where id = any($1) for update', [
      workflowIds,
    ]);
    return await work();
  } finally {
    await client.query('rollback');
    client.release();
  }
}

/**
 * This file's database, migrated, with a pool and a Kysely instance on it: call at the top
 * level of a test file; the getter works inside tests.
 */
export function useStoredRunsDatabase(): () => {
  pool: pg.Pool;
  db: Kysely<CausewayDatabase>;
} {
  const database = useTestDatabase();
  let opened: { pool: pg.Pool; db: Kysely<CausewayDatabase> } | null = null;
  beforeAll(async () => {
    const pool = new pg.Pool({ connectionString: database().url, max: 4 });
    const db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
    await migrateToLatest(db);
    opened = { pool, db };
  });
  afterAll(async () => {
    await opened?.db.destroy();
  });
  return () => {
    if (opened === null) throw new Error('the database is not ready; use it inside a test');
    return opened;
  };
}
