import type { RateLimit, WorkflowRegistry } from '@causeway/workflow/internal';
import type { Transaction } from 'kysely';
import { childTallyWrite } from '../../db/children/child-tally-write';
import type { CausewayDatabase } from '../../db/schema';
import { taskTraceParents } from '../../db/tracing/trace-contexts';
import type { ApplyContext } from '../decision/event-request';
import { insertPlan, planSubmission } from '../operations/submit';
import { tracerRegistered } from '../tracing/trace-context';
import type { ChildStart } from './child-admission';

/**
 * Writes children in the transaction of the edge that starts them (R43): their workflows,
 * tasks and `submitted` edges (actor `parent:<task id>`) in one insert, and the tally of each
 * awaiting step. A child whose key exists would be a second set: refused, so nothing is
 * written. Children are accepted work of their parent: queue caps do not refuse them.
 */
export async function childStartsWrite(
  tx: Transaction<CausewayDatabase>,
  apply: ApplyContext,
  starts: readonly ChildStart[],
): Promise<void> {
  const prepared = (await withParentTraces(tx, starts)).flatMap((start) => start.children);
  if (prepared.length > 0) {
    // One start planned ahead (a worker's `startChildren`) is written as planned.
    const planned = starts.length === 1 ? starts[0]?.planned : undefined;
    const plan = planned?.plan ?? planSubmission(prepared, { delayMs: 0, runAt: null });
    const answers = await insertPlan(
      tx,
      { db: tx, definitions: apply.definitions, queueLimits: new Map(), apply },
      plan,
      [],
      undefined,
      planned?.insert,
    );
    const repeated = answers.find((answer) => answer.deduplicated);
    if (repeated !== undefined) {
      throw new Error(
        `child workflow ${repeated.workflow.id} already exists: a step never starts a second set`,
      );
    }
  }
  await childTallyWrite(
    tx,
    starts
      .filter((start) => !start.detached && start.restart !== true)
      .map((start) => ({
        taskId: start.parentTaskId,
        total: start.children.length,
        succeeded: 0,
        failed: 0,
        allowedFailures: start.allowedFailures,
        output: start.output,
      })),
  );
}

/**
 * The starts with the trace context each map step's children store (R57): their parent
 * workflow's, so a fan-out's children sit in the trace of their parent's submit, under its
 * span, as the parent's own first attempts do. A parent, not a link: the children are the
 * submit's work as much as the step that lists them. Not after an operator's replay of the
 * step (its task's replay count, written before its children): a replay's children store
 * none, as a replay's attempts start traces of their own. Read only with a tracer registered:
 * without one the engine stores no context (the submit and the attempts store none either).
 */
async function withParentTraces(
  tx: Transaction<CausewayDatabase>,
  starts: readonly ChildStart[],
): Promise<readonly ChildStart[]> {
  const mapped = starts.filter((start) => start.parentTrace === true);
  if (mapped.length === 0 || !tracerRegistered()) return starts;
  const parents = await taskTraceParents(
    tx,
    mapped.map((start) => start.parentTaskId),
  );
  return starts.map((start) => {
    const parent = start.parentTrace === true ? parents.get(start.parentTaskId) : undefined;
    if (parent === undefined || parent.replayCount > 0) return start;
    const traceContext = parent.carrier;
    return { ...start, children: start.children.map((child) => ({ ...child, traceContext })) };
  });
}

/** The decisions' context of an engine: its definitions and lease, and how it writes children. */
export function applyContextOf(
  definitions: WorkflowRegistry,
  leaseMs: number,
  rateLimits: readonly RateLimit[] = [],
): ApplyContext {
  const apply: ApplyContext = {
    definitions,
    leaseMs,
    rateLimits,
    random: Math.random,
    writeChildren: (tx, starts) => childStartsWrite(tx, apply, starts),
  };
  return apply;
}
