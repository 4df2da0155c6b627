/**
 * `/workflows/<id>`: the step graph, the blockers, the explanation, the transition log and
 * every task in full. Each part is a region the script swaps for a fresh copy when the
 * workflow's transitions stream in; the dialogs stay outside them, so an operator typing a
 * reason is never interrupted.
 */
import { attributeAsText, type WorkflowAttributes } from '@causeway/workflow/internal';
import { actionButton, actionDialogs } from './action-dialogs';
import { code, shortId, stateBadge, timeElement, workflowHref } from './format';
import { type ReadResult, statusOfError } from './graphql-reads';
import { html, jsonText, type SafeHtml } from './html';
import { renderProblem } from './layout';
import { type GraphStep, renderStepGraph } from './step-graph';
import { renderTaskDetails } from './task-details';
import { type ChildRow, parentFacts, renderChildren } from './workflow-children';
import {
  type BlockerData,
  type DefinitionData,
  finishedWorkflowStates,
  type WorkflowData,
  type WorkflowPageData,
} from './workflow-query';
import { renderTimeline } from './workflow-timeline';

/** Its attributes (R55), each a link to the workflows that share it. */
function attributeFacts(attributes: WorkflowAttributes): SafeHtml | '' {
  const texts = Object.entries(attributes).map(([key, value]) => attributeAsText(key, value));
  if (texts.length === 0) return '';
  return html`<dt>Attributes</dt><dd>${texts.map(
    (text) =>
      html`<a class="attribute" href="/?${new URLSearchParams({ attr: text }).toString()}"><code>${text}</code></a> `,
  )}</dd>`;
}

/** The graph's steps: the definition's when this process knows it, else the tasks' (no edges). */
function graphSteps(workflow: WorkflowData, definition: DefinitionData | undefined): GraphStep[] {
  if (definition === undefined) {
    return workflow.tasks.map((task) => ({
      name: task.step,
      after: [],
      event: null,
      delayMs: null,
    }));
  }
  return definition.steps.map((step) => ({
    name: step.name,
    after: step.after,
    event: step.event?.name ?? null,
    delayMs: step.delayMs,
  }));
}

function renderBlockers(blockers: readonly BlockerData[], workflow: WorkflowData, now: Date) {
  if (blockers.length === 0) {
    return html`<p>${finishedWorkflowStates.includes(workflow.state) ? 'Finished: nothing blocks it.' : 'No blockers.'}</p>`;
  }
  return html`<ul class="blockers">${blockers.map(
    (blocker) => html`<li data-task-id="${blocker.taskId}" data-code="${code(blocker.code)}">
  <code class="blocker-code">${code(blocker.code)}</code> ${blocker.message}${
    blocker.until === null
      ? ''
      : html` <span class="until">(ends by itself ${timeElement(blocker.until, now, 'relative')})</span>`
  } <a href="#task-${blocker.taskId}">details of ${blocker.step}</a>
</li>`,
  )}</ul>`;
}

function renderSummary(workflow: WorkflowData, now: Date): SafeHtml {
  const cancellable = !finishedWorkflowStates.includes(workflow.state);
  return html`<h1><span class="workflow-name">${workflow.name}</span> ${stateBadge(workflow.state)}</h1>
<dl class="facts">
  <dt>Workflow</dt><dd><code>${workflow.id}</code></dd>
  <dt>Submitted</dt><dd>${timeElement(workflow.createdAt, now)} (${timeElement(workflow.createdAt, now, 'relative')})</dd>
  <dt>Last change</dt><dd>${timeElement(workflow.updatedAt, now)}</dd>
  ${workflow.idempotencyKey === null ? '' : html`<dt>Idempotency key</dt><dd><code>${workflow.idempotencyKey}</code></dd>`}
  ${attributeFacts(workflow.attributes)}
  ${parentFacts(workflow.parent)}
</dl>
${cancellable ? html`<p class="actions">${actionButton('cancel-workflow', 'Cancel workflow', `${workflow.name} ${workflow.id}`, { id: workflow.id })}</p>` : ''}`;
}

export function renderWorkflowPage(
  id: string,
  result: ReadResult<WorkflowPageData>,
  children: ReadonlyMap<string, readonly ChildRow[]>,
  now: Date,
): { readonly title: string; readonly status: number; readonly body: SafeHtml } {
  if (!result.ok) {
    return {
      title: 'Workflow',
      status: statusOfError(result.error),
      body: html`<h1>Workflow <code>${id}</code></h1>${renderProblem(result.error.code, result.error.message)}`,
    };
  }
  const { workflow, definitions } = result.data;
  if (workflow === null) {
    return {
      title: 'Workflow not found',
      status: 404,
      body: html`<h1>Workflow not found</h1>${renderProblem('NOT_FOUND', `no workflow has the id ${JSON.stringify(id)}`)}<p><a href="/">All workflows</a></p>`,
    };
  }
  // The version it was accepted under (R54); one stored before versions reads the first listed.
  const definition = definitions.find(
    (candidate) =>
      candidate.name === workflow.name &&
      (workflow.version === null || candidate.version === workflow.version),
  );
  const up =
    workflow.parent === null
      ? ''
      : html`<a href="${workflowHref(workflow.parent.workflow.id)}">${workflow.parent.workflow.name} ${shortId(workflow.parent.workflow.id)}</a> › `;
  const body = html`<p class="crumbs"><a href="/">Workflows</a> › ${up}${workflow.name} ${shortId(workflow.id)}</p>
<section data-region="summary" aria-label="Summary">${renderSummary(workflow, now)}</section>
<section aria-labelledby="graph-heading">
  <h2 id="graph-heading">Steps</h2>
  ${definition === undefined ? html`<p class="note">This API process does not define ${workflow.name}${workflow.version === null ? '' : html` version <code>${workflow.version}</code>`}: steps shown without their edges.</p>` : ''}
  <div class="scroll graph-box" tabindex="0" role="region" aria-label="Step graph" data-region="graph">${renderStepGraph(graphSteps(workflow, definition), workflow.tasks, now)}</div>
</section>
${renderChildren(workflow.id, workflow.childCounts, children, now)}
<section aria-labelledby="blockers-heading">
  <h2 id="blockers-heading">What blocks it</h2>
  <div data-region="blockers">${renderBlockers(workflow.blockers, workflow, now)}</div>
</section>
<section aria-labelledby="explanation-heading">
  <h2 id="explanation-heading">Explanation</h2>
  <pre class="explanation" data-region="explanation">${workflow.explanation}</pre>
</section>
<section aria-labelledby="timeline-heading">
  <h2 id="timeline-heading">Timeline</h2>
  <div data-region="timeline">${renderTimeline(workflow.transitions, now, { caption: 'Transitions, in log order', withStep: true })}</div>
</section>
<section aria-labelledby="tasks-heading">
  <h2 id="tasks-heading">Tasks</h2>
  <div data-region="tasks">${workflow.tasks.map((task) =>
    renderTaskDetails(
      task,
      workflow.transitions,
      workflow.blockers.find((blocker) => blocker.taskId === task.id),
      now,
    ),
  )}</div>
</section>
<section aria-labelledby="input-heading">
  <h2 id="input-heading">Input</h2>
  <pre class="json">${jsonText(workflow.input)}</pre>
</section>
${actionDialogs(['cancel-workflow', 'cancel-task', 'replay-task', 'send-event'])}`;
  return { title: `${workflow.name} ${shortId(workflow.id)}`, status: 200, body };
}
