/**
 * `/`: the workflows, filtered by state, name and attributes (R55, `attr=key=value`, all must
 * match), and to the children of a workflow or the workflows below a root (R48), newest first
 * (the API's default order), live. It opens on every state: an operator's first question is
 * what ran lately.
 */
import {
  attributeAsText,
  attributeFromText,
  isTerminalWorkflowState,
  type WorkflowAttributes,
  workflowStates,
} from '@causeway/workflow/internal';
import { shortId, stateBadge, timeElement, workflowHref } from './format';
import type { ReadResult } from './graphql-reads';
import { html, type SafeHtml } from './html';
import { renderProblem } from './layout';

/** The states an on-call engineer asks about: not finished (the `active` filter). */
const activeStates = workflowStates.filter((state) => !isTerminalWorkflowState(state));

export const pageSize = 50;

export interface WorkflowFilterParams {
  /** `all` (the default), `active` or one state. */
  readonly state: string;
  readonly name: string;
  /** Only the children of this workflow, or only the workflows below this root; '' for any. */
  readonly parent: string;
  readonly root: string;
  /** Attributes every workflow listed has, each `key=value` (`attributeFromText`). */
  readonly attributes: readonly string[];
  readonly after: string | null;
}

export function filterParams(search: URLSearchParams): WorkflowFilterParams {
  return {
    state: search.get('state') ?? 'all',
    name: (search.get('name') ?? '').trim(),
    parent: (search.get('parent') ?? '').trim(),
    root: (search.get('root') ?? '').trim(),
    attributes: search
      .getAll('attr')
      .map((text) => text.trim())
      .filter((text) => text !== ''),
    after: search.get('after') || null,
  };
}

/** The `state` argument for the filter, or null when the filter names no state. */
function statesOf(state: string): readonly string[] | null | 'invalid' {
  if (state === 'all') return null;
  if (state === 'active') return activeStates.map((value) => value.toUpperCase());
  return (workflowStates as readonly string[]).includes(state) ? [state.toUpperCase()] : 'invalid';
}

/** Why the filter is not one this page can ask for, or null. */
function filterProblem(params: WorkflowFilterParams): string | null {
  if (statesOf(params.state) === 'invalid') {
    return `the state filter ${JSON.stringify(params.state)} is not one of this page's`;
  }
  const keys = new Set<string>();
  for (const text of params.attributes) {
    const read = attributeFromText(text);
    if (!read.ok) return `the attribute filter ${read.problem}`;
    // All must match, and a workflow has one value per key: refused, as the CLI refuses it,
    // rather than one of the two values dropped.
    if (keys.has(read.key)) return `the attribute filter gives ${read.key} twice`;
    keys.add(read.key);
  }
  return null;
}

/** The `attributes` argument: every `key=value` of the filter, typed; null for none. */
function attributesOf(params: WorkflowFilterParams): Record<string, unknown> | null {
  if (params.attributes.length === 0) return null;
  const attributes: Record<string, unknown> = {};
  for (const text of params.attributes) {
    const read = attributeFromText(text);
    if (read.ok) attributes[read.key] = read.value;
  }
  return attributes;
}

export const workflowsQuery = `query DashboardWorkflows($state: [WorkflowState!], $name: String, $parentId: ID, $rootId: ID, $attributes: JSON, $first: Int, $after: String) {
  workflows(state: $state, name: $name, parentId: $parentId, rootId: $rootId, attributes: $attributes, first: $first, after: $after) {
    edges { node { id name state attributes createdAt updatedAt tasks { step state } blockers { step code } } }
    pageInfo { hasNextPage endCursor }
  }
  definitions { name }
}`;

export interface WorkflowsData {
  readonly workflows: {
    readonly edges: readonly {
      readonly node: {
        readonly id: string;
        readonly name: string;
        readonly state: string;
        readonly attributes: WorkflowAttributes;
        readonly createdAt: string;
        readonly updatedAt: string;
        readonly tasks: readonly { readonly step: string; readonly state: string }[];
        readonly blockers: readonly { readonly step: string; readonly code: string }[];
      };
    }[];
    readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
  };
  readonly definitions: readonly { readonly name: string }[];
}

/** The GraphQL variables for a filter, or null when the filter is not one the page offers. */
export function workflowsVariables(params: WorkflowFilterParams): Record<string, unknown> | null {
  const states = statesOf(params.state);
  if (states === 'invalid' || filterProblem(params) !== null) return null;
  return {
    state: states,
    name: params.name === '' ? null : params.name,
    parentId: params.parent === '' ? null : params.parent,
    rootId: params.root === '' ? null : params.root,
    attributes: attributesOf(params),
    first: pageSize,
    after: params.after,
  };
}

