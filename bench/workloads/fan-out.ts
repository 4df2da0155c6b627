import type pg from 'pg';
import { drainSpan, epochMsSql } from '../causeway-log';
import { now } from '../clock';
import { watchParent } from '../parent-watch';
import { checkpoint } from '../server';
import { go, spawnWorkers, stopWorkers, waitForHandlers } from '../workers';
import { type Measurement, type RunContext, waitForDatabase } from './context';

/**
 * W6 (Causeway only): one workflow whose single step starts `n` children, each a one-step
 * no-op workflow like W2's, drained by `procs` worker processes. The parent is submitted
 * untimed (then CHECKPOINT); from "go" a watch on its own connection looks for the step's
 * commit every millisecond and samples lock waits every 5 ms until the parent is seen
 * succeeded. The figures come from the transition log (database time; an edge's `at` is its
 * transaction's start): the step's `lease_acquired` → `children_started`; that transaction
 * from its start to the first sample that saw its children (an upper bound of its duration);
 * the children's drain from the first child's `lease_acquired` to the last child's end; and
 * the parent's settle, `children_succeeded` − the last child's end in the log, and the first
 * sample that saw the parent succeeded − the last child's end.
 */
const settleGraceMs = 30_000;

export async function runFanOut(context: RunContext): Promise<Measurement> {
  const { system, pool, n } = context;
  if (context.spec.kind !== 'causeway') throw new Error('w6 measures Causeway only');
  const producer = await system.producer(context.url, 1, 'job');
  if (producer.submitFanOut === undefined) {
    throw new Error(`${system.label} cannot start child workflows`);
  }
  const parentId = await producer.submitFanOut(n);
  await producer.close();
  // No ANALYZE: statistics taken while the tables hold one workflow would tell the planner
  // they stay that small; never analyzed, it estimates from their size on disk.
  await checkpoint(pool);

  const workers = spawnWorkers(
    { spec: context.spec, url: context.url, mode: 'job' },
    context.procs,
  );
  await Promise.all(workers.map((worker) => worker.ready));
  const started = now();
  const deadline = started + context.timeoutMs;
  const watch = watchParent(context.url, parentId, deadline);
  go(workers);
  const handlerError = await waitForHandlers(workers, n, deadline);
  const done = handlerError
    ? { at: now(), error: handlerError }
    : await waitForDatabase(context, 'job', n, deadline);
  // The parent settles in the last child's transaction: once every child is done it is
  // seen at once, or it will not be.
  const grace = setTimeout(() => watch.stop(), done.error === null ? settleGraceMs : 0);
  const seen = await watch.done;
  clearTimeout(grace);
  const elapsedMs = now() - started;
  const finals = await stopWorkers(workers);
  const handled = finals.reduce((sum, final) => sum + (final?.count ?? 0), 0);

  const verification = await system.verify(pool, 'job', { workflows: n, finished: n });
  const parent = await parentRecord(pool, parentId);
  const drain = await drainSpan(pool, { parentId });
  const problems = [...verification.problems, ...parentProblems(parent, n)];
  if (done.error !== null) problems.push(done.error);
  if (handled !== n) problems.push(`handlers saw ${handled} of ${n}`);
  if (drain.ends !== n) problems.push(`the log ends ${drain.ends} children, expected ${n}`);
  if (Number.isNaN(seen.doneSeenAt)) problems.push('the parent was not seen succeeded');
  return {
    metric: 'children/s',
    value: drain.workflowsPerS,
    elapsedMs,
    parentId,
    /** The step's claim to the start of the transaction that writes its children. */
    stepToStartMs: parent.startedAt - parent.leasedAt,
    /** That transaction's start to the first sample that saw its children committed. */
    commitMs: seen.stepSeenAt - parent.startedAt,
    /** That transaction's start to the first child's claim (another upper bound). */
    firstChildLeaseMs: drain.firstLeaseAt - parent.startedAt,
    drainMs: drain.lastEndAt - drain.firstLeaseAt,
    /** `children_succeeded` − the last child's end, both in the log. */
    settleLogMs: parent.settledAt - drain.lastEndAt,
    /** The first sample that saw the parent succeeded − the last child's end. */
    settleSeenMs: seen.doneSeenAt - drain.lastEndAt,
    lockWaits: seen.lockWaits,
    perProcess: finals.map((final) => final?.count ?? null),
    stalls: finals.map((final) => final?.stalls ?? []),
    verified: problems.length === 0,
    problems,
    checks: { ...verification.checks, ...parent.checks },
  };
}

interface ParentRecord {
  readonly leasedAt: number;
  readonly startedAt: number;
  readonly settledAt: number;
  readonly checks: Readonly<Record<string, number | string | null>>;
}

/** The parent's step edges (epoch ms) and what it should show once its children are done. */
async function parentRecord(pool: pg.Pool, parentId: string): Promise<ParentRecord> {
  const { rows } = await pool.query(
    `select w.state as "parentState", t.state as "stepState",
            t.children_total as "childrenTotal", t.children_succeeded as "childrenSucceeded",
            t.children_failed as "childrenFailed",
            jsonb_array_length(t.output) as "outputLength",
            (select count(*) from causeway_workflows as c
              where c.parent_task_id = t.id and c.state = 'succeeded')::int as "childrenDone",
            (select count(*) from causeway_transitions as tr
              where tr.workflow_id = w.id and tr.task_id = t.id
                and tr.reason = 'children_started')::int as "startEdges",
            (select count(*) from causeway_transitions as tr
              where tr.workflow_id = w.id and tr.task_id = t.id
                and tr.reason = 'children_succeeded')::int as "settleEdges",
            (select ${epochMsSql('min(tr.at)')} from causeway_transitions as tr
              where tr.workflow_id = w.id and tr.task_id = t.id
                and tr.reason = 'lease_acquired') as "leasedAt",
            (select ${epochMsSql('min(tr.at)')} from causeway_transitions as tr
              where tr.workflow_id = w.id and tr.task_id = t.id
                and tr.reason = 'children_started') as "startedAt",
            (select ${epochMsSql('min(tr.at)')} from causeway_transitions as tr
              where tr.workflow_id = w.id and tr.task_id = t.id
                and tr.reason = 'children_succeeded') as "settledAt"
       from causeway_workflows as w join causeway_tasks as t on t.workflow_id = w.id
      where w.id = $1::uuid`,
    [parentId],
  );
  const row = rows[0];
  if (row === undefined) throw new Error(`the parent workflow ${parentId} has no step`);
  const { leasedAt, startedAt, settledAt, ...checks } = row;
  const time = (value: number | null) => value ?? Number.NaN;
  return {
    leasedAt: time(leasedAt),
    startedAt: time(startedAt),
    settledAt: time(settledAt),
    checks,
  };
}

/**
 * R43–R45 as the parent shows them: it succeeded, its step started the children once and
 * settled once, every child counted exactly once, its output one entry per child.
 */
function parentProblems(parent: ParentRecord, n: number): string[] {
  const want: Record<string, number | string> = {
    parentState: 'succeeded',
    stepState: 'succeeded',
    childrenTotal: n,
    childrenSucceeded: n,
    childrenFailed: 0,
    childrenDone: n,
    outputLength: n,
    startEdges: 1,
    settleEdges: 1,
  };
  return Object.entries(want)
    .filter(([key, value]) => parent.checks[key] !== value)
    .map(([key, value]) => `parent ${key}: ${parent.checks[key]}, expected ${value}`);
}
