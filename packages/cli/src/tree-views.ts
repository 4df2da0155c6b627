/**
 * The tree as the API shows it (R48): a child's parent (`WorkflowParent`), a step's child
 * workflows counted (`StepChildCounts`), and how they read.
 */

/** A child workflow's parent and root, as `status` and `tree` select them. */
export interface TreeParent {
  workflow: { id: string; name: string };
  step: string;
  index: number;
  root: { id: string; name: string };
  depth: number;
  detached: boolean;
}

/** The GraphQL selection of `parent` that `TreeParent` reads. */
export const parentSelection =
  'parent { workflow { id name } step index root { id name } depth detached }';

/** A step's child workflows as the API counts them. */
export interface ChildCountsView {
  step: string;
  total: number;
  succeeded: number;
  failed: number;
  unfinished: number;
  allowedFailures: number;
  detached: number;
  workflows: string[];
  byState: { state: string; count: number }[];
}

/** The GraphQL selection of `childCounts` that `ChildCountsView` reads. */
export const childCountsSelection =
  'childCounts { step total succeeded failed unfinished allowedFailures detached workflows byState { state count } }';

/** `12 children of publish-to-platform: 8 succeeded, 3 running, 1 dead (tolerated 1 of 2)` */
export function childCountsText(counts: ChildCountsView): string {
  const states = counts.byState
    .filter((entry) => entry.count > 0)
    .map((entry) => `${entry.count.toLocaleString('en')} ${entry.state.toLowerCase()}`);
  const of = counts.workflows.length === 0 ? '' : ` of ${counts.workflows.join(', ')}`;
  const tolerated =
    counts.allowedFailures > 0
      ? ` (tolerated ${Math.min(counts.failed, counts.allowedFailures)} of ${counts.allowedFailures})`
      : '';
  const detached = counts.detached > 0 ? `, ${counts.detached} detached` : '';
  const listed = states.length === 0 ? '' : `: ${states.join(', ')}`;
  return `${counts.total.toLocaleString('en')} ${counts.total === 1 ? 'child' : 'children'}${of}${listed}${tolerated}${detached}`;
}
