/**
 * The one-statement claim (`taskClaimFast`) against the machine's full claim (`claimTasks`):
 * on random stored states, reached by driving the pure machine, both run in a rolled-back
 * transaction over the same rows, and must lease the same tasks in the same order, leave the
 * same task and workflow rows and append the same log rows. Where the statement may not
 * decide (a candidate past its deadline), it must write nothing, and the full claim must be
 * the one that finalizes that deadline.
 */
import {
  applyTaskEvent,
  createWorkflowRun,
  defineWorkflow,
  deriveClaimOutcomes,
  step,
  type TaskEvent,
  type WorkflowDefinition,
  type WorkflowRun,
  workflowRegistry,
} from '@causeway/workflow';
import fc from 'fast-check';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { migrateToLatest } from '../../packages/engine/src/db/migrate';
import type { CausewayDatabase } from '../../packages/engine/src/db/schema';
import { taskClaimFast } from '../../packages/engine/src/db/store';
import { claimTasks } from '../../packages/engine/src/runtime/apply-events';
import { fastClaimPlan } from '../../packages/engine/src/runtime/claim';
import { useTestDatabase } from '../helpers/database';
import { modelWorkflows } from './model-workflows';

const database = useTestDatabase();
const leaseMs = 30_000;
const holder = 'fast-path-host/1/boot';
const hour = 3_600_000;
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
const shapes: readonly WorkflowDefinition[] = [...modelWorkflows, twins];
const definitions = workflowRegistry([...shapes]);
const apply = { definitions, leaseMs, random: () => 0.5 };

let pool: pg.Pool;
let db: Kysely<CausewayDatabase>;
beforeAll(async () => {
  pool = new pg.Pool({ connectionString: database().url, max: 4 });
  db = new Kysely<CausewayDatabase>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db);
});
afterAll(async () => {
  await db?.destroy();
});

class Rollback extends Error {}

/** Runs `work` in a transaction that is always rolled back, returning what it returned. */
async function rolledBack<T>(work: (tx: Transaction<CausewayDatabase>) => Promise<T>): Promise<T> {
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

const workflowSpec = fc.record({
  definition: fc.nat({ max: shapes.length - 1 }),
  /** Steps run to success first, in definition order (so later steps become ready). */
  advance: fc.integer({ min: -3, max: 3 }).map((n) => Math.max(0, n)),
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
});

type WorkflowSpec = typeof workflowSpec extends fc.Arbitrary<infer T> ? T : never;

/** A reachable run: the machine's own run of a few random events from submission. */
function reachableRun(
  definition: WorkflowDefinition,
  workflowId: string,
  taskIds: readonly string[],
  advance: number,
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

/** Writes the runs straight into empty tables. The log stays empty (it is append-only, and both claims roll back): only the claims' rows are compared. */
async function store(specs: readonly WorkflowSpec[]): Promise<string[]> {
  await sql`truncate causeway_workflows, causeway_tasks cascade`.execute(db);
  const { rows } = await sql<{ now: Date }>`select causeway_now() as now`.execute(db);
  const now = (rows[0] as { now: Date }).now;
  const busy: string[] = [];
  for (const spec of specs) {
    const definition = shapes[spec.definition] as WorkflowDefinition;
    const workflowId = uuid();
    const taskIds = definition.steps.map(() => uuid());
    const run = reachableRun(definition, workflowId, taskIds, spec.advance, spec.events, now);
    if (spec.busy) busy.push(workflowId);
    await sql`insert into causeway_workflows (id, name, state, input, created_at, updated_at)
      values (${workflowId}, ${spec.foreign ? `${definition.name}-v2` : definition.name},
        ${run.state}, ${JSON.stringify({ n: 1 })}::jsonb, ${now}, ${now})`.execute(db);
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
      await sql`insert into causeway_tasks (id, workflow_id, step, queue, state, attempt,
          max_attempts, replay_count, run_at, deadline_at, lease_holder, lease_epoch,
          lease_expires_at, effect_started, evidence, output, last_error_category, last_error,
          created_at, updated_at)
        values (${task.taskId}, ${workflowId}, ${task.step}, ${step.queue}, ${snapshot.state},
          ${snapshot.attempt}, ${step.policy.maxAttempts}, ${snapshot.replayCount}, ${runAt},
          ${deadlineAt}, ${holdsLease ? 'earlier-worker' : null}, ${snapshot.attempt},
          ${holdsLease ? new Date(now.getTime() + hour) : null}, ${snapshot.effectStarted},
          ${snapshot.evidence},
          ${snapshot.state === 'succeeded' ? JSON.stringify({ from: task.step }) : null}::jsonb,
          ${snapshot.lastErrorCategory}, ${snapshot.lastError}, ${now}, ${now})`.execute(db);
    }
  }
  return busy;
}

/** Every row the claim may have touched, with its own time written as NOW (it differs per run). */
async function rowsAfter(tx: Transaction<CausewayDatabase>, claimNow: Date) {
  const stamp = (value: unknown): unknown => {
    if (!(value instanceof Date)) return value;
    const offset = value.getTime() - claimNow.getTime();
    return offset === 0 || offset === leaseMs ? `NOW+${offset}` : value.toISOString();
  };
  const plain = (rows: Record<string, unknown>[]) =>
    rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, stamp(v)])));
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

