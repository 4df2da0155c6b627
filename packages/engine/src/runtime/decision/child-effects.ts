import {
  type Actor,
  getStep,
  isTerminalWorkflowState,
  type StepInputProblem,
  type TaskEdge,
  type WorkflowDefinition,
  type WorkflowRegistry,
  type WorkflowState,
} from '@causeway/workflow/internal';
import type { LoadedRuns } from '../../db/locked-runs';
import type { TaskRecord, WorkflowRecord } from '../../db/rows';
import { admitChildren, type ChildStart } from '../children/child-admission';
import { mapStartOf } from '../children/map-list';
import type { ApplyOptions, EventRequest } from './event-request';

/** One decision over locked runs, as apply-events makes it: what its edges ask of children. */
export type DecideOnce = (
  loaded: LoadedRuns,
  requests: readonly EventRequest[],
  options: ApplyOptions,
) => Promise<ChildWork>;

/** A child workflow whose outcome class changed in a decision: its parent step's tally moves. */
export interface ChildChange {
  readonly childWorkflowId: string;
  readonly parentWorkflowId: string;
  readonly parentTaskId: string;
  readonly from: WorkflowState;
  readonly to: WorkflowState;
}

/** A dead step with children that an operator replayed (R47), and who did it. */
export interface ChildReplay {
  readonly parentWorkflowId: string;
  readonly parentTaskId: string;
  readonly actor: Actor;
  readonly reason: string;
  readonly bulk: boolean;
}

/** What a decision asks of the children of the steps it moved (R43–R47). */
export interface ChildWork {
  /** Children to write, with their step's new tally. */
  readonly starts: readonly ChildStart[];
  /** Steps whose unfinished children must be asked to cancel, by the step's actor. */
  readonly cancels: readonly { readonly parentTaskId: string; readonly reason?: string }[];
  readonly replays: readonly ChildReplay[];
  readonly changes: readonly ChildChange[];
  /** Steps to settle if their tally decides them, whatever changed (the sweeper's fallback). */
  readonly rechecks?: readonly {
    readonly parentTaskId: string;
    readonly parentWorkflowId: string;
  }[];
}

export const noChildWork: ChildWork = { starts: [], cancels: [], replays: [], changes: [] };

export function hasChildWork(work: ChildWork): boolean {
  const rechecks = work.rechecks?.length ?? 0;
  return (
    work.starts.length +
      work.cancels.length +
      work.replays.length +
      work.changes.length +
      rechecks >
    0
  );
}

/**
 * Collects, while a RunState applies events, what the children of the steps it moves need:
 * a map step's children evaluated before the machine decides (so a failing list ends the
 * step, R58), a `startChildren` result admitted before its edge (a bad child fails the step
 * with `invalid_argument`, R43), and after the edges, which children to start, cancel or
 * replay, and which parents' tallies the changed child workflows move.
 */
export class ChildEffects {
  private readonly starts: ChildStart[] = [];
  private readonly cancels: { parentTaskId: string; reason?: string }[] = [];
  private readonly replays: ChildReplay[] = [];
  private readonly startingMaps = new Map<string, ChildStart>();
  private readonly requested = new Map<string, ChildStart>();

  constructor(
    private readonly definitions: WorkflowRegistry,
    private readonly now: Date,
  ) {}

  /** A map step about to start (promotion, replay): its children, or what went wrong. */
  checkMap(
    definition: WorkflowDefinition,
    parent: { readonly workflow: WorkflowRecord; readonly task: TaskRecord },
    tasks: Iterable<TaskRecord>,
    override: { readonly taskId: string; readonly output: unknown } | undefined,
  ): StepInputProblem | null {
    // A replayed step that has children awaits them again: its list is not evaluated anew.
    if (parent.task.children !== null) return null;
    const step = getStep(definition, parent.task.step);
    const found = mapStartOf(this.definitions, definition, step, parent, tasks, this.now, override);
    if (!found.ok) return found.problem;
    this.startingMaps.set(parent.task.id, found.start);
    return null;
  }

