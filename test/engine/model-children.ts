/**
 * Child workflows in the engine model (R43–R47), written from docs/rules.md R43–R47 for the engine model
 * test: which steps await which children, how the children's outcomes count for their step,
 * and what follows, in the same transaction, from an edge that starts, stops or replays a step
 * with children, or from a child's end. The pure machine decides each edge (the step's
 * `children_changed` with the tally this file counts; a child's cancel by its parent); this
 * file says when each is asked for and counts the children itself (model-children-contract.ts).
 *
 * What follows an edge is taken in rounds, as the engine states its order (the contract is
 * silent on the order of one transaction's rows): the children started (a workflow's creation
 * row, then its tasks'), the children of replayed steps replayed (dead ones, in task id order)
 * and started again in the places of cancelled ones (detail `replaces`), the unfinished
 * children of stopped steps cancelled by their step (`parent:<task id>`, in step and index
 * order), the stragglers of a replayed step's failure that end cancelled started again in
 * their places (in step and index order), then the steps whose children changed settled (in
 * task id order); what a round decides is followed in the next.
 */
import type { Actor, RunClock, TaskEvent, WorkflowState } from '@causeway/workflow/internal';
import { specChildClass, specChildrenSettle } from './model-children-contract';
import type { ChildHost, ChildIdSource, ChildRequest } from './model-children-host';
import type { LogRow } from './model-rows';

/** A step's children, as the step's row counts them. */
interface Brood {
  readonly workflowId: string;
  /** Child workflow ids, in the order they were started (replaced ones stay). */
  readonly kids: string[];
  readonly allowedFailures: number;
  readonly output: 'result' | 'outcome';
}

/** A child's place (R43): its parent step, its index, whether a replay started it anew. */
interface Link {
  readonly taskId: string;
  readonly index: number;
  replaced: boolean;
}

/** What an edge asks of children, to follow in the transaction's next round. */
interface Work {
  starts: { readonly taskId: string; readonly request: ChildRequest }[];
  replays: {
    readonly taskId: string;
    readonly actor: Actor;
    readonly reason: string;
    readonly bulk: boolean;
  }[];
  cancels: { readonly taskId: string; readonly reason: string | undefined }[];
  /** Steps one of whose children changed between open, succeeded and failed. */
  changed: Set<string>;
  /** Children that ended cancelled: a straggler of an earlier round may start again (R47). */
  ended: string[];
}

const noWork = (): Work => ({
  starts: [],
  replays: [],
  cancels: [],
  changed: new Set(),
  ended: [],
});

const terminal: readonly WorkflowState[] = ['succeeded', 'cancelled', 'dead'];

/** An actor from its text in a log row (R24: `kind:name`). */
function actorOfText(text: string): Actor {
  const separator = text.indexOf(':');
  return separator === -1
    ? ({ kind: text } as Actor)
    : ({ kind: text.slice(0, separator), name: text.slice(separator + 1) } as Actor);
}

export class ModelChildren {
  readonly broods = new Map<string, Brood>();
  readonly links = new Map<string, Link>();
  private readonly requested = new Map<string, ChildRequest>();
  private work = noWork();

  constructor(private readonly host: ChildHost) {}

  /** A worker's `startChildren` for the step, before its edge is decided (R43); null: drop it. */
  request(taskId: string, request: ChildRequest | null): void {
    if (request === null) this.requested.delete(taskId);
    else this.requested.set(taskId, request);
  }

  /** Whether the step started children: a replay then awaits them again (R47). */
  has(taskId: string): boolean {
    return this.broods.has(taskId);
  }

  pending(): boolean {
    const { starts, replays, cancels, changed } = this.work;
    return starts.length + replays.length + cancels.length + changed.size > 0;
  }