/** Steps a step runs after, directly or not (written here again, as the test's own oracle). */
function upstreamOf(definition: WorkflowDefinition, name: string): Set<string> {
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
async function whileHeld<T>(workflowIds: readonly string[], work: () => Promise<T>): Promise<T> {
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

describe('the one-statement claim', () => {
  it('derives its table from the machine: parents queued and running go to running', () => {
    const outcomes = deriveClaimOutcomes();
    expect(outcomes?.to).toBe('leased');
    expect(outcomes?.reason).toBe('lease_acquired');
    expect(outcomes?.attemptIncrement).toBe(1);
    expect(Object.fromEntries(outcomes?.parentAfter ?? [])).toEqual({
      queued: 'running',
      running: 'running',
      cancel_requested: 'cancel_requested',
      dead: 'dead',
    });
  });

  it('leases what the full claim leases, and writes the same rows and log, on random states', async () => {
    let decidedRuns = 0;
    let deferredRuns = 0;
    let leasedTotal = 0;
    let twoInOneWorkflow = 0;
    let withUpstream = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(workflowSpec, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom('cpu', 'net'),
        async (specs, limit, queue) => {
          const busy = await store(specs);
          const request = { queue, limit, holder };
          const { full, fast } = await whileHeld(busy, async () => ({
            full: await rolledBack(async (tx) => {
              const result = await claimTasks(tx, apply, request);
              return { result, rows: await rowsAfter(tx, result.now) };
            }),
            fast: await rolledBack(async (tx) => {
              const plan = fastClaimPlan(apply, request);
              if (plan === null) throw new Error("the machine's claim should be expressible");
              const result = await taskClaimFast(tx, plan);
              return { result, rows: await rowsAfter(tx, result.now) };
            }),
          }));
          const fullLeased = full.result.outcomes.flatMap((outcome) =>
            outcome.kind === 'applied' && outcome.edge.to === 'leased' ? [outcome.taskId] : [],
          );
          const fullFinalized = full.result.outcomes.some(
            (outcome) =>
              outcome.kind === 'applied' &&
              outcome.edge.reason === 'deadline_exceeded_before_start',
          );
          // The full claim cannot count skipped candidates when it locked no workflow at all
          // (its statement returns no row); the one statement always can.
          if (full.result.tasks.size > 0) expect(fast.result.skipped).toBe(full.result.skipped);
          if (!fast.result.decided) {
            deferredRuns += 1;
            // It defers only for what the machine decides otherwise, and then writes nothing.
            expect(fullFinalized).toBe(true);
            expect(fast.result.claimed).toEqual([]);
            expect(fast.rows.log).toEqual([]);
            return;
          }
          decidedRuns += 1;
          leasedTotal += fullLeased.length;
          const workflowsLeased = new Set(fast.result.claimed.map((row) => row.task.workflowId))
            .size;
          if (workflowsLeased < fast.result.claimed.length) twoInOneWorkflow += 1;
          expect(fullFinalized).toBe(false);
          expect(fast.result.claimed.map((row) => row.task.id)).toEqual(fullLeased);
          // Each leased task reads its upstream steps' outputs, as the full claim loaded them.
          for (const row of fast.result.claimed) {
            const definition = definitions.get(row.workflowName) as WorkflowDefinition;
            const upstream = upstreamOf(definition, row.task.step);
            const expected = Object.fromEntries(
              [...full.result.tasks.values()]
                .filter((task) => task.workflowId === row.task.workflowId)
                .filter((task) => upstream.has(task.step))
                .map((task) => [task.step, task.output]),
            );
            expect(row.outputs).toEqual(expected);
            if (upstream.size > 0) withUpstream += 1;
          }
          expect(fast.rows).toEqual(full.rows);
        },
      ),
      { numRuns: 300 },
    );
    console.info(
      `[claim-fast-path] decided ${decidedRuns} runs (${leasedTotal} leases, ${withUpstream} reading upstream outputs; ${twoInOneWorkflow} with two of one workflow), deferred ${deferredRuns}`,
    );
    // The generator must reach both branches, or the property proves less than it says.
    expect(decidedRuns).toBeGreaterThan(100);
    expect(deferredRuns).toBeGreaterThan(3);
    expect(leasedTotal).toBeGreaterThan(120);
    expect(twoInOneWorkflow).toBeGreaterThan(3);
    expect(withUpstream).toBeGreaterThan(20);
  }, 120_000);
});
