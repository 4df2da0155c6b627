import type { Selectable } from 'kysely';
import type { ClaimEdgePlan, SettleEdgePlan } from '../edge-plans';
import type { TaskRecord } from '../rows';
import type { TaskTable, TraceCarrier } from '../schema';
import type { StepColumns } from './shared-ctes';

/**
 * What a one-statement settle of `complete` results may do: the edges, their rows' effects
 * and the aggregation, read off the machine and the edge table (`SettleEdgePlan`), the
 * engine's definitions, and the results themselves.
 */
export interface SettleStatementPlan extends SettleEdgePlan, StepColumns {
  /**
   * The results, in request order; each must be its batch's only request for its workflow
   * (the caller leaves the others to the full decision, which applies them in request order).
   */
  readonly taskIds: readonly string[];
  readonly workflowIds: readonly string[];
  /** The lease epoch each result was produced under (R7). */
  readonly epochs: readonly number[];
  readonly outputs: readonly (string | null)[];
  /**
   * The workflow of every request in the batch, these results and the others alike: all are
   * locked here in one id order, and a workflow with more than one request is left to the full
   * decision (which applies a batch in request order).
   */
  readonly batchWorkflowIds: readonly string[];
  /** The lease holder every result was produced under, and its actor string. */
  readonly holder: string;
  readonly actor: string;
  /**
   * Steps a result makes ready that this worker leases in the same statement, per queue at
   * most `limits` (empty: none). Only where the claim edge leaves the parent as it is and the
   * step's deadline has not passed; the rest are queued as usual.
   */
  readonly chain: ChainClaimPlan;
}

/** The claim edge of chained steps (the one-statement claim's), with where and how many. */
export interface ChainClaimPlan extends ClaimEdgePlan {
  readonly queues: readonly string[];
  readonly limits: readonly number[];
  readonly leaseMs: number;
}

/**
 * A result the statement wrote: the request's position, its edge, the attempt, and the task
 * after it if it was asked for (`withTasks`).
 */
export interface SettledResultRow {
  readonly position: number;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly attempt: number;
  readonly task: TaskRecord | null;
}

/** A chained step as the settle statement sends it (one JSON object; times as text). */
export interface ChainedRow {
  readonly id: string;
  readonly workflow_id: string;
  readonly step: string;
  readonly queue: string;
  readonly state: string;
  readonly attempt: number;
  readonly lease_epoch: number;
  readonly deadline_at: string | null;
  readonly evidence: Selectable<TaskTable>['evidence'];
  readonly checkpoints: Selectable<TaskTable>['checkpoints'];
  readonly w_name: string;
  readonly w_version: string | null;
  readonly w_input: unknown;
  readonly w_awaited_child: boolean;
  readonly w_trace_context: TraceCarrier | null;
  readonly replay_count: number;
  readonly outputs: Record<string, unknown>;
}