  /** Takes note of an edge a decision wrote (its log row): what it asks of the step's children. */
  onEdge(row: LogRow): void {
    const taskId = row.task_id as string;
    const { from_state: from, to_state: to } = row;
    const operatorReason = (row.detail as { operatorReason?: unknown } | null)?.operatorReason;
    const said = typeof operatorReason === 'string' ? operatorReason : undefined;
    if (to === 'awaiting_children' && from === 'leased') {
      const request = this.requested.get(taskId);
      if (request === undefined)
        throw new Error(`task ${taskId} started children nobody asked for`);
      this.requested.delete(taskId);
      this.work.starts.push({ taskId, request });
    } else if (to === 'awaiting_children' && from === 'dead') {
      this.work.replays.push({
        taskId,
        actor: actorOfText(row.actor),
        reason: said ?? '',
        bulk: row.reason === 'bulk_requeue',
      });
    } else if (
      (from === 'awaiting_children' && (to === 'cancel_requested' || to === 'dead')) ||
      (from === 'cancel_requested' && to === 'dead' && this.broods.has(taskId))
    ) {
      this.work.cancels.push({ taskId, reason: said });
    }
  }

  /** A workflow's state moved: a child whose outcome class changed moves its step's tally. */
  onWorkflowChange(workflowId: string, from: WorkflowState, to: WorkflowState): void {
    const link = this.links.get(workflowId);
    if (link === undefined || specChildClass(from) === specChildClass(to)) return;
    this.work.changed.add(link.taskId);
    if (to === 'cancelled') this.work.ended.push(workflowId);
  }

  /** The tally columns of a task row (R45), as the model counts them. */
  columns(taskId: string): Record<string, unknown> {
    const brood = this.broods.get(taskId);
    if (brood === undefined) {
      return {
        children_total: null,
        children_succeeded: null,
        children_failed: null,
        children_allowed_failures: null,
        children_output: null,
      };
    }
    const classes = this.counted(brood).map((id) => specChildClass(this.host.workflowState(id)));
    return {
      children_total: classes.length,
      children_succeeded: classes.filter((which) => which === 'succeeded').length,
      children_failed: classes.filter((which) => which === 'failed').length,
      children_allowed_failures: brood.allowedFailures,
      children_output: brood.output,
    };
  }

  /** Every child's link as its workflow row holds it (R43), replaced ones marked (R47). */
  expectedLinks(): Record<string, unknown>[] {
    return [...this.links.entries()].map(([id, link]) => ({
      id,
      parent_workflow_id: this.host.taskOf(link.taskId).workflowId,
      parent_task_id: link.taskId,
      child_index: link.index,
      replaced: link.replaced,
    }));
  }

  /** What the transaction's edges asked of children, round by round, as rows. */
  follow(clock: RunClock, ids: ChildIdSource): LogRow[] {
    const rows: LogRow[] = [];
    for (let round = 0; this.pending(); round += 1) {
      if (round > 50) throw new Error('the model kept following children');
      const work = this.work;
      this.work = noWork();
      for (const start of work.starts)
        rows.push(...this.start(start.taskId, start.request, clock, ids));
      const settling = new Set(work.changed);
      const replayed = new Set(work.replays.map((replay) => replay.taskId));
      if (work.replays.length > 0) {
        rows.push(...this.replay(work, clock, ids));
        for (const replay of work.replays) settling.add(replay.taskId);
        // The replayed children's own changes are in the tally counted anew.
        for (const replay of work.replays) this.work.changed.delete(replay.taskId);
      }
      rows.push(...this.cancel(work.cancels, clock));
      const ended = work.ended.filter((id) => !replayed.has(this.links.get(id)?.taskId ?? ''));
      rows.push(...this.restartLeftovers(ended, clock, ids));
      rows.push(...this.settle([...settling].sort(), clock));
    }
    return rows;
  }

  private counted(brood: Brood): string[] {
    return brood.kids.filter((id) => this.links.get(id)?.replaced !== true);
  }

