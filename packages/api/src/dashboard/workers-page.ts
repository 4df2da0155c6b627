/**
 * `/workers`: the worker registry, most recent heartbeat first (stale ones on request), and
 * the workflow versions they serve (R54).
 */
import { timeElement } from './format';
import type { ReadResult } from './graphql-reads';
import { html, type SafeHtml } from './html';
import { renderProblem } from './layout';
import { renderVersionsSection, type VersionData, versionsSelection } from './versions-section';

export const workersQuery = `query DashboardWorkers($includeStale: Boolean) {
  workers(includeStale: $includeStale) {
    holder host pid version sweeper startedAt heartbeatAt staleAt live
    queues { name slots }
    workflows { name version steps }
  }
  ${versionsSelection}
}`;

interface WorkerData {
  readonly holder: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly sweeper: boolean;
  readonly startedAt: string;
  readonly staleAt: string;
  readonly heartbeatAt: string;
  readonly live: boolean;
  readonly queues: readonly { readonly name: string; readonly slots: number }[];
  readonly workflows: readonly {
    readonly name: string;
    readonly version: string | null;
    readonly steps: readonly string[];
  }[];
}

export interface WorkersData {
  readonly workers: readonly WorkerData[];
  readonly definitions: readonly VersionData[];
}

function row(worker: WorkerData, now: Date): SafeHtml {
  return html`<tr data-holder="${worker.holder}" class="${worker.live ? 'live' : 'stale'}">
  <th scope="row"><code>${worker.holder}</code></th>
  <td>${worker.live ? html`<span class="state state-running">live</span>` : html`<span class="state state-dead">stale</span>`}</td>
  <td>${worker.host} <span class="id">pid ${worker.pid}</span></td>
  <td><ul class="plain">${worker.queues.map((queue) => html`<li>${queue.name}: ${queue.slots} slot${queue.slots === 1 ? '' : 's'}</li>`)}</ul></td>
  <td><ul class="plain">${worker.workflows.map((workflow) => html`<li>${workflow.name}${workflow.version === null ? '' : html` <code>${workflow.version}</code>`} <span class="steps">(${workflow.steps.join(', ')})</span></li>`)}</ul></td>
  <td>${worker.version}</td>
  <td>${worker.sweeper ? 'yes' : 'no'}</td>
  <td>${timeElement(worker.startedAt, now, 'relative')}</td>
  <td>${timeElement(worker.heartbeatAt, now, 'relative')}${worker.live ? '' : html` (stale since ${timeElement(worker.staleAt, now, 'relative')})`}</td>
</tr>`;
}

export function renderWorkersPage(
  includeStale: boolean,
  result: ReadResult<WorkersData>,
  now: Date,
): SafeHtml {
  let content: SafeHtml;
  if (!result.ok) content = renderProblem(result.error.code, result.error.message);
  else if (result.data.workers.length === 0) {
    content = html`<p>No ${includeStale ? '' : 'live '}worker is registered: nothing claims tasks.</p>`;
  } else {
    content = html`<div class="scroll" tabindex="0" role="region" aria-label="Workers table"><table class="workers">
<caption>${includeStale ? 'Every registered worker' : 'Live workers'}, most recent heartbeat first</caption>
<thead><tr><th scope="col">Holder</th><th scope="col">Status</th><th scope="col">Host</th><th scope="col">Queues</th><th scope="col">Workflows (steps)</th><th scope="col">Version</th><th scope="col">Sweeps</th><th scope="col">Started</th><th scope="col">Heartbeat</th></tr></thead>
<tbody>${result.data.workers.map((worker) => row(worker, now))}</tbody>
</table></div>`;
  }
  return html`<h1>Workers</h1>
<p class="toolbar">${
    includeStale
      ? html`<a href="/workers">Live workers only</a>`
      : html`<a href="/workers?stale=1">Include stale workers</a>`
  } · <a href="${includeStale ? '/workers?stale=1' : '/workers'}">Reload</a></p>
<section data-region="workers" aria-label="Workers">${content}</section>
${result.ok ? renderVersionsSection(result.data.definitions) : ''}`;
}