function filterForm(params: WorkflowFilterParams, names: readonly string[]): SafeHtml {
  const option = (value: string, label: string) =>
    html`<option value="${value}"${value === params.state ? html` selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="/" role="search" aria-label="Filter workflows">
  <p class="field"><label for="filter-state">State</label>
  <select id="filter-state" name="state">
    ${option('all', 'all states')}
    ${option('active', 'active (not finished)')}
    ${workflowStates.map((state) => option(state, state.replaceAll('_', ' ')))}
  </select></p>
  <p class="field"><label for="filter-name">Workflow name</label>
  <input id="filter-name" name="name" type="text" list="workflow-names" value="${params.name}" spellcheck="false" placeholder="any"></p>
  <datalist id="workflow-names">${names.map((name) => html`<option value="${name}"></option>`)}</datalist>
  ${[...params.attributes, ''].map(
    (text, index) => html`<p class="field"><label for="filter-attr-${index}">Attribute</label>
  <input id="filter-attr-${index}" name="attr" type="text" value="${text}" spellcheck="false" placeholder="key=value (tier=5, tier=&quot;5&quot;)"></p>`,
  )}
  ${params.parent === '' ? '' : html`<input type="hidden" name="parent" value="${params.parent}">`}
  ${params.root === '' ? '' : html`<input type="hidden" name="root" value="${params.root}">`}
  <p class="buttons"><button type="submit">Filter</button> <a href="/">Reset</a></p>
</form>`;
}

function pageLink(params: WorkflowFilterParams, after: string | null): string {
  const search = new URLSearchParams();
  search.set('state', params.state);
  if (params.name !== '') search.set('name', params.name);
  if (params.parent !== '') search.set('parent', params.parent);
  if (params.root !== '') search.set('root', params.root);
  for (const text of params.attributes) search.append('attr', text);
  if (after !== null) search.set('after', after);
  return `/?${search.toString()}`;
}

function describeFilter(params: WorkflowFilterParams): string {
  const state =
    params.state === 'active'
      ? 'not finished'
      : params.state === 'all'
        ? 'in any state'
        : params.state.replaceAll('_', ' ');
  const tree =
    params.parent !== ''
      ? ` that are children of ${shortId(params.parent)}`
      : params.root !== ''
        ? ` below ${shortId(params.root)}`
        : '';
  const attributes =
    params.attributes.length === 0 ? '' : ` with ${params.attributes.join(' and ')}`;
  return `${params.name === '' ? 'Workflows' : `${params.name} workflows`}${tree}${attributes} ${state}, newest first`;
}

/**
 * `2 of 4 done; approval: waiting for event`: how far it got, and what holds each step that
 * is not just waiting for the steps before it (the blockers, docs/blockers.md).
 */
function stepsText(node: WorkflowsData['workflows']['edges'][number]['node']): string {
  const done = node.tasks.filter((task) => task.state === 'SUCCEEDED').length;
  const holding = node.blockers
    .filter((blocker) => blocker.code !== 'UPSTREAM_PENDING')
    .map((blocker) => `${blocker.step}: ${blocker.code.toLowerCase().replaceAll('_', ' ')}`);
  return `${done} of ${node.tasks.length} done${holding.length === 0 ? '' : `; ${holding.join(', ')}`}`;
}

/** A workflow's attributes under its name, `key=value` each (R55); nothing when it has none. */
export function attributeText(attributes: WorkflowAttributes): SafeHtml | '' {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return '';
  return html` <span class="attributes">${entries
    .map(([key, value]) => attributeAsText(key, value))
    .join(' ')}</span>`;
}

/** Which tree the list is limited to, with a way back up and a way out of the filter. */
function treeNote(params: WorkflowFilterParams): SafeHtml | '' {
  const id = params.parent !== '' ? params.parent : params.root;
  if (id === '') return '';
  const what = params.parent !== '' ? 'Children of' : 'Every workflow below';
  return html`<p class="tree-filter">${what} <a href="${workflowHref(id)}" data-link="tree-filter">workflow ${shortId(id)}</a> · <a href="/">all workflows</a></p>`;
}

export function renderWorkflowsPage(
  params: WorkflowFilterParams,
  result: ReadResult<WorkflowsData> | null,
  now: Date,
): SafeHtml {
  // One name per workflow, however many versions of it are defined (R54).
  const names = result?.ok
    ? [...new Set(result.data.definitions.map((definition) => definition.name))]
    : [];
  let content: SafeHtml;
  if (result === null) {
    content = renderProblem('BAD_USER_INPUT', filterProblem(params) ?? 'bad filter');
  } else if (!result.ok) {
    content = renderProblem(result.error.code, result.error.message);
  } else {
    const { edges, pageInfo } = result.data.workflows;
    const rows = edges.map(
      ({ node }) => html`<tr data-workflow-id="${node.id}">
  <th scope="row"><a href="${workflowHref(node.id)}">${node.name}</a> <span class="id">${shortId(node.id)}</span>${attributeText(node.attributes)}</th>
  <td>${stateBadge(node.state)}</td>
  <td>${stepsText(node)}</td>
  <td>${timeElement(node.createdAt, now, 'relative')}</td>
  <td>${timeElement(node.updatedAt, now, 'relative')}</td>
</tr>`,
    );
    content =
      edges.length === 0 && params.after === null
        ? html`<p class="empty">No workflow is ${params.state === 'all' ? 'stored' : 'in this state'}${params.name === '' ? '' : ` with the name ${params.name}`}${params.attributes.length === 0 ? '' : ` with ${params.attributes.join(' and ')}`}. New ones appear here as they are submitted.</p>`
        : html`<table class="workflows">
  <caption>${describeFilter(params)}: ${edges.length === 0 ? 'none' : `${edges.length}${pageInfo.hasNextPage ? ' on this page' : ''}`}</caption>
  <thead><tr><th scope="col">Workflow</th><th scope="col">State</th><th scope="col">Steps, and what holds them</th><th scope="col">Age</th><th scope="col">Last change</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
<nav class="pages" aria-label="Pages">
  ${params.after === null ? '' : html`<a href="${pageLink(params, null)}">First page</a>`}
  ${pageInfo.hasNextPage && pageInfo.endCursor !== null ? html`<a href="${pageLink(params, pageInfo.endCursor)}">Next page</a>` : ''}
</nav>`;
  }
  return html`<h1>Workflows</h1>
${treeNote(params)}
${filterForm(params, names)}
<section data-region="workflows" aria-label="Workflow list">${content}</section>`;
}
