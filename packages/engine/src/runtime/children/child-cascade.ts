import {
  type ChildOutcome,
  type ChildTally,
  childrenVerdict,
  workflowResultOf,
} from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { childResultsRead } from '../../db/children/child-results';
import { childTallyWrite } from '../../db/children/child-tally-write';
import { childrenOfSteps } from '../../db/children/children-of-steps';
import type { ChildTallyRecord, TaskRecord } from '../../db/rows';
import type { CausewayDatabase } from '../../db/schema';
import { workflowLockWithTasks } from '../../db/settle/workflow-lock';
import {
  type ChildChange,
  type ChildWork,
  type DecideOnce,
  hasChildWork,
  noChildWork,
  outcomeClass,
} from '../decision/child-effects';
import type { ApplyContext, EventRequest } from '../decision/event-request';
import { childReplaysApply } from './child-replays';
import { leftoverCancelsRestart } from './leftover-cancels';

/** A step whose tally a round moves: by how much, or recounted (a replay). */
interface TallyCheck {
  readonly workflowId: string;
  succeeded: number;
  failed: number;
}

/** Rounds after which a cascade is taken for a loop: deeper than any tree (R48) allows. */
const maxRounds = 1_000;

/**
 * Follows what a decision's edges ask of children, in the same transaction, until nothing
 * more moves (R43–R47): children written, unfinished children of a stopped step asked to
 * cancel, children of a replayed step replayed or started again (and the stragglers its
 * failure cancelled, as they end), and steps whose children changed counted and settled when
 * their tally decides them (R45). Each round locks the workflows it decides for and makes one
 * decision, which may ask for more: a child's end settles its parent step, whose workflow's
 * end settles the grandparent's, and a failed step's cancels reach its children's children.
 */
export async function followChildren(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  first: ChildWork,
  decide: DecideOnce,
): Promise<void> {
  let work = first;
  for (let round = 0; hasChildWork(work); round++) {
    if (round >= maxRounds) throw new Error('child workflows kept deciding each other');
    const next: ChildWork[] = [];
    const checks = new Map<string, TallyCheck>();
    if (work.starts.length > 0) {
      if (context.writeChildren === undefined) {
        throw new Error('this engine context cannot write child workflows');
      }
      await context.writeChildren(tx, work.starts);
      // No children to wait for: the step settles at once (an empty map succeeds with []).
      for (const start of work.starts) {
        if (!start.detached && start.children.length === 0) {
          checks.set(start.parentTaskId, {
            workflowId: start.parentWorkflowId,
            succeeded: 0,
            failed: 0,
          });
        }
      }
    }
    if (work.replays.length > 0) {
      next.push(await childReplaysApply(tx, context, work.replays, decide));
      for (const replay of work.replays) {
        checks.set(replay.parentTaskId, {
          workflowId: replay.parentWorkflowId,
          succeeded: 0,
          failed: 0,
        });
      }
    }
    if (work.cancels.length > 0)
      next.push(await childrenCancel(tx, work.cancels, decide, context.definitions));
    // A replayed step's tally was counted anew after this round's changes: they are in it.
    const recounted = new Set(work.replays.map((replay) => replay.parentTaskId));
    const changes = work.changes.filter((change) => !recounted.has(change.parentTaskId));
    // A straggler its step's failure cancelled, ending after the step's replay, starts again
    // in its place rather than count as a failure (R47).
    const restarted = await leftoverCancelsRestart(tx, context, changes);
    for (const change of changes) if (!restarted.has(change)) addChange(checks, change);
    for (const recheck of work.rechecks ?? []) {
      if (!checks.has(recheck.parentTaskId)) {
        checks.set(recheck.parentTaskId, {
          workflowId: recheck.parentWorkflowId,
          succeeded: 0,
          failed: 0,
        });
      }
    }
    if (checks.size > 0) next.push(await stepsSettle(tx, checks, decide, context));
    work = mergeWork(next);
  }
}

function addChange(checks: Map<string, TallyCheck>, change: ChildChange): void {
  const check = checks.get(change.parentTaskId) ?? {
    workflowId: change.parentWorkflowId,
    succeeded: 0,
    failed: 0,
  };
  const from = outcomeClass(change.from);
  const to = outcomeClass(change.to);
  check.succeeded += (to === 'succeeded' ? 1 : 0) - (from === 'succeeded' ? 1 : 0);
  check.failed += (to === 'failed' ? 1 : 0) - (from === 'failed' ? 1 : 0);
  checks.set(change.parentTaskId, check);
}

function mergeWork(works: readonly ChildWork[]): ChildWork {
  if (works.length === 0) return noChildWork;
  return {
    starts: works.flatMap((work) => work.starts),
    cancels: works.flatMap((work) => work.cancels),
    replays: works.flatMap((work) => work.replays),
    changes: works.flatMap((work) => work.changes),
  };
}