  /**
   * A worker's `startChildren` result: admitted before the machine decides. A refused one
   * becomes a failure of the attempt (`invalid_argument`, never retried), and no child is
   * written; an admitted one with `detached` completes the step with the children's ids.
   */
  admitRequested(
    request: EventRequest,
    parent: { readonly workflow: WorkflowRecord; readonly task: TaskRecord },
  ): EventRequest {
    const children = request.extra?.children;
    if (children === undefined || !('actor' in request.event)) return request;
    const { ahead } = children;
    const admitted =
      ahead !== undefined &&
      ahead.leaseEpoch === parent.task.leaseEpoch &&
      ahead.replayCount === parent.task.replayCount &&
      parent.task.deadlineAt === null
        ? { ok: true as const, start: ahead.start }
        : admitChildren(this.definitions, children, parent, this.now);
    if (!admitted.ok) {
      return {
        ...request,
        event: {
          type: 'fail',
          actor: request.event.actor,
          category: 'invalid_argument',
          summary: `startChildren: ${admitted.summary}`,
        },
        extra: {},
      };
    }
    this.requested.set(parent.task.id, admitted.start);
    if (!admitted.start.detached) return request;
    const ids = admitted.start.children.map((child) => child.child?.id);
    return { ...request, extra: { outputJson: JSON.stringify(ids) } };
  }

  /** Takes note of an edge a decision wrote, for the children it starts, cancels or replays. */
  onEdge(task: TaskRecord, edge: TaskEdge, actor: Actor | null): void {
    if (edge.to === 'awaiting_children') {
      if (edge.from === 'dead' && task.children !== null) {
        const detail = edge.detail ?? {};
        this.replays.push({
          parentWorkflowId: task.workflowId,
          parentTaskId: task.id,
          actor: actor ?? { kind: 'system' },
          reason: typeof detail.operatorReason === 'string' ? detail.operatorReason : '',
          bulk: edge.reason === 'bulk_requeue',
        });
        return;
      }
      const start = this.startingMaps.get(task.id) ?? this.requested.get(task.id);
      if (start === undefined) throw new Error(`task ${task.id} awaits children it never admitted`);
      this.starts.push(start);
      return;
    }
    // Detached children start with the step's success, and are never awaited (R46).
    if (edge.from === 'leased' && edge.to === 'succeeded') {
      const start = this.requested.get(task.id);
      if (start?.detached === true) this.starts.push(start);
      return;
    }
    const stopsChildren =
      (edge.from === 'awaiting_children' &&
        (edge.to === 'cancel_requested' || edge.to === 'dead')) ||
      (edge.from === 'cancel_requested' && edge.to === 'dead' && task.children !== null);
    if (stopsChildren) {
      const detail = edge.detail ?? {};
      this.cancels.push({
        parentTaskId: task.id,
        ...(typeof detail.operatorReason === 'string' ? { reason: detail.operatorReason } : {}),
      });
    }
  }

  /**
   * What a map step's `children_started` edge's detail says: how many children of which
   * workflow (a worker's `startChildren` edge says how many, from its event).
   */
  startDetail(taskId: string, edge: TaskEdge): Readonly<Record<string, unknown>> {
    if (edge.reason !== 'children_started' || edge.from !== 'pending') return {};
    const start = this.startingMaps.get(taskId) ?? this.requested.get(taskId);
    if (start === undefined) return {};
    return { children: start.children.length, workflow: start.definition.name };
  }

  /** Everything collected, with the child workflows whose outcome class changed. */
  work(
    workflowChanges: readonly { id: string; expectedState: string; state: string }[],
    records: ReadonlyMap<string, WorkflowRecord>,
  ): ChildWork {
    const changes: ChildChange[] = [];
    for (const change of workflowChanges) {
      const parent = records.get(change.id)?.parent;
      if (parent == null || parent.detached) continue;
      const from = change.expectedState as WorkflowState;
      const to = change.state as WorkflowState;
      if (outcomeClass(from) === outcomeClass(to)) continue;
      changes.push({
        childWorkflowId: change.id,
        parentWorkflowId: parent.workflowId,
        parentTaskId: parent.taskId,
        from,
        to,
      });
    }
    return { starts: this.starts, cancels: this.cancels, replays: this.replays, changes };
  }
}

/** How a child counts in its parent's tally (R45): open, succeeded, or failed. */
export function outcomeClass(state: WorkflowState): 'open' | 'succeeded' | 'failed' {
  if (!isTerminalWorkflowState(state)) return 'open';
  return state === 'succeeded' ? 'succeeded' : 'failed';
}
