import {
  type EdgeRule,
  edgeRuleOf,
  type RunTask,
  type TaskEdge,
} from '@causeway/workflow/internal';
import type { TaskRecord } from '../../db/rows';
import type { EventRequest } from './event-request';

/** What the row after an edge depends on beyond the machine's snapshot. */
export interface RecordChange {
  /** Database time of the decision. */
  readonly now: Date;
  readonly leaseMs: number;
  /** The claimer, when the edge is the cause's and takes the lease. */
  readonly holder: string | undefined;
  /** What came with the cause's request (output, receipt), when the edge is the cause's. */
  readonly extra: EventRequest['extra'] | undefined;
  /** The event a wait the edge starts waits for (its key null when it could not be computed). */
  readonly waitEvent?: { readonly name: string; readonly key: string | null } | undefined;
}

/** The edge table's row of an edge the machine decided. */
export function ruleOf(edge: TaskEdge): EdgeRule {
  const rule = edgeRuleOf(edge.from, edge.to, edge.reason);
  if (rule === undefined) throw new Error(`no edge table row for ${edge.from} → ${edge.to}`);
  return rule;
}

/**
 * The stored row after an edge: the machine's snapshot, and the lease and receipt columns as
 * the edge's row declares them (`lease`, `receipt`), plus the cause's output.
 */
export function nextRecord(
  before: TaskRecord,
  edge: TaskEdge,
  snapshot: RunTask['snapshot'],
  change: RecordChange,
): TaskRecord {
  const rule = ruleOf(edge);
  const { now, extra } = change;
  const outputJson = extra?.outputJson;
  const receipt = rule.receipt === 'await' ? extra?.receipt : undefined;
  const lease =
    rule.lease === 'take'
      ? {
          leaseHolder: change.holder ?? null,
          leaseEpoch: before.leaseEpoch + 1,
          leaseExpiresAt: new Date(now.getTime() + change.leaseMs),
        }
      : rule.lease === 'keep'
        ? before
        : { leaseHolder: null, leaseEpoch: before.leaseEpoch, leaseExpiresAt: null };
  const receiptColumns =
    rule.receipt === 'clear'
      ? { receiptId: null, receiptDeadlineAt: null }
      : receipt === undefined
        ? before
        : { receiptId: receipt.id, receiptDeadlineAt: new Date(now.getTime() + receipt.timeoutMs) };
  const waitColumns =
    rule.wait === 'start'
      ? {
          eventName: change.waitEvent?.name ?? null,
          eventKey: change.waitEvent?.key ?? null,
          waitSince: now,
          waitTimeoutAt: snapshot.waitTimeoutAt,
        }
      : rule.wait === 'clear'
        ? { eventName: null, eventKey: null, waitSince: null, waitTimeoutAt: null }
        : before;
  if (rule.wait === 'start' && change.waitEvent === undefined) {
    throw new Error(`${edge.from} → ${edge.to} starts a wait without its event`);
  }
  return {
    ...before,
    eventName: waitColumns.eventName,
    eventKey: waitColumns.eventKey,
    waitSince: waitColumns.waitSince,
    waitTimeoutAt: waitColumns.waitTimeoutAt,
    // As the row is after the write (runChangesWrite sets both).
    output: outputJson === undefined ? before.output : JSON.parse(outputJson),
    updatedAt: now,
    state: snapshot.state,
    attempt: snapshot.attempt,
    effectStarted: snapshot.effectStarted,
    replayCount: snapshot.replayCount,
    runAt: snapshot.runAt,
    deadlineAt: snapshot.deadlineAt,
    lastErrorCategory: snapshot.lastErrorCategory,
    lastError: snapshot.lastError,
    leaseHolder: lease.leaseHolder,
    leaseEpoch: lease.leaseEpoch,
    leaseExpiresAt: lease.leaseExpiresAt,
    receiptId: receiptColumns.receiptId,
    receiptDeadlineAt: receiptColumns.receiptDeadlineAt,
  };
}

/** The receipt an edge that awaits one waits for (and the outbox channel), in its detail. */
export function withReceipt(
  edge: TaskEdge,
  extra: EventRequest['extra'] | undefined,
): Readonly<Record<string, unknown>> | null {
  if (ruleOf(edge).receipt !== 'await' || extra?.receipt === undefined) return edge.detail;
  return {
    ...edge.detail,
    receiptId: extra.receipt.id,
    ...(extra.outbox === undefined ? {} : { outboxChannel: extra.outbox.channel }),
  };
}