  /** R43: one child per input, by its step, with the step's deadline as theirs at most. */
  private start(taskId: string, request: ChildRequest, clock: RunClock, ids: ChildIdSource) {
    const brood: Brood = {
      workflowId: this.host.taskOf(taskId).workflowId,
      kids: [],
      // R45: at most `failures` of the children may fail; without a tolerance, none.
      allowedFailures: request.tolerate ?? 0,
      output: request.tolerate === null ? 'result' : 'outcome',
    };
    this.broods.set(taskId, brood);
    return request.inputs.flatMap((input, index) =>
      this.startOne(taskId, index, input, clock, ids),
    );
  }

  private startOne(
    taskId: string,
    index: number,
    input: unknown,
    clock: RunClock,
    ids: ChildIdSource,
    replaces?: string,
  ): LogRow[] {
    const step = this.host.taskOf(taskId);
    const brood = this.broods.get(taskId) as Brood;
    const given = ids.take(taskId, index);
    brood.kids.push(given.workflowId);
    this.links.set(given.workflowId, { taskId, index, replaced: false });
    return this.host.submitChild({
      ids: given,
      now: clock.now,
      input,
      // R43: keyed by the parent task, its replay round and the index.
      key: `${taskId}:${step.replayCount}:${index}`,
      actor: `parent:${taskId}`,
      detail: {
        parentWorkflowId: brood.workflowId,
        step: step.step,
        index,
        ...(replaces === undefined ? {} : { replaces }),
      },
      deadlineCapAt: step.deadlineAt,
    });
  }

  /**
   * R47: dead children replayed by the step's operator and reason, cancelled ones started
   * again as new workflows in their places, succeeded ones kept.
   */
  private replay(work: Work, clock: RunClock, ids: ChildIdSource): LogRow[] {
    const rows: LogRow[] = [];
    const replays = [...work.replays].sort((a, b) => (a.taskId < b.taskId ? -1 : 1));
    const deadTasks = replays.flatMap((replay) =>
      this.counted(this.broods.get(replay.taskId) as Brood).flatMap((id) =>
        this.host.workflowState(id) !== 'dead'
          ? []
          : this.host
              .tasksOf(id)
              .filter((task) => task.state === 'dead')
              .map((task) => ({ replay, taskId: task.taskId })),
      ),
    );
    deadTasks.sort((a, b) => (a.taskId < b.taskId ? -1 : 1));
    for (const { replay, taskId } of deadTasks) {
      const reason = replay.reason.trim() === '' ? 'its parent step was replayed' : replay.reason;
      const event: TaskEvent = { type: 'replay', actor: replay.actor, reason, bulk: replay.bulk };
      rows.push(...(this.host.apply(taskId, event, clock).rows ?? []));
    }
    for (const replay of replays) {
      const brood = this.broods.get(replay.taskId) as Brood;
      const cancelled = this.counted(brood)
        .filter((id) => this.host.workflowState(id) === 'cancelled')
        .sort((a, b) => (this.links.get(a)?.index ?? 0) - (this.links.get(b)?.index ?? 0));
      for (const old of cancelled) {
        const link = this.links.get(old) as Link;
        link.replaced = true;
        const input = this.host.inputOf(old);
        rows.push(...this.startOne(replay.taskId, link.index, input, clock, ids, old));
      }
    }
    return rows;
  }