/** The unfinished children of stopped steps asked to cancel, each by its parent step (R45, R46). */
async function childrenCancel(
  tx: Transaction<CausewayDatabase>,
  cancels: ChildWork['cancels'],
  decide: DecideOnce,
  definitions: ApplyContext['definitions'],
): Promise<ChildWork> {
  const reasonOf = new Map(cancels.map((cancel) => [cancel.parentTaskId, cancel.reason]));
  // A child of a workflow this engine does not define (another version's, R54) is left to it.
  const children = (await childrenOfSteps(tx, [...reasonOf.keys()], { unfinished: true })).filter(
    (child) => definitions.at(child.name, child.version) !== undefined,
  );
  if (children.length === 0) return noChildWork;
  const loaded = await workflowLockWithTasks(
    tx,
    children.map((child) => child.id),
    { skipLocked: false },
  );
  return decide(loaded, [], {
    workflowCancels: children.map((child) => ({
      workflowId: child.id,
      actor: { kind: 'parent', name: child.parentTaskId },
      reason: reasonOf.get(child.parentTaskId),
    })),
  });
}

/**
 * Moves the tallies of steps whose children changed, under their workflows' locks (so the
 * last child's edge always sees every other), and settles each step its tally now decides.
 */
async function stepsSettle(
  tx: Transaction<CausewayDatabase>,
  checks: ReadonlyMap<string, TallyCheck>,
  decide: DecideOnce,
  context: ApplyContext,
): Promise<ChildWork> {
  const workflowIds = [...new Set([...checks.values()].map((check) => check.workflowId))];
  const loaded = await workflowLockWithTasks(tx, workflowIds, { skipLocked: false });
  const tallies: ({ taskId: string } & ChildTallyRecord)[] = [];
  const requests: EventRequest[] = [];
  for (const task of loaded.tasks) {
    const check = checks.get(task.id);
    if (check === undefined || task.children === null) continue;
    const tally: ChildTallyRecord = {
      ...task.children,
      succeeded: task.children.succeeded + check.succeeded,
      failed: task.children.failed + check.failed,
    };
    if (check.succeeded !== 0 || check.failed !== 0) tallies.push({ taskId: task.id, ...tally });
    const request = await settleRequest(tx, context, task, tally);
    if (request !== null) requests.push(request);
  }
  await childTallyWrite(tx, tallies);
  if (requests.length === 0) return noChildWork;
  return decide(loaded, requests, {});
}

/** The `children_changed` event for a step its tally decides, with its output; else null. */
async function settleRequest(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  task: TaskRecord,
  record: ChildTallyRecord,
): Promise<EventRequest | null> {
  if (task.state !== 'awaiting_children' && task.state !== 'cancel_requested') return null;
  const tally: ChildTally = {
    total: record.total,
    succeeded: record.succeeded,
    failed: record.failed,
    open: record.total - record.succeeded - record.failed,
    allowedFailures: record.allowedFailures,
  };
  const verdict = childrenVerdict(tally, task.state === 'cancel_requested');
  if (verdict === null) return null;
  const succeeds = verdict === 'succeeded' || verdict === 'cancel_after_submit';
  return {
    taskId: task.id,
    workflowId: task.workflowId,
    event: { type: 'children_changed', actor: { kind: 'system' }, tally },
    ...(succeeds
      ? { extra: { outputJson: await stepOutputJson(tx, context, task.id, record) } }
      : {}),
  };
}

/**
 * A settled step's output (R45): its children in input order, each one's result, or with a
 * tolerance each one's outcome; a `startChild` step's output is its one child's result.
 */
async function stepOutputJson(
  tx: Transaction<CausewayDatabase>,
  context: ApplyContext,
  taskId: string,
  record: ChildTallyRecord,
): Promise<string> {
  const rows = await childResultsRead(tx, taskId);
  const results = rows.map((row) => {
    const definition = context.definitions.at(row.name, row.version);
    return row.state !== 'succeeded'
      ? undefined
      : definition === undefined
        ? row.outputs
        : workflowResultOf(definition, (step) => row.outputs[step] ?? null);
  });
  if (record.output === 'single') return JSON.stringify(results[0] ?? null);
  if (record.output === 'result') return JSON.stringify(results.map((result) => result ?? null));
  const outcomes = rows.map(
    (row, index): ChildOutcome => ({
      workflowId: row.id,
      state: row.state as ChildOutcome['state'],
      ...(row.state === 'succeeded' ? { result: results[index] ?? null } : {}),
      ...(row.reason === null ? {} : { reason: row.reason }),
    }),
  );
  return JSON.stringify(outcomes);
}
