import type { TaskState, WorkflowState } from './machine-table';

/**
 * A step's child workflows as the engine counted them (R48): `explain` gets them as an input,
 * so the narrative stays a pure function of what was read.
 */
export interface StepChildrenCounts {
  readonly step: string;
  /** The children's workflow names (one when the step started children of one definition). */
  readonly workflows: readonly string[];
  /** Children the step started, those a replay replaced not counted (R47). */
  readonly total: number;
  /** The children in each workflow state; a state absent counts zero. */
  readonly byState: Readonly<Partial<Record<WorkflowState, number>>>;
  /** Children that ended `dead` or `cancelled`, as the step's tally counts them (R45). */
  readonly failed: number;
  /** Failures the step's tolerance allows (0: fail fast). */
  readonly allowedFailures: number;
}

/** The order a children line names states in: how far they got, then how they failed. */
const stateOrder: readonly WorkflowState[] = [
  'succeeded',
  'running',
  'queued',
  'waiting',
  'cancel_requested',
  'dead',
  'cancelled',
];

/**
 * "publish-each: awaiting 12 child workflows of publish-to-platform: 8 succeeded, 3 running,
 * 1 dead (tolerated 1 of 2)" for a step that waits for its children (`awaiting_children`, or
 * `cancel_requested` while they stop); null for a step in any other state.
 */
export function childrenLine(state: TaskState, counts: StepChildrenCounts): string | null {
  if (state !== 'awaiting_children' && state !== 'cancel_requested') return null;
  const what = state === 'awaiting_children' ? 'awaiting' : 'cancel requested, waiting for';
  const of = counts.workflows.length === 0 ? '' : ` of ${counts.workflows.join(', ')}`;
  const parts = stateOrder.flatMap((name) => {
    const count = counts.byState[name] ?? 0;
    return count === 0 ? [] : [`${count} ${name.replaceAll('_', ' ')}`];
  });
  const tolerated =
    counts.allowedFailures > 0
      ? ` (tolerated ${Math.min(counts.failed, counts.allowedFailures)} of ${counts.allowedFailures})`
      : '';
  const plural = counts.total === 1 ? 'child workflow' : 'child workflows';
  const listed = parts.length === 0 ? '' : `: ${parts.join(', ')}`;
  return `${counts.step}: ${what} ${counts.total} ${plural}${of}${listed}${tolerated}`;
}
