/**
 * A workflow page's tree (R48): its parent (a link up, and its root), and each step's child
 * workflows with their counts by state, the first page of them (links down) and links to the
 * list of its children in each state.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { shortId, stateBadge, timeElement, workflowHref } from './format';
import type { GraphQLReader } from './graphql-reads';
import { html, type SafeHtml } from './html';
import type { ChildCountsData, ParentData } from './workflow-query';

/** Children listed per step on a workflow's page; the list page has the rest. */
export const childrenShown = 20;

const stepChildrenQuery = `query DashboardChildren($id: ID!, $step: String!, $first: Int!) {
  workflow(id: $id) {
    children(step: $step, first: $first) {
      edges { node { id name state createdAt updatedAt parent { index } } }
    }
  }
}`;

export interface ChildRow {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly parent: { readonly index: number };
}

/** Each step's first children, by step: one read per step that started any. */
export async function readStepChildren(
  reader: GraphQLReader,
  workflowId: string,
  counts: readonly ChildCountsData[],
  from: IncomingHttpHeaders,
): Promise<ReadonlyMap<string, readonly ChildRow[]>> {
  const pages = new Map<string, readonly ChildRow[]>();
  for (const { step } of counts) {
    const result = await reader.read<{
      workflow: { children: { edges: { node: ChildRow }[] } } | null;
    }>(stepChildrenQuery, { id: workflowId, step, first: childrenShown }, from);
    pages.set(
      step,
      result.ok ? (result.data.workflow?.children.edges.map((edge) => edge.node) ?? []) : [],
    );
  }
  return pages;
}

/** The list page filtered to this workflow's children (in one state). */
export function childrenListHref(workflowId: string, state?: string): string {
  const search = new URLSearchParams({ parent: workflowId });
  if (state !== undefined) search.set('state', state.toLowerCase());
  return `/?${search.toString()}`;
}

/** The summary's facts of a child: its parent (a link up) and its root. */
export function parentFacts(parent: ParentData | null): SafeHtml | '' {
  if (parent === null) return '';
  return html`<dt>Parent</dt><dd><a href="${workflowHref(parent.workflow.id)}" rel="up" data-link="parent">${parent.workflow.name} ${shortId(parent.workflow.id)}</a>, step <code>${parent.step}</code>, child #${parent.index}${parent.detached ? ' (detached: not awaited)' : ''}</dd>
  <dt>Root</dt><dd><a href="${workflowHref(parent.root.id)}" data-link="root">${parent.root.name} ${shortId(parent.root.id)}</a> (depth ${parent.depth})</dd>`;
}

function countsText(counts: ChildCountsData): string {
  const states = counts.byState
    .filter((entry) => entry.count > 0)
    .map((entry) => `${entry.count} ${entry.state.toLowerCase().replaceAll('_', ' ')}`);
  const tolerated =
    counts.allowedFailures > 0
      ? ` (tolerated ${Math.min(counts.failed, counts.allowedFailures)} of ${counts.allowedFailures})`
      : '';
  return `${states.join(', ')}${tolerated}`;
}

function renderStep(
  workflowId: string,
  counts: ChildCountsData,
  rows: readonly ChildRow[],
  now: Date,
): SafeHtml {
  const listed = counts.byState.reduce((sum, entry) => sum + entry.count, 0);
  const of = counts.workflows.length === 0 ? '' : ` of ${counts.workflows.join(', ')}`;
  const filters = counts.byState
    .filter((entry) => entry.count > 0)
    .map(
      (entry) =>
        html`<a href="${childrenListHref(workflowId, entry.state)}" data-state="${entry.state.toLowerCase()}">${entry.count} ${entry.state.toLowerCase().replaceAll('_', ' ')}</a>`,
    );
  const table = html`<table class="workflows children-table">
  <caption>Children of ${counts.step}${rows.length < listed ? `: the first ${rows.length}` : ''}</caption>
  <thead><tr><th scope="col">#</th><th scope="col">Workflow</th><th scope="col">State</th><th scope="col">Age</th><th scope="col">Last change</th></tr></thead>
  <tbody>${rows.map(
    (row) => html`<tr data-workflow-id="${row.id}">
  <td>${row.parent.index}</td>
  <th scope="row"><a href="${workflowHref(row.id)}" data-link="child">${row.name}</a> <span class="id">${shortId(row.id)}</span></th>
  <td>${stateBadge(row.state)}</td>
  <td>${timeElement(row.createdAt, now, 'relative')}</td>
  <td>${timeElement(row.updatedAt, now, 'relative')}</td>
</tr>`,
  )}</tbody>
</table>`;
  return html`<section class="step-children" data-step="${counts.step}" aria-label="Children of ${counts.step}">
  <h3><code>${counts.step}</code>: ${counts.total} child workflow${counts.total === 1 ? '' : 's'}${of}${counts.detached > 0 ? `, ${counts.detached} detached` : ''}</h3>
  <p class="counts">${countsText(counts)}</p>
  ${filters.length === 0 ? '' : html`<p class="child-filters">Show only: ${filters.map((link, at) => (at === 0 ? link : html`, ${link}`))} · <a href="${childrenListHref(workflowId)}">all of them</a></p>`}
  ${rows.length === 0 ? '' : table}
  ${rows.length < listed ? html`<p class="more">… and ${(listed - rows.length).toLocaleString('en')} more: <a href="${childrenListHref(workflowId)}">the list of its children</a></p>` : ''}
</section>`;
}

/**
 * The children region: empty when no step started children (it is always there, so a refresh
 * after a step starts its children fills it in).
 */
export function renderChildren(
  workflowId: string,
  counts: readonly ChildCountsData[],
  pages: ReadonlyMap<string, readonly ChildRow[]>,
  now: Date,
): SafeHtml {
  return html`<div data-region="children">${
    counts.length === 0
      ? ''
      : html`<section aria-labelledby="children-heading">
  <h2 id="children-heading">Child workflows</h2>
  ${counts.map((entry) => renderStep(workflowId, entry, pages.get(entry.step) ?? [], now))}
</section>`
  }</div>`;
}
