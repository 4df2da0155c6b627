/** The transition log of a workflow (or one task) as a table: every edge, its reason and actor. */
import { code, timeElement } from './format';
import { html, type SafeHtml } from './html';
import type { TransitionData } from './workflow-query';

function errorCell(row: TransitionData): SafeHtml {
  if (row.errorCategory === null && row.errorSummary === null) return html``;
  return html`<span class="error-category">${code(row.errorCategory)}</span> ${row.errorSummary ?? ''}`;
}

function detailCell(detail: unknown): SafeHtml {
  if (detail === null || detail === undefined) return html``;
  return html`<code class="detail">${JSON.stringify(detail)}</code>`;
}

export function renderTimeline(
  rows: readonly TransitionData[],
  now: Date,
  options: { readonly caption: string; readonly withStep: boolean },
): SafeHtml {
  if (rows.length === 0) return html`<p>No transitions yet.</p>`;
  return html`<div class="scroll" tabindex="0" role="region" aria-label="${options.caption}">
<table class="timeline">
<caption>${options.caption}</caption>
<thead><tr><th scope="col">At (UTC)</th>${options.withStep ? html`<th scope="col">Step</th>` : ''}<th scope="col">Edge</th><th scope="col">Reason</th><th scope="col">Actor</th><th scope="col">Attempt</th><th scope="col">Error</th><th scope="col">Detail</th></tr></thead>
<tbody>${rows.map(
    (row) => html`<tr data-transition-id="${row.id}" data-reason="${code(row.reason)}">
  <td>${timeElement(row.at, now, 'clock')}</td>
  ${options.withStep ? html`<td>${row.step ?? html`<span class="none">workflow</span>`}</td>` : ''}
  <td><span class="edge-from">${row.from === null ? '∅' : code(row.from)}</span> → <span class="edge-to">${code(row.to)}</span></td>
  <td><code class="reason">${code(row.reason)}</code></td>
  <td class="actor">${row.actor}</td>
  <td>${row.attempt}</td>
  <td>${errorCell(row)}</td>
  <td>${detailCell(row.detail)}</td>
</tr>`,
  )}</tbody>
</table>
</div>`;
}