  /**
   * R47: a child that its step asked to cancel (the latest ask is `parent:<task id>`) and that
   * ends cancelled while the step awaits its children again (replayed after the ask) is one its
   * failure cancelled: started again in its place, as the replay starts the ones already
   * cancelled, instead of counting as a failure. One cancelled by anyone else counts.
   */
  private restartLeftovers(ended: readonly string[], clock: RunClock, ids: ChildIdSource) {
    const leftovers = ended
      .map((id) => ({ id, link: this.links.get(id) as Link }))
      .filter(
        ({ id, link }) =>
          !link.replaced &&
          this.host.taskOf(link.taskId).state === 'awaiting_children' &&
          this.host.cancelAskedBy(id) === `parent:${link.taskId}`,
      )
      .sort((a, b) =>
        a.link.taskId !== b.link.taskId
          ? a.link.taskId < b.link.taskId
            ? -1
            : 1
          : a.link.index - b.link.index,
      );
    return leftovers.flatMap(({ id, link }) => {
      link.replaced = true;
      return this.startOne(link.taskId, link.index, this.host.inputOf(id), clock, ids, id);
    });
  }

  /** R45, R46: the unfinished children of stopped steps, cancelled by their step. */
  private cancel(cancels: Work['cancels'], clock: RunClock): LogRow[] {
    const reasonOf = new Map(cancels.map((cancel) => [cancel.taskId, cancel.reason]));
    const children = [...reasonOf.keys()]
      .sort()
      .flatMap((taskId) => {
        const brood = this.broods.get(taskId);
        return brood === undefined ? [] : this.counted(brood).map((id) => ({ taskId, id }));
      })
      .filter(({ id }) => !terminal.includes(this.host.workflowState(id)))
      .sort((a, b) =>
        a.taskId !== b.taskId
          ? a.taskId < b.taskId
            ? -1
            : 1
          : (this.links.get(a.id)?.index ?? 0) - (this.links.get(b.id)?.index ?? 0),
      );
    return children.flatMap(({ taskId, id }) =>
      this.host.cancelWorkflow(id, { kind: 'parent', name: taskId }, clock, reasonOf.get(taskId)),
    );
  }

  /** R45, R46: each step its children now decide, settled with its output. */
  private settle(taskIds: readonly string[], clock: RunClock): LogRow[] {
    const rows: LogRow[] = [];
    for (const taskId of taskIds) {
      const step = this.host.taskOf(taskId);
      const brood = this.broods.get(taskId);
      if (brood === undefined) continue;
      if (step.state !== 'awaiting_children' && step.state !== 'cancel_requested') continue;
      const kids = this.counted(brood);
      const classes = kids.map((id) => specChildClass(this.host.workflowState(id)));
      const verdict = specChildrenSettle(
        classes,
        brood.allowedFailures,
        step.state === 'cancel_requested',
      );
      if (verdict === null) continue;
      const succeeded = classes.filter((which) => which === 'succeeded').length;
      const failed = classes.filter((which) => which === 'failed').length;
      const event: TaskEvent = {
        type: 'children_changed',
        actor: { kind: 'system' },
        tally: {
          total: classes.length,
          succeeded,
          failed,
          open: classes.length - succeeded - failed,
          allowedFailures: brood.allowedFailures,
        },
      };
      const succeeds = verdict === 'children_succeeded' || verdict === 'cancel_after_submit';
      const outcome = this.host.apply(
        taskId,
        event,
        clock,
        succeeds ? { output: this.outputOf(brood, kids) } : {},
      );
      if (outcome.kind !== 'applied')
        throw new Error(`the machine refused ${verdict} for ${taskId}`);
      rows.push(...(outcome.rows ?? []));
    }
    return rows;
  }

  /**
   * R45: the children in input order; without a tolerance each one's result (null for one
   * that did not succeed), with one each one's outcome.
   */
  private outputOf(brood: Brood, kids: readonly string[]): unknown {
    const ordered = [...kids].sort(
      (a, b) => (this.links.get(a)?.index ?? 0) - (this.links.get(b)?.index ?? 0),
    );
    return ordered.map((id) => {
      const state = this.host.workflowState(id);
      const result = state === 'succeeded' ? this.host.resultOf(id) : null;
      if (brood.output === 'result') return result;
      return {
        workflowId: id,
        state,
        ...(state === 'succeeded' ? { result } : { reason: this.host.workflowReason(id) }),
      };
    });
  }
}
