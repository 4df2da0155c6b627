/**
 * `/queues`: every queue with its pause (who, why, since when), and pause or resume (R53);
 * below them, the concurrency groups and their busiest keys (R50), and the rate limits (R51).
 */
import { actionButton, actionDialogs } from './action-dialogs';
import {
  type ConcurrencyGroupData,
  concurrencyGroupsFields,
  renderConcurrencySection,
} from './concurrency-section';
import { code, timeElement } from './format';
import type { ReadResult } from './graphql-reads';
import { html, type SafeHtml } from './html';
import { renderProblem } from './layout';
import { type RateLimitData, rateLimitsFields, renderRateLimitSection } from './rate-limit-section';

export const queuesQuery = `query DashboardQueues {
  queues {
    name
    paused { operator reason pausedAt }
    history { kind operator reason at }
  }
  ${concurrencyGroupsFields}
  ${rateLimitsFields}
}`;

interface QueueData {
  readonly name: string;
  readonly paused: {
    readonly operator: string;
    readonly reason: string;
    readonly pausedAt: string;
  } | null;
  readonly history: readonly {
    readonly kind: string;
    readonly operator: string;
    readonly reason: string | null;
    readonly at: string;
  }[];
}

export interface QueuesData {
  readonly queues: readonly QueueData[];
  readonly concurrencyGroups: readonly ConcurrencyGroupData[];
  readonly rateLimits: readonly RateLimitData[];
}

function historyOf(queue: QueueData, now: Date): SafeHtml {
  if (queue.history.length === 0) return html``;
  return html`<details><summary>History (${queue.history.length})</summary><ol class="history">${queue.history.map(
    (entry) =>
      html`<li>${timeElement(entry.at, now)}: <code>${code(entry.kind)}</code> by <span class="actor">operator:${entry.operator}</span>${entry.reason === null ? '' : html` — ${entry.reason}`}</li>`,
  )}</ol></details>`;
}

function row(queue: QueueData, now: Date): SafeHtml {
  const subject = `queue ${queue.name}`;
  const action =
    queue.paused === null
      ? actionButton('pause-queue', 'Pause', subject, { name: queue.name })
      : actionButton('resume-queue', 'Resume', subject, { name: queue.name });
  return html`<tr data-queue="${queue.name}">
  <th scope="row">${queue.name}${historyOf(queue, now)}</th>
  <td>${queue.paused === null ? 'running' : html`<strong>paused</strong> by ${queue.paused.operator} ${timeElement(queue.paused.pausedAt, now, 'relative')}: ${queue.paused.reason}`}</td>
  <td class="actions">${action}</td>
</tr>`;
}

export function renderQueuesPage(result: ReadResult<QueuesData>, now: Date): SafeHtml {
  let content: SafeHtml;
  if (!result.ok) content = renderProblem(result.error.code, result.error.message);
  else if (result.data.queues.length === 0) content = html`<p>No queues are known.</p>`;
  else {
    const paused = result.data.queues.filter((queue) => queue.paused !== null).length;
    content = html`<p>${paused === 0 ? 'No queue is paused.' : `${paused} paused: claims take nothing from ${paused === 1 ? 'it' : 'them'} until resumed.`}</p>
<div class="scroll" tabindex="0" role="region" aria-label="Queues table"><table class="queues">
<caption>Queues by name</caption>
<thead><tr><th scope="col">Queue</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
<tbody>${result.data.queues.map((queue) => row(queue, now))}</tbody>
</table></div>`;
  }
  return html`<h1>Queues</h1>
<section data-region="queues" aria-label="Queues">${content}</section>
${result.ok ? renderConcurrencySection(result.data.concurrencyGroups, now) : ''}
${result.ok ? renderRateLimitSection(result.data.rateLimits, now) : ''}
${actionDialogs(['pause-queue', 'resume-queue'])}`;
}
